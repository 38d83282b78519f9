#!/usr/bin/env bash
# signal_test.sh BSPRUN PROG - SIGTERM to bsprun stops mpirun and every process of the job,
# and bsprun exits 128+15.
set -u
. "$(dirname "$0")/job_helpers.sh"
start_sleeping_job "$1" "$2"
wait_for_ranks 2

kill -TERM "$pid"
wait_for_exit "SIGTERM"
[ "$status" -eq 143 ] || fail "expected exit 143 (128+SIGTERM), got $status"
sleep 0.5
expect_no_ranks_left
echo "ok: SIGTERM stopped the job, bsprun exited $status"
