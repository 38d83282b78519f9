#!/usr/bin/env bash
# outlive_e2e.sh SCENARIO - nothing of a job outlives bsprun, on emulated hosts (emuhosts.sh),
# each with a private checkpoint directory (EMU_PRIVATE_DIRS).
#   frozen_rank      one process of the job SIGSTOPped on a host whose sshd still answers: lost
#                    within --host-timeout, named, and the job restarted with the right answer
#   sigterm          SIGTERM to a grid bsprun: the moment it has exited, no process of the job
#                    and no MPI daemon is left on any host or here, and no file of bsprun's in
#                    TMPDIR (RSL, ssh configuration)
#   sigterm_restart  SIGTERM while bsprun restarts the job (probing, with a frozen candidate
#                    that makes the probe wait): the command that continues the job, exit 143,
#                    nothing started again, nothing left, no file left
#   clean_up         bsprun SIGKILLed while a host's processes of the job and its daemon are
#                    frozen: bsprun --clean-up --job-id ID --hostfile H continues and ends them
#                    and says so per host; with a host down it names that host and fails
# Environment: BSPRUN, EMUHOSTS, CKPT_JOB. Runs sealed, skipped without root (e2e_lib.sh).
set -u
scenario=${1:?scenario}
: "${CKPT_JOB:?}"
# shellcheck source=e2e_lib.sh
. "$(dirname "$0")/e2e_lib.sh"

tag=outlive-e2e-$$ # on every process's command line
ckpt=$dir/ckpt     # the checkpoint directory, private on each host
steps=60 every=4
job=("$CKPT_JOB" "$steps" "$every" --ms 100 "$tag")
pid=
export EMU_PRIVATE_DIRS=$ckpt EMU_NO_RC=1


# job_left WHERE: the processes of the job (the tag on their command line) and MPI daemons on
# host WHERE (its own process table view: its UTS namespace), or here (WHERE = here), one
# "pid name" per line.
job_left() {
  local p pids=
  if [ "$1" = here ]; then
    # Emulated hosts share this process table: only this machine's UTS namespace is here.
    for p in $(pgrep -f "$tag" | grep -vx "$$"); do
      [ "$(readlink "/proc/$p/ns/uts" 2>/dev/null)" = "$(readlink /proc/self/ns/uts)" ] && pids="$pids $p"
    done
  else
    pids=$("$EMUHOSTS" pids "$dir" "$1")
  fi
  for p in $pids; do
    [ "$p" = "$$" ] && continue
    if grep -q "$tag" "/proc/$p/cmdline" 2>/dev/null ||
      { [ "$1" != here ] && grep -Eqx "orted|prted|hydra_pmi_proxy" "/proc/$p/comm" 2>/dev/null; }; then
      # A zombie has ended; only its parent has not reaped it.
      [ "$(sed -n 's/^.*) \(.\) .*$/\1/p' "/proc/$p/stat" 2>/dev/null)" = Z ] && continue
      echo "$p $(cat "/proc/$p/comm" 2>/dev/null)"
    fi
  done
}

# expect_nothing_left HOSTS...: at once, no grace: nothing of the job on these hosts or here.
expect_nothing_left() {
  local where left
  for where in here "$@"; do
    left=$(job_left "$where" | tr '\n' ' ')
    [ -z "$left" ] || fail "still running on $where when bsprun had exited: $left"
  done
}

# No file of bsprun's left in TMPDIR ($dir): RSL files, ssh configurations.
expect_no_temp_files() {
  local files
  files=$(find "$dir" -maxdepth 1 -name 'bspg-*' | tr '\n' ' ')
  [ -z "$files" ] || fail "bsprun left files in TMPDIR: $files"
}

# The pids of the job's processes on host I (the tag on their command line).
ranks_on() {
  local p
  for p in $("$EMUHOSTS" pids "$dir" "$1"); do
    grep -q "$tag" "/proc/$p/cmdline" 2>/dev/null && echo "$p"
  done
}

case $scenario in
frozen_rank)
  # emu1 and emu2 take the job, emu3 (busy) is the spare. One process on emu2 is frozen; emu2's
  # sshd answers on.
  start_hosts 0.1 0.2 3.5
  want=$(reference 4)
  start_job -p 4 --hostfile hosts.yaml --restarts 1 --host-timeout 4 --checkpoint-dir "$ckpt" "${job[@]}"
  wait_for "$out" "^checkpoint 2 at step" 60
  victim=$(ranks_on 2 | head -n 1)
  [ -n "$victim" ] || fail "no process of the job on emu2"
  kill -STOP "$victim"
  frozen_at=$(date +%s.%N)
  wait_for "$err" "^bsprun: lost process [0-3] on emu2: stopped \(SIGSTOP\) for [0-9.]+ s, noticed by bsprun's probes; stopping the job$" 30
  noticed=$(awk -v a="$frozen_at" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  # --host-timeout and a probe round; generous for a loaded machine.
  awk -v n="$noticed" 'BEGIN { exit !(n <= 10) }' || fail "the frozen process was noticed after $noticed s (--host-timeout 4)"
  wait_job 120
  show
  expect_status 0
  expect_match "$err" "^bsprun: restart 1 of 1: from checkpoint [0-9]+ on emu1 emu3 \(2 shards brought over\)$"
  expect_answer=$(grep '^RESULT' "$out")
  [ "$expect_answer" = "$want" ] || fail "answer '$expect_answer', not the uninterrupted run's '$want'"
  expect_nothing_left 1 2 3
  expect_no_temp_files
  ;;

sigterm)
  start_hosts 0.1 0.2
  start_job -p 4 --hostfile hosts.yaml --checkpoint-dir "$ckpt" "${job[@]}"
  wait_for "$out" "^checkpoint 2 at step" 60
  [ -n "$(ranks_on 1)" ] && [ -n "$(ranks_on 2)" ] || fail "the job does not run on emu1 and emu2"
  kill -TERM "$pid"
  wait_job 60
  expect_nothing_left 1 2
  show
  expect_status 143
  expect_match "$err" "^bsprun: to continue the job from its last checkpoint: bsprun --resume -p 4 --hostfile hosts\.yaml --checkpoint-dir $ckpt $CKPT_JOB $steps $every --ms 100 $tag$"
  expect_no_temp_files
  ;;

sigterm_restart)
  # emu4 is frozen from the start: every probe of the candidates waits --probe-timeout for it,
  # which is when the SIGTERM comes during the restart.
  start_hosts 0.1 0.2 3.5 0.1
  "$EMUHOSTS" freeze "$dir" 4
  start_job -p 4 --hostfile hosts.yaml --restarts 2 --probe-timeout 4 --checkpoint-dir "$ckpt" "${job[@]}"
  wait_for "$out" "^checkpoint 2 at step" 60
  "$EMUHOSTS" crash "$dir" 2
  wait_for "$err" "^bsprun: lost " 30
  sleep 0.5
  kill -TERM "$pid"
  wait_job 60
  expect_nothing_left 1 3
  "$EMUHOSTS" thaw "$dir" 4
  show
  expect_status 143
  expect_match "$err" "^bsprun: to continue the job from its last checkpoint: bsprun --resume -p 4 --hostfile hosts\.yaml --restarts 2 --probe-timeout 4 --checkpoint-dir $ckpt $CKPT_JOB $steps $every --ms 100 $tag$"
  expect_count "$out" "^resumed from checkpoint" 0
  expect_no_temp_files
  ;;

clean_up)
  start_hosts 0.1 0.2 3.5
  id=outlive-$$
  start_job -p 4 --hostfile hosts.yaml --job-id "$id" --checkpoint-dir "$ckpt" "${job[@]}"
  wait_for "$out" "^checkpoint 2 at step" 60
  # emu2's processes of the job and its daemon freeze; then bsprun is killed.
  frozen=$(job_left 2 | cut -d' ' -f1)
  [ "$(echo "$frozen" | wc -w)" -ge 3 ] || fail "expected 2 processes and a daemon on emu2, found: $frozen"
  # shellcheck disable=SC2086
  kill -STOP $frozen
  kill -KILL "$pid"
  wait "$pid" 2>/dev/null
  pid=
  sleep 2
  # Here, mpirun ended with bsprun (it gets SIGTERM when its parent dies); emu2's processes
  # stay frozen, as they would on a host that was suspended (a thaw makes Open MPI's daemon
  # notice that mpirun is gone here, but not on a machine that vanished).
  before=$(job_left 2 | tr '\n' ' ')
  echo "---- left on emu2: $before"
  [ -n "$before" ] || fail "nothing of the job was left on emu2 to clean up"
  run_bsprun --clean-up --job-id "$id" --hostfile hosts.yaml
  expect_status 0
  expect_match "$err" "^bsprun: this machine: (nothing of job $id left|ended [0-9]+ process(es)? of job $id: .*)$"
  # Open MPI 5's prted runs as two processes, the one ssh started and the one it forked.
  expect_match "$err" "^bsprun: emu2: ended [34] processes of job $id: ckpt_job \(pid [0-9]+, stopped\), ckpt_job \(pid [0-9]+, stopped\), (orted|prted|hydra_pmi_proxy) \(pid [0-9]+, MPI daemon, stopped\)(, prted \(pid [0-9]+, MPI daemon, stopped\))?$"
  expect_match "$err" "^bsprun: emu3: nothing of job $id left$"
  expect_match "$err" "^bsprun: job $id: nothing of it is left on this machine or the 3 hosts of hosts\.yaml$"
  expect_nothing_left 1 2 3
  # Once more: nothing to do. With emu3 down: named, and a failure.
  "$EMUHOSTS" down "$dir" 3
  run_bsprun --clean-up --job-id "$id" --hostfile hosts.yaml --probe-timeout 2
  expect_status 125
  expect_match "$err" "^bsprun: emu2: nothing of job $id left$"
  expect_match "$err" "^bsprun: emu3: could not reach it \(.*\); processes of job $id there may still run$"
  expect_match "$err" "^bsprun: job $id: could not reach emu3; processes of it may still run there$"
  ;;

*)
  echo "unknown scenario $scenario"
  exit 2
  ;;
esac
finish
