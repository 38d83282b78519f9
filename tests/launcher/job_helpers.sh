# job_helpers.sh - sourced by the local-path signal tests: start a bsprun job that sleeps, wait
# until its ranks run, wait for bsprun to end. Everything started is killed by pid on exit.
# A test that starts its job itself sets pid, marker and out, and uses the rest.
#   start_sleeping_job BSPRUN PROG   sets pid (bsprun), marker (on every rank's command line), out
#   wait_for_ranks N                 fails unless N ranks printed their line within 20 s
#   wait_for_exit WHAT               sets status; fails unless bsprun ended within 20 s

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
  kill -KILL "$pid" 2>/dev/null
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
  status=
  for _ in $(seq 1 200); do
    if ! kill -0 "$pid" 2>/dev/null; then wait "$pid"; status=$?; break; fi
    sleep 0.1
  done
  [ -n "$status" ] || fail "bsprun still running 20 s after $1"
}

# Fails if any process of the job is still running.
expect_no_ranks_left() {
  local left
  left=$(pgrep -f "$marker" | wc -l)
  [ "$left" -eq 0 ] || fail "$left process(es) of the job still running after bsprun exited"
}
