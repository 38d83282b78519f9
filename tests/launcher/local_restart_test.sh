#!/usr/bin/env bash
# local_restart_test.sh BSPRUN CKPT_JOB - checkpoints and restarts on this machine (no host file):
# a process of the job killed from outside (SIGKILL), or the starter (mpirun) crashed, is restarted
# from the last checkpoint (--restarts 1), and a job whose bsprun was stopped (SIGTERM) is finished
# with --resume; each gives the answer of an uninterrupted run, and nothing of the job is left
# running.
set -u
# shellcheck source=job_helpers.sh
. "$(dirname "$0")/job_helpers.sh"
bsprun=$1 job=$2
dir=$(mktemp -d /tmp/bspg-local-restart.XXXXXX)
tag=local-restart-$$
marker=$tag  # on every process's command line (job_helpers.sh)
pid=
cleanup() {
  [ -z "$pid" ] || kill -KILL "$pid" 2>/dev/null
  pkill -KILL -f "$tag" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
out=$dir/out
expect() { grep -Eq -- "$1" "$out" || fail "no line matching '$1'"; }
wait_for() {
  for _ in $(seq 1 600); do grep -Eq -- "$1" "$out" && return; sleep 0.1; done
  fail "no line matching '$1' within 60 s"
}
args=(30 3 --ms 100 "$tag")
want=$("$bsprun" -p 3 --checkpoint-dir "$dir/reference" "$job" 30 3 2>&1 | grep '^RESULT')
[ -n "$want" ] || fail "the uninterrupted run printed no RESULT"

# A process killed by SIGKILL: restart 1 of 1, from the last checkpoint, here. bsprun's output
# goes through a process substitution, a child bsprun had before the job: not the job's, so not
# stopped with what is left of it (bsprun would then die writing its next line).
# restartable_job DIR: bsprun -p 3 --restarts 1 in the background, until checkpoint 2 is written.
restartable_job() {
  : >"$out"
  "$bsprun" -p 3 --restarts 1 --checkpoint-dir "$1" "$job" "${args[@]}" > >(cat >>"$out") 2>&1 &
  pid=$!
  wait_for "^checkpoint 2 at step"
}
# restarted_right WHAT: bsprun exited 0 after restart 1 of 1, with the uninterrupted run's answer.
restarted_right() {
  wait_for_exit "the step before" 120
  [ "$status" -eq 0 ] || fail "exit $status after $1, not 0"
  expect "^bsprun: restart 1 of 1: from checkpoint [0-9]+ on this machine$"
  [ "$(grep '^RESULT' "$out")" = "$want" ] || fail "answer $(grep '^RESULT' "$out"), not $want"
}
restartable_job "$dir/a"
victim=$(pgrep -f "^$job ${args[*]}" | tail -n 1)
[ -n "$victim" ] || fail "no process of the job found"
kill -KILL "$victim"
restarted_right "a lost process"
# Open MPI's mpirun says which process was killed; under MPICH's mpiexec bsprun finds it itself.
expect "^bsprun: lost (process [0-2] on [^ ]+: killed by signal 9 \(Killed\), said mpirun|processes? [0-2].* on this machine: .* killed by a signal.*, found by bsprun)$"
expect "^resumed from checkpoint [0-9]+ at step "
if grep -Eq "exited on signal|^-----" "$out"; then fail "Open MPI's notice of the lost process was shown"; fi
expect_no_ranks_left 5
echo "ok: restarted after a lost process"

# The starter itself crashes (SIGSEGV to mpirun) while no process of the job failed: a loss, not
# the program's failure: restart 1 of 1, and the answer of an uninterrupted run.
restartable_job "$dir/s"
starter=$(pgrep -P "$pid" -f "mpirun|mpiexec|prterun" | head -n 1)
[ -n "$starter" ] || fail "bsprun has no starter process"
kill -SEGV "$starter"
restarted_right "the starter crashed"
expect "^bsprun: lost the job's starter: [^ ]+ crashed \(signal 11, Segmentation fault\) while no process of the job had failed$"
expect_no_ranks_left 5
echo "ok: restarted after the starter crashed"

# bsprun stopped by SIGTERM, then --resume.
"$bsprun" -p 3 --checkpoint-dir "$dir/b" "$job" "${args[@]}" >"$out" 2>&1 &
pid=$!
wait_for "^checkpoint 2 at step"
kill -TERM "$pid"
wait_for_exit "the step before" 120
[ "$status" -eq 143 ] || fail "exit $status after SIGTERM, not 143"
expect "^bsprun: to continue the job from its last checkpoint: bsprun --resume -p 3 --checkpoint-dir $dir/b $job ${args[*]}$"
expect_no_ranks_left 5
"$bsprun" --resume --checkpoint-dir "$dir/b" -p 3 "$job" "${args[@]}" >"$out" 2>&1 || fail "the resumed job failed"
expect "^bsprun: resuming job [^ ]+: from checkpoint [0-9]+ on this machine$"
[ "$(grep '^RESULT' "$out")" = "$want" ] || fail "answer $(grep '^RESULT' "$out"), not $want"
expect_no_ranks_left 5
echo "ok: resumed after SIGTERM"

# A job run without checkpoint options says nothing about checkpoints at its start. Stopped, it
# names its made-up job id only when the program did checkpoint, and that command continues it.
export HOME=$dir/home
mkdir -p "$HOME"
"$bsprun" -p 3 "$job" 30 100 --ms 100 "$tag" >"$out" 2>&1 &
pid=$!
wait_for "^pid 0 of 3"
sleep 0.5
kill -TERM "$pid"
wait_for_exit "the step before" 120
[ "$status" -eq 143 ] || fail "exit $status after SIGTERM, not 143"
if grep -q "checkpoint" "$out"; then fail "a job that wrote no checkpoint was told about checkpoints"; fi
expect_no_ranks_left 5
"$bsprun" -p 3 "$job" "${args[@]}" >"$out" 2>&1 &
pid=$!
wait_for "^checkpoint 2 at step"
kill -TERM "$pid"
wait_for_exit "the step before" 120
if grep -q "^bsprun: job " "$out"; then fail "a job without checkpoint options announced its job id"; fi
expect "^bsprun: the job's checkpoints are in ~/\.cache/bspg/checkpoints/[0-9a-f-]+; to continue it: bsprun --resume --job-id [0-9a-f-]+ -p 3 $job ${args[*]}$"
id=$(sed -n 's/^bsprun: the job.s checkpoints are in ~\/\.cache\/bspg\/checkpoints\/\([0-9a-f-]*\);.*/\1/p' "$out")
expect_no_ranks_left 5
"$bsprun" --resume --job-id "$id" -p 3 "$job" "${args[@]}" >"$out" 2>&1 || fail "the resumed job failed"
[ "$(grep '^RESULT' "$out")" = "$want" ] || fail "answer $(grep '^RESULT' "$out"), not $want"
[ ! -e "$HOME/.cache/bspg/checkpoints/$id" ] || fail "the job ended well, and its default checkpoint directory is still there"
expect_no_ranks_left 5
echo "ok: a job without checkpoint options"
