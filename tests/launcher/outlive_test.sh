#!/usr/bin/env bash
# outlive_test.sh CASE BSPRUN CKPT_JOB - nothing of a job outlives bsprun on this machine.
#   sigterm  SIGTERM to bsprun -p 3: the moment it has exited, no process of the job is left
#            (looked for in /proc at once, no grace) and bsprun left no file in TMPDIR or its
#            lock directory
#   frozen   a process of the job SIGSTOPped, --restarts 1 --host-timeout 3: lost within the
#            timeout (the line names it), the job restarted, the answer an uninterrupted run's
set -u
case_=$1 bsprun=$2 job=$(readlink -f "$3")
unset BSPG_HOSTFILE
dir=$(mktemp -d /tmp/bsprun-outlive.XXXXXX)
tag=outlive-local-$$ # on every process's command line
export TMPDIR=$dir/tmp HOME=$dir/home # bsprun's lock files go to ~/.cache/bspg/locks
unset XDG_RUNTIME_DIR
mkdir -p "$TMPDIR" "$HOME"
out=$dir/out
pid=
cleanup() {
  [ -z "$pid" ] || kill -KILL "$pid" 2>/dev/null
  for p in $(pgrep -f "$tag"); do [ "$p" != $$ ] && kill -KILL "$p" 2>/dev/null; done
  rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; echo "---- output:"; cat "$out"; exit 1; }
expect() { grep -Eq -- "$1" "$out" || fail "no line matching '$1'"; }
wait_for() {
  for _ in $(seq 1 3000); do grep -Eq -- "$1" "$out" && return; sleep 0.02; done
  fail "no line matching '$1' within 60 s"
}
# bsprun's exit status in $status, reaped the moment it exits.
wait_exit() {
  for _ in $(seq 1 $(($1 * 100))); do kill -0 "$pid" 2>/dev/null || break; sleep 0.01; done
  kill -0 "$pid" 2>/dev/null && fail "bsprun still running after $1 s"
  wait "$pid"
  status=$?
  pid=
}
# The job's processes still there (not zombies), as "pid name" lines.
job_left() {
  local p
  for p in $(pgrep -f "$tag"); do
    [ "$p" = $$ ] && continue
    [ "$(sed -n 's/^.*) \(.\) .*$/\1/p' "/proc/$p/stat" 2>/dev/null)" = Z ] && continue
    grep -q "$tag" "/proc/$p/cmdline" 2>/dev/null && echo "$p $(cat "/proc/$p/comm" 2>/dev/null)"
  done
}
args=(300 3 --ms 100 "$tag")

case $case_ in
sigterm)
  "$bsprun" -p 3 --job-id "$tag" --checkpoint-dir "$dir/ckpt" "$job" "${args[@]}" >"$out" 2>&1 &
  pid=$!
  wait_for "^checkpoint 2 at step"
  kill -TERM "$pid"
  wait_exit 30
  left=$(job_left | tr '\n' ' ')
  [ -z "$left" ] || fail "processes of the job still running when bsprun had exited: $left"
  [ "$status" -eq 143 ] || fail "exit $status after SIGTERM, not 143"
  expect "^bsprun: to continue the job from its last checkpoint: bsprun --resume -p 3 --job-id $tag --checkpoint-dir $dir/ckpt $job ${args[*]}$"
  files=$(find "$TMPDIR" "$HOME/.cache/bspg/locks" -mindepth 1 2>/dev/null | tr '\n' ' ')
  [ -z "$files" ] || fail "bsprun left files behind (TMPDIR, its lock directory): $files"
  echo "ok: nothing left after SIGTERM"
  ;;
frozen)
  want=$("$bsprun" -p 3 --checkpoint-dir "$dir/reference" "$job" 30 3 2>&1 | grep '^RESULT')
  [ -n "$want" ] || fail "the uninterrupted run printed no RESULT"
  "$bsprun" -p 3 --restarts 1 --host-timeout 3 --checkpoint-dir "$dir/a" "$job" 30 3 --ms 100 "$tag" >"$out" 2>&1 &
  pid=$!
  wait_for "^checkpoint 2 at step"
  victim=$(pgrep -f "^$job 30 3 --ms 100 $tag" | tail -n 1)
  [ -n "$victim" ] || fail "no process of the job found"
  kill -STOP "$victim"
  frozen_at=$(date +%s.%N)
  wait_for "^bsprun: lost process [0-2] on [^ ]+: stopped \(SIGSTOP\) for [0-9.]+ s; stopping the job$"
  noticed=$(awk -v a="$frozen_at" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  # 3 s and a poll of the watch; generous for a loaded machine.
  awk -v n="$noticed" 'BEGIN { exit !(n <= 8) }' || fail "the stopped process was noticed after $noticed s (--host-timeout 3)"
  wait_exit 120
  [ "$status" -eq 0 ] || fail "exit $status after a restart, not 0"
  expect "^bsprun: restart 1 of 1: from checkpoint [0-9]+ on this machine$"
  [ "$(grep '^RESULT' "$out")" = "$want" ] || fail "answer $(grep '^RESULT' "$out"), not $want"
  left=$(job_left | tr '\n' ' ')
  [ -z "$left" ] || fail "processes of the job still running when bsprun had exited: $left"
  grep "^bsprun: lost" "$out"
  echo "ok: a stopped process was lost and the job restarted"
  ;;
*) echo "unknown case $case_"; exit 2 ;;
esac
