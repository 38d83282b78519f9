#!/usr/bin/env bash
# orphan_test.sh BSPRUN PROG [MPI_FAMILY] - if mpirun itself dies (here: SIGKILL), the ranks it leaves behind
# are stopped by bsprun, which says so and exits 128+9.
set -u
. "$(dirname "$0")/job_helpers.sh"
start_sleeping_job "$1" "$2"
wait_for_ranks 2
mpirun_pid=$(pgrep -P "$pid" | head -n 1)  # the starter: bsprun's only child
[ -n "$mpirun_pid" ] || fail "no mpirun child of bsprun found"

kill -KILL "$mpirun_pid"
wait_for_exit "mpirun was killed"
[ "$status" -eq 137 ] || fail "expected exit 137 (128+SIGKILL), got $status"
# Open MPI leaves its ranks running; MPICH's Hydra proxy, which outlives mpiexec, ends them itself
# at once (then nothing is left for bsprun to stop or report).
if [ "${3:-openmpi}" = openmpi ]; then
  grep -q "bsprun: mpirun exited with 2 process(es) of the job still running; bsprun stopped them" "$out" ||
    fail "bsprun did not report the ranks it stopped"
fi
expect_no_ranks_left
echo "ok: ranks orphaned by mpirun were stopped, bsprun exited $status"
