#!/usr/bin/env bash
# ctrl_c_test.sh BSPRUN PROG - Ctrl-C typed on a terminal stops the whole job and bsprun exits
# 130; typed input reaches rank 0. The terminal is a pseudo-terminal made by script(1).
set -u
bsprun=$1 prog=$2
command -v script >/dev/null || { echo "SKIP: script(1) not installed"; exit 77; }
marker=ctrlc-$$-$RANDOM
out=$(mktemp)
cleanup() {
  for p in $(pgrep -f "$marker"); do kill -KILL "$p" 2>/dev/null; done
  rm -f "$out"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; echo "---- output:"; cat "$out"; exit 1; }

# Input: one line for rank 0, then (once the job sleeps) Ctrl-C; the terminal stays open until
# bsprun has exited (at most 40 s), so a slow shutdown under load is not mistaken for a hang.
{
  sleep 2; printf 'typed line\n'; sleep 2; printf '\003'
  for _ in $(seq 1 400); do grep -q 'bsprun-exit=' "$out" && break; sleep 0.1; done
} | timeout 60 script -qfec "$bsprun -p 2 $prog --stdin-line --sleep 40 $marker; echo bsprun-exit=\$?" /dev/null >"$out" 2>&1
grep -q '^stdin: typed line' "$out" || fail "rank 0 did not receive the typed line"
grep -q 'bsprun-exit=' "$out" || fail "bsprun still running 40 s after Ctrl-C"
grep -q 'bsprun-exit=130' "$out" || fail "bsprun did not exit 130 after Ctrl-C"
sleep 0.5
left=$(pgrep -f "$marker" | wc -l)
[ "$left" -eq 0 ] || fail "$left process(es) of the job still running after Ctrl-C"
echo "ok: Ctrl-C stopped the job (exit 130), typed input reached rank 0"
