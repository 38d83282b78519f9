#!/usr/bin/env bash
# call_site_test.sh MPIRUN NPROCS PROGRAM MODE KIND - runs PROGRAM MODE (call_site.c) on NPROCS
# processes; it makes one misuse at the line it names first ("misuse at line N"). bspg's one line
# for it must end with where the call was made: KIND "line" (built with -g): "[at ...call_site.c:N
# in main]"; KIND "function" (no debug information): "[in main]". MODE "order" must also name the
# registration slot, its sizes on both processes and the hint on the order of registrations;
# "disagree" both processes' sync lines, "group" the line of the bsp_push_reg a group sync refuses.
set -uo pipefail
read -ra mpirun <<<"$1"
nprocs=$2 program=$3 mode=$4 kind=$5
# stdout and stderr apart: the MPI's starter forwards each in pieces of its own, so one merged
# stream can have the program's line in the middle of bspg's.
errfile=$(mktemp)
trap 'rm -f "$errfile"' EXIT
out=$(timeout 60 "${mpirun[@]}" -np "$nprocs" "$program" "$mode" 2>"$errfile")
status=$?
err=$(cat "$errfile")
fail() {
  echo "FAIL: $*"
  printf '%s\n' "$out" | sed 's/^/  | /'
  printf '%s\n' "$err" | sed 's/^/  ! /'
  exit 1
}
[ "$status" -ne 0 ] && [ "$status" -ne 124 ] || fail "exit status $status (expected a misuse's)"
# misuse_line [PID]: the line the program named (that process's, or the first named).
misuse_line() {
  printf '%s\n' "$out" | sed -n "s/^misuse at line \([0-9]*\) by process ${1:-[0-9]*}\$/\1/p" | head -n 1
}
line=$(misuse_line)
[ -n "$line" ] || fail "the program never reached its misuse"
messages=$(printf '%s\n' "$err" | grep -c '^bspg: process ')
[ "$messages" -eq 1 ] || fail "$messages lines from bspg, expected 1"
message=$(printf '%s\n' "$err" | grep '^bspg: process ')
# The message ends with the line of the call that failed (disagree, group: below).
[ "$mode" = disagree ] || [ "$mode" = group ] || case "$kind" in
  line) [[ "$message" == *" [at "*"call_site.c:$line in main]" ]] ||
          fail "the message does not end with ' [at ...call_site.c:$line in main]'" ;;
  function) [[ "$message" == *" [in main]" ]] || fail "the message does not end with ' [in main]'" ;;
  *) echo "call_site_test.sh: KIND is line or function" >&2; exit 2 ;;
esac
if [ "$mode" = disagree ]; then
  # The reporter (process 1, the first that differs from process 0) ends with its own line;
  # process 0's is named before.
  line=$(misuse_line 1)
  first="process 0 reached this sync at "
  [[ "$message" == *"$first"*"call_site.c:$(misuse_line 0) in main, this process [at "*"call_site.c:$line in main]" ]] ||
    fail "the message does not name process 0's sync line ($(misuse_line 0)) and its own ($line)"
  registered=$(printf '%s\n' "$out" | sed -n 's/^register at line \([0-9]*\) by process 0$/\1/p')
  [[ "$message" == *"; process 0's last call that takes effect at the sync: bsp_push_reg at "*"call_site.c:$registered in main;"* ]] ||
    fail "the message does not name process 0's bsp_push_reg line ($registered)"
fi
if [ "$mode" = group ]; then
  [[ "$message" == *"; the last such call: bsp_push_reg at "*"call_site.c:$line in main [at "* ]] ||
    fail "the message does not name the bsp_push_reg call's line ($line)"
fi
if [ "$mode" = order ]; then
  hint="its registration slot 0 holds 64 bytes on this process and 8 on process 1: if those are different variables, bsp_push_reg was called in a different order on the two (make the registrations in the same order on every process)"
  [[ "$message" == *"$hint"* ]] || fail "no slot, sizes and order hint in the message"
fi
echo "PASS call_site $mode $kind p=$nprocs"
