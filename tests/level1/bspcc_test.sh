#!/usr/bin/env bash
# bspcc_test.sh BINDIR MPIRUN NPROCS - builds the Oxford-style oxford_sum.c with BINDIR/bspcc
# alone (no extra flags: bsp_level1.h and its calls come with bspg) and runs it on NPROCS
# processes. Prints the program's PASS line; exits non-zero on any failure.
set -eu
bindir=$1 nprocs=$3
read -ra mpirun <<<"$2"  # the starter and its options (root, beyond the cores)
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$bindir/bspcc" -O2 -Wall -Wextra -Werror -o "$work/oxford_sum" "$here/oxford_sum.c"
"${mpirun[@]}" -np "$nprocs" "$work/oxford_sum" 1000
