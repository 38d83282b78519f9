#!/usr/bin/env bash
# expect_run.sh - run a command with a timeout and check its exit status and output.
#
#   expect_run.sh [checks...] -- command [args...]
#
# Checks (any number, all must hold):
#   --exit N          exit status is N (default 0)
#   --exit nonzero    exit status is not 0 (a timeout counts as a failure, never as nonzero)
#   --exit any        any exit status (still not a timeout)
#   --out RE          combined stdout+stderr matches the extended regex RE
#   --not-out RE      combined output does not match RE
#   --count RE N      exactly N lines of combined output match RE
#   --timeout S       kill the command after S seconds (default 120) and fail
# On failure it prints what was expected, the exit status and the output, and exits 1.
set -u
# A BSPG_HOSTFILE in the caller's environment would send these jobs to that file's hosts.
unset BSPG_HOSTFILE
want_exit=0 timeout_s=120
declare -a must=() mustnot=() count_re=() count_n=()
while [ $# -gt 0 ]; do
  case "$1" in
    --exit) want_exit=$2; shift 2 ;;
    --out) must+=("$2"); shift 2 ;;
    --not-out) mustnot+=("$2"); shift 2 ;;
    --count) count_re+=("$2"); count_n+=("$3"); shift 3 ;;
    --timeout) timeout_s=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "expect_run.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
[ $# -gt 0 ] || { echo "expect_run.sh: no command given after --" >&2; exit 2; }

out=$(mktemp)
trap 'rm -f "$out"' EXIT
# setsid + kill of the whole group: nothing the command started survives a timeout.
timeout --kill-after=5 -s TERM "$timeout_s" "$@" >"$out" 2>&1 </dev/null
status=$?
fail=0
if [ $status -eq 124 ] || [ $status -eq 137 ]; then
  echo "FAIL: timed out after ${timeout_s}s"; fail=1
elif [ "$want_exit" = any ]; then
  :
elif [ "$want_exit" = nonzero ]; then
  [ $status -ne 0 ] || { echo "FAIL: expected a non-zero exit, got 0"; fail=1; }
elif [ $status -ne "$want_exit" ]; then
  echo "FAIL: expected exit $want_exit, got $status"; fail=1
fi
for re in "${must[@]+"${must[@]}"}"; do
  grep -Eq -- "$re" "$out" || { echo "FAIL: output does not match: $re"; fail=1; }
done
for re in "${mustnot[@]+"${mustnot[@]}"}"; do
  if grep -Eq -- "$re" "$out"; then echo "FAIL: output matches (must not): $re"; fail=1; fi
done
for i in "${!count_re[@]}"; do
  n=$(grep -Ec -- "${count_re[$i]}" "$out")
  [ "$n" -eq "${count_n[$i]}" ] || { echo "FAIL: ${count_n[$i]} lines should match '${count_re[$i]}', $n do"; fail=1; }
done
if [ $fail -ne 0 ]; then
  echo "---- command: $*"; echo "---- exit status: $status"; echo "---- output:"; cat "$out"
  exit 1
fi
echo "ok (exit $status): $*"
exit 0
