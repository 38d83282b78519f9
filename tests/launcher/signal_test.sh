#!/usr/bin/env bash
# signal_test.sh BSPRUN PROG - SIGTERM to bsprun stops mpirun and every process of the job,
# and bsprun exits 128+15.
set -u
bsprun=$1 prog=$2
marker=$((RANDOM * 32768 + RANDOM))
out=$(mktemp)
"$bsprun" -p 2 "$prog" --sleep 60 "marker-$marker" >"$out" 2>&1 &
pid=$!
cleanup() {
  # Only what this test started: bsprun's pid and the ranks carrying this run's marker.
  kill -KILL "$pid" 2>/dev/null
  for p in $(pgrep -f "marker-$marker"); do kill -KILL "$p" 2>/dev/null; done
  rm -f "$out"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; echo "---- output:"; cat "$out"; exit 1; }

# Wait until both ranks run (they print before sleeping).
for _ in $(seq 1 200); do
  [ "$(grep -c '^rank ' "$out")" -ge 2 ] && break
  sleep 0.1
done
[ "$(grep -c '^rank ' "$out")" -ge 2 ] || fail "the job did not start within 20 s"
ranks=$(pgrep -f "mpi_where --sleep 60 marker-$marker" | wc -l)
[ "$ranks" -ge 2 ] || fail "expected 2 running ranks, found $ranks"

kill -TERM "$pid"
status=
for _ in $(seq 1 200); do
  if ! kill -0 "$pid" 2>/dev/null; then wait "$pid"; status=$?; break; fi
  sleep 0.1
done
[ -n "$status" ] || fail "bsprun still running 20 s after SIGTERM"
[ "$status" -eq 143 ] || fail "expected exit 143 (128+SIGTERM), got $status"
sleep 0.5
left=$(pgrep -f "marker-$marker" | wc -l)
[ "$left" -eq 0 ] || fail "$left process(es) of the job still running after bsprun exited"
echo "ok: SIGTERM stopped the job, bsprun exited $status"
