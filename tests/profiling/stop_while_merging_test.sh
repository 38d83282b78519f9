#!/usr/bin/env bash
# stop_while_merging_test.sh BSPRUN KNOWN_SUPERSTEPS FAILS_AFTER - SIGTERM and SIGINT end bsprun
# within 5 s while it merges the profile, however long the merge would take (here a gnuplot that
# never finishes), with no process of the merge left behind; and a job stopped by a signal is
# merged for at most a few seconds before bsprun ends too.
set -u
bsprun=$1 known=$2 fails_after=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
mkdir "$work/bin"
cat >"$work/bin/gnuplot" <<'SCRIPT'
#!/bin/sh
echo $$ >"$GNUPLOT_PID_FILE"
exec sleep 600
SCRIPT
chmod +x "$work/bin/gnuplot"
export GNUPLOT_PID_FILE=$work/gnuplot.pid

now_ms() { date +%s%3N; }
# gone PID: the process has ended (within 2 s: an orphan is reaped by init, not at once).
gone() {
  for _ in $(seq 20); do
    [ "$(ps -o stat= -p "$1" 2>/dev/null | cut -c1)" = "" ] && return 0
    [ "$(ps -o stat= -p "$1" 2>/dev/null | cut -c1)" = Z ] && return 0
    sleep 0.1
  done
  return 1
}
# stop SIGNAL EXPECTED_STATUS: the job ends, the merge starts gnuplot, then SIGNAL.
stop() {
  local sig=$1 want=$2 dir=$work/prof-$1
  rm -f "$GNUPLOT_PID_FILE"
  PATH=$work/bin:$PATH "$bsprun" -p 2 --profile "$dir" "$known" >"$work/$sig.log" 2>&1 &
  local pid=$!
  for _ in $(seq 600); do [ -s "$GNUPLOT_PID_FILE" ] && break; sleep 0.1; done
  [ -s "$GNUPLOT_PID_FILE" ] || { fail "$sig: gnuplot never started"; kill -KILL $pid; return; }
  local start
  start=$(now_ms)
  kill -s "$sig" $pid
  wait $pid
  local status=$? took=$(($(now_ms) - start))
  [ "$status" = "$want" ] || fail "$sig while merging: exit $status, not $want"
  [ "$took" -lt 5000 ] || fail "$sig while merging: bsprun took $took ms to end"
  gone "$(cat "$GNUPLOT_PID_FILE")" || fail "$sig: gnuplot is still running"
  grep -q "^bsprun: profile: stopped by SIG$sig while merging; .*/raw keeps the records" "$work/$sig.log" ||
    fail "$sig: no line saying where the records are: $(tr '\n' '|' <"$work/$sig.log")"
  echo "$sig while merging: bsprun ended in $took ms"
}
stop TERM 143
stop INT 130

# A job stopped by SIGTERM while it computes: the merge gets a few seconds, not for ever.
rm -f "$GNUPLOT_PID_FILE"
PATH=$work/bin:$PATH "$bsprun" -p 2 --profile "$work/prof-job" "$fails_after" none 5 60 \
  >"$work/job.log" 2>&1 &
pid=$!
for _ in $(seq 600); do [ -e "$work/prof-job/raw/a0.s0.p1.bspprof" ] && break; sleep 0.1; done
sleep 1
start=$(now_ms)
kill -TERM $pid
wait $pid
status=$? took=$(($(now_ms) - start))
[ "$status" = 143 ] || fail "job stopped by TERM: exit $status, not 143"
[ "$took" -lt 5000 ] || fail "job stopped by TERM: bsprun took $took ms to end"
[ -s "$GNUPLOT_PID_FILE" ] && ! gone "$(cat "$GNUPLOT_PID_FILE")" &&
  fail "job stopped by TERM: gnuplot is still running"
echo "job stopped by TERM: bsprun ended in $took ms"
[ "$failures" -eq 0 ] && echo "PASS stop_while_merging"
