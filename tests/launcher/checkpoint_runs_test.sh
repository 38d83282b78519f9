#!/usr/bin/env bash
# checkpoint_runs_test.sh BSPRUN CKPT_JOB - a checkpoint belongs to one run of one job (bsprun on
# this machine, no host file). Each case compares the job's answer with an uninterrupted run's and
# ends with nothing of the job left running:
#   earlier       a fresh run in a directory that holds an earlier run's checkpoints, which then
#                 loses a process, restarts from its own checkpoint (or its beginning), never the
#                 earlier run's; the earlier run's stop file does not stop it
#   two_jobs      a second bsprun on one checkpoint directory, or one job id, is refused with a
#                 line naming the first; the first ends with the right answer
#   arguments     --resume with other program arguments is refused, and taken with
#                 --allow-new-args; the printed --resume command repeats every option
set -u
# shellcheck source=job_helpers.sh
. "$(dirname "$0")/job_helpers.sh"
bsprun=$1 job=$2
dir=$(mktemp -d /tmp/bspg-ckpt-runs.XXXXXX)
tag=ckpt-runs-$$
marker=$tag  # on every process's command line (job_helpers.sh)
out=$dir/out
pid= pid2=
cleanup() {
  [ -z "$pid" ] || kill -KILL "$pid" 2>/dev/null
  [ -z "$pid2" ] || kill -KILL "$pid2" 2>/dev/null
  pkill -KILL -f "$tag" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
export XDG_RUNTIME_DIR=$dir/locks  # bsprun's job id locks, private to this test
expect() { grep -Eq -- "$1" "$out" || fail "no line matching '$1'"; }
expect_not() { if grep -Eq -- "$1" "$out"; then fail "a line matches '$1'"; fi; }
wait_for() {
  for _ in $(seq 1 600); do grep -Eq -- "$1" "$out" && return; sleep 0.1; done
  fail "no line matching '$1' within 60 s"
}
answer() { grep '^RESULT' "$1"; }
reference() {  # reference STEPS EVERY: the answer of an uninterrupted run
  "$bsprun" -p 3 --checkpoint-dir "$dir/reference-$1-$2" "$job" "$1" "$2" 2>&1 | grep '^RESULT'
}
kill_a_process() {
  local victim
  victim=$(pgrep -f "^$job .*$tag" | tail -n 1)
  [ -n "$victim" ] || fail "no process of the job found"
  kill -KILL "$victim"
}

case ${3:-all} in all | earlier)
  want30=$(reference 30 3)
  [ -n "$want30" ] || fail "the uninterrupted run printed no RESULT"
  # The earlier run: 40 steps, checkpoints every 4, stopped by SIGTERM after checkpoint 5.
  "$bsprun" -p 3 --checkpoint-dir "$dir/a" "$job" 40 4 --ms 150 "$tag" >"$out" 2>&1 &
  pid=$!
  wait_for "^checkpoint 5 at step"
  kill -TERM "$pid"
  wait_for_exit "SIGTERM" 60
  earlier=$(cd "$dir/a" && ls -d c[0-9]* | tail -n 1)
  [ -n "$earlier" ] && [ -e "$dir/a/$earlier/complete-0" ] || fail "the earlier run left no checkpoint"
  earlier_run=$(awk '{print $8}' "$dir/a/$earlier/complete-0")
  [ -n "$earlier_run" ] || fail "the earlier run's marker names no run"
  # It left a stop file too (as --migrate-load would), and a symlink planted beside it.
  echo 0123456789abcdef >"$dir/a/stop"
  mkdir "$dir/precious" && echo keep >"$dir/precious/file"
  ln -s "$dir/precious" "$dir/a/c99"
  # A fresh run of another job size in the same directory, a process killed before its first
  # checkpoint: restarted from its beginning, not from the earlier run's checkpoint.
  "$bsprun" -p 3 --restarts 2 --checkpoint-dir "$dir/a" "$job" 30 3 --ms 300 "$tag" >"$out" 2>&1 &
  pid=$!
  wait_for "^pid 0 of 3"
  sleep 0.1
  grep -q "^checkpoint 1 at" "$out" && fail "too late: the run checkpointed already"
  kill_a_process
  wait_for "^bsprun: restart 1 of 2: "
  expect "^bsprun: restart 1 of 2: from the beginning on this machine"
  # Once it has checkpoints of its own, a second loss restarts from them.
  wait_for "^checkpoint 3 at step"
  kill_a_process
  wait_for_exit "a second loss" 120
  [ "$status" -eq 0 ] || fail "exit $status, not 0"
  expect "^bsprun: restart 2 of 2: from checkpoint [3-9] on this machine"
  expect_not "stopping after checkpoint|of another job size"
  [ "$(answer "$out")" = "$want30" ] || fail "answer $(answer "$out"), not $want30"
  [ "$(cat "$dir/precious/file")" = keep ] || fail "a file behind a planted symlink changed"
  if grep -qs "run $earlier_run " "$dir/a"/c*/complete-*; then fail "the earlier run's checkpoints are still there"; fi
  expect_no_ranks_left 5
  echo "ok: a fresh run restarts from its own checkpoints only, and no stop file of another run stops it"
  ;;
esac

case ${3:-all} in all | two_jobs)
  want=$(reference 20 2)
  for how in "--checkpoint-dir $dir/b" "--job-id shared-$$"; do
    # shellcheck disable=SC2086
    "$bsprun" -p 3 $how "$job" 20 2 --ms 100 "$tag" >"$out" 2>&1 &
    pid=$!
    wait_for "^checkpoint 1 at step"
    # shellcheck disable=SC2086
    "$bsprun" -p 3 $how "$job" 20 2 --ms 100 "$tag" >"$dir/second" 2>&1
    second=$?
    [ "$second" -eq 125 ] || { cat "$dir/second"; fail "the second bsprun ($how) exited $second, not 125"; }
    grep -Eq "^bsprun: job [^ ]+ cannot start: (its job id|checkpoint directory $dir/b) is in use by bsprun pid $pid on [^ ]+, job [^ ]+, since " "$dir/second" ||
      { cat "$dir/second"; fail "the second bsprun ($how) did not name the first"; }
    wait_for_exit "the first job" 120
    [ "$status" -eq 0 ] || fail "the first job ($how) exited $status"
    [ "$(answer "$out")" = "$want" ] || fail "answer $(answer "$out"), not $want ($how)"
    # The lock went with the first bsprun: the same command runs now.
    # shellcheck disable=SC2086
    "$bsprun" -p 3 $how "$job" 20 2 "$tag" >"$out" 2>&1 || fail "a run after the first ended was refused ($how)"
  done
  # A lock left by a bsprun that died (SIGKILL) is taken over.
  "$bsprun" -p 3 --checkpoint-dir "$dir/c" "$job" 20 2 --ms 100 "$tag" >"$out" 2>&1 &
  pid=$!
  wait_for "^checkpoint 1 at step"
  kill -KILL "$pid"
  wait "$pid" 2>/dev/null
  pid=
  pkill -KILL -f "$tag"
  sleep 1
  "$bsprun" -p 3 --checkpoint-dir "$dir/c" "$job" 20 2 "$tag" >"$out" 2>&1 || fail "the lock of a killed bsprun was not taken over"
  [ "$(answer "$out")" = "$want" ] || fail "answer $(answer "$out"), not $want"
  expect_no_ranks_left 5
  echo "ok: one job at a time per checkpoint directory and job id"
  ;;
esac

case ${3:-all} in all | arguments)
  want=$(reference 30 3)
  "$bsprun" -p 3 -x BSPG_TEST_EXTRA=1 --time-limit 600 --restarts 1 --checkpoint-dir "$dir/d" \
    "$job" 30 3 --ms 100 "$tag" >"$out" 2>&1 &
  pid=$!
  wait_for "^checkpoint 2 at step"
  kill -TERM "$pid"
  wait_for_exit "SIGTERM" 60
  [ "$status" -eq 143 ] || fail "exit $status after SIGTERM, not 143"
  expect "^bsprun: to continue the job from its last checkpoint: bsprun --resume -p 3 -x BSPG_TEST_EXTRA=1 --time-limit 600 --restarts 1 --checkpoint-dir $dir/d $job 30 3 --ms 100 $tag$"
  # Other arguments: refused, saying how to insist.
  "$bsprun" --resume -p 3 --checkpoint-dir "$dir/d" "$job" 31 3 "$tag" >"$out" 2>&1
  status=$?
  [ "$status" -eq 2 ] || fail "--resume with other arguments exited $status, not 2"
  expect "with other arguments than these; .*--allow-new-args"
  expect_not "^RESULT"
  # The printed command continues the job, with the right answer.
  "$bsprun" --resume -p 3 -x BSPG_TEST_EXTRA=1 --time-limit 600 --restarts 1 --checkpoint-dir "$dir/d" \
    "$job" 30 3 --ms 100 "$tag" >"$out" 2>&1 || fail "the printed --resume command failed"
  expect "^bsprun: resuming job [^ ]+: from checkpoint [0-9]+ on this machine$"
  [ "$(answer "$out")" = "$want" ] || fail "answer $(answer "$out"), not $want"
  # --allow-new-args takes other arguments (the program's state decides what they mean).
  "$bsprun" -p 3 --checkpoint-dir "$dir/e" "$job" 30 3 --ms 100 "$tag" >"$out" 2>&1 &
  pid=$!
  wait_for "^checkpoint 2 at step"
  kill -TERM "$pid"
  wait_for_exit "SIGTERM" 60
  "$bsprun" --resume --allow-new-args -p 3 --checkpoint-dir "$dir/e" "$job" 30 3 "$tag" >"$out" 2>&1 ||
    fail "--resume --allow-new-args failed"
  [ "$(answer "$out")" = "$want" ] || fail "answer $(answer "$out"), not $want"
  expect_no_ranks_left 5
  echo "ok: --resume takes the job's own arguments, or others when asked; the command repeats every option"
  ;;
esac
