#!/usr/bin/env bash
# orphan_test.sh BSPRUN PROG - if mpirun itself dies (here: SIGKILL), the ranks it leaves behind
# are stopped by bsprun, which says so and exits 128+9.
set -u
bsprun=$1 prog=$2
marker=$((RANDOM * 32768 + RANDOM))
out=$(mktemp)
"$bsprun" -p 2 "$prog" --sleep 60 "marker-$marker" >"$out" 2>&1 &
pid=$!
cleanup() {
  kill -KILL "$pid" 2>/dev/null
  for p in $(pgrep -f "marker-$marker"); do kill -KILL "$p" 2>/dev/null; done
  rm -f "$out"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; echo "---- output:"; cat "$out"; exit 1; }

for _ in $(seq 1 200); do
  [ "$(grep -c '^rank ' "$out")" -ge 2 ] && break
  sleep 0.1
done
[ "$(grep -c '^rank ' "$out")" -ge 2 ] || fail "the job did not start within 20 s"
mpirun_pid=$(pgrep -P "$pid" -x mpirun)
[ -n "$mpirun_pid" ] || fail "no mpirun child of bsprun found"
ranks=$(pgrep -f "mpi_where --sleep 60 marker-$marker" | wc -l)
[ "$ranks" -ge 2 ] || fail "expected 2 running ranks, found $ranks"

kill -KILL "$mpirun_pid"
status=
for _ in $(seq 1 200); do
  if ! kill -0 "$pid" 2>/dev/null; then wait "$pid"; status=$?; break; fi
  sleep 0.1
done
[ -n "$status" ] || fail "bsprun still running 20 s after mpirun was killed"
[ "$status" -eq 137 ] || fail "expected exit 137 (128+SIGKILL), got $status"
grep -q "bsprun: mpirun exited with 2 process(es) of the job still running; bsprun stopped them" "$out" ||
  fail "bsprun did not report the ranks it stopped"
left=$(pgrep -f "marker-$marker" | wc -l)
[ "$left" -eq 0 ] || fail "$left rank(s) still running after bsprun exited"
echo "ok: ranks orphaned by mpirun were stopped, bsprun exited $status"
