#!/usr/bin/env bash
# bspcc_test.sh BINDIR MPIRUN NPROCS - compile an unchanged C BSPlib program with BINDIR/bspcc and
# a C++ one with BINDIR/bspcxx, then run both on NPROCS processes. Prints PASS lines from the
# programs; exits non-zero on any failure.
set -eu
bindir=$1 nprocs=$3
read -ra mpirun <<<"$2"  # the starter and its options (root, beyond the cores)
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for tool in bspcc bspcxx; do
  [ -x "$bindir/$tool" ] || { echo "FAIL: $bindir/$tool does not exist"; exit 1; }
done
"$bindir/bspcc" -O2 -o "$work/inprod" "$here/bspcc/inprod.c"
"$bindir/bspcxx" -O2 -std=c++17 -o "$work/ring" "$here/bspcc/ring.cpp"
"${mpirun[@]}" -np "$nprocs" "$work/inprod" 1000
"${mpirun[@]}" -np "$nprocs" "$work/ring"
