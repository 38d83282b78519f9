#!/usr/bin/env bash
# master_stop_test.sh BSPRUN MASTER_JOB sigint|time-limit - a job in master mode (the master
# alone, then two processes spawned by its bsp_begin) is stopped as a whole: by SIGINT to bsprun
# (exit 130, bsprun ends by the signal) or by --time-limit (exit 124). No process of the job,
# spawned ones included, is left running.
set -u
. "$(dirname "$0")/job_helpers.sh"
bsprun=$1 prog=$2 how=$3
marker=master-stop-$$-$RANDOM
out=$(mktemp)
limit=()
[ "$how" = time-limit ] && limit=(--time-limit 4)
"$bsprun" "${limit[@]}" --max-procs 3 "$prog" init 3 --sleep 60 "$marker" >"$out" 2>&1 &
pid=$!
trap cleanup_job EXIT

# Every process prints "pid S of 3 ..." once it is in the SPMD section, then sleeps.
for _ in $(seq 1 200); do
  [ "$(grep -c '^pid [0-2] of 3 ' "$out")" -ge 3 ] && break
  sleep 0.1
done
[ "$(grep -c '^pid [0-2] of 3 ' "$out")" -eq 3 ] || fail "the three processes did not start within 20 s"
[ "$(pgrep -f "$marker" | wc -l)" -ge 3 ] || fail "expected 3 running processes carrying $marker"

if [ "$how" = sigint ]; then
  kill -INT "$pid"
  wait_for_exit "SIGINT"
  [ "$status" -eq 130 ] || fail "expected exit 130 (128+SIGINT), got $status"
else
  wait_for_exit "the time limit"
  [ "$status" -eq 124 ] || fail "expected exit 124 (time limit), got $status"
  grep -q "time limit of 4 s reached" "$out" || fail "bsprun did not say the time limit was reached"
fi
sleep 0.5
expect_no_ranks_left
echo "ok: $how stopped the master and the spawned processes, bsprun exited $status"
