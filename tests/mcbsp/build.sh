#!/usr/bin/env bash
# build.sh BINDIR SOURCE OUTPUT - builds a MulticoreBSP program unchanged, with BINDIR/bspcc (C) or
# BINDIR/bspcxx (C++) and nothing but warnings as errors: its headers must compile cleanly.
set -eu
bindir=$1 source=$2 output=$3
mkdir -p "$(dirname "$output")"
case "$source" in
  *.c) wrapper=bspcc ;;
  *) wrapper=bspcxx ;;
esac
exec "$bindir/$wrapper" -O2 -Wall -Wextra -Werror -o "$output" "$source"
