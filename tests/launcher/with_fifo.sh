#!/usr/bin/env bash
# with_fifo.sh COMMAND [ARGS...] - runs COMMAND with every argument @FIFO@ replaced by the path of
# a new named pipe (nobody writes to it), and removes the pipe afterwards. Reading it would wait
# forever: a test that a program refuses it at once.
set -u
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
mkfifo "$dir/fifo" || exit 1
args=()
for a in "$@"; do
  if [ "$a" = @FIFO@ ]; then args+=("$dir/fifo"); else args+=("$a"); fi
done
"${args[@]}"
