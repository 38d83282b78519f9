# job_helpers.sh - sourced by the local-path signal tests: start a bsprun job that sleeps, wait
# until its ranks run, wait for bsprun to end. Everything started is killed by pid on exit.
# A test that starts its job itself sets pid, marker and out, and uses the rest.
#   start_sleeping_job BSPRUN PROG   sets pid (bsprun), marker (on every rank's command line), out
#   wait_for_ranks N                 fails unless N ranks printed their line within 20 s
#   wait_for_exit WHAT [SECONDS]     sets status; fails unless bsprun ended within SECONDS (20)
#   expect_no_ranks_left [SECONDS]   fails if a process with the marker still runs (after SECONDS)

# A BSPG_HOSTFILE in the caller's environment would send these jobs to that file's hosts.
unset BSPG_HOSTFILE

start_sleeping_job() {
  marker=marker-$((RANDOM * 32768 + RANDOM))
  out=$(mktemp)
  "$1" -p 2 "$2" --sleep 60 "$marker" >"$out" 2>&1 &
  pid=$!
  trap cleanup_job EXIT
}

cleanup_job() {
  # Only what this test started: bsprun's pid and the ranks carrying this run's marker.
  [ -z "${pid:-}" ] || kill -KILL "$pid" 2>/dev/null
  for p in $(pgrep -f "$marker"); do kill -KILL "$p" 2>/dev/null; done
  rm -f "$out"
}

fail() { echo "FAIL: $*"; echo "---- output:"; cat "$out"; exit 1; }

wait_for_ranks() {
  for _ in $(seq 1 200); do
    [ "$(grep -c '^rank ' "$out")" -ge "$1" ] && break
    sleep 0.1
  done
  [ "$(grep -c '^rank ' "$out")" -ge "$1" ] || fail "the job did not start within 20 s"
  local ranks
  ranks=$(pgrep -f "mpi_where --sleep 60 $marker" | wc -l)
  [ "$ranks" -ge "$1" ] || fail "expected $1 running ranks, found $ranks"
}

wait_for_exit() {
  local seconds=${2:-20}
  status=
  for _ in $(seq 1 $((seconds * 10))); do
    if ! kill -0 "$pid" 2>/dev/null; then wait "$pid"; status=$?; break; fi
    sleep 0.1
  done
  [ -n "$status" ] || fail "bsprun still running $seconds s after $1"
  pid=  # reaped: the number may be another process's from now on
}

# Fails if any process of the job is still running (SECONDS later at most; 0: now).
expect_no_ranks_left() {
  local left
  for _ in $(seq 1 $((${1:-0} * 10))); do
    [ "$(pgrep -f "$marker" | wc -l)" -eq 0 ] && return
    sleep 0.1
  done
  left=$(pgrep -f "$marker" | wc -l)
  [ "$left" -eq 0 ] || fail "$left process(es) of the job still running after bsprun exited"
}
