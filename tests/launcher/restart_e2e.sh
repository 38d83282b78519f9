#!/usr/bin/env bash
# restart_e2e.sh SCENARIO - bsprun's checkpoints and restarts against emulated hosts
# (emuhosts.sh), each host with a private checkpoint directory that dies with it
# (EMU_PRIVATE_DIRS), so that a lost host's files are really gone.
#
# The job is ckpt_job (tests/launcher/progs): its answer ("RESULT ...") changes if a superstep is
# lost, repeated or restored wrongly, and is checked against an uninterrupted run on this machine.
# Every scenario ends with no process of the job left on any host or here.
# Environment: BSPRUN, EMUHOSTS, CKPT_JOB. Runs sealed, skipped without root (e2e_lib.sh).
#   host_lost       a host killed mid-run (sshd and every process): the job finishes on a spare
#   frozen          a host frozen mid-run (SIGSTOP): declared lost within --host-timeout
#   process_killed  one process of the job killed (SIGKILL) on a host that stays: the job restarts
#                   (MPICH's Hydra does not say which process; the library's exit notes do)
#   resume          bsprun stopped by SIGTERM; --resume of the wrong size, of an unknown job, and
#                   of the job with a damaged shard (its copy is used); the default directory
#   second_loss     the spare the job restarts on is lost too while it starts: restart 2 of 2
#   exhausted       the same with --restarts 1: exit 75 and the command that continues it, which works
#   not_restarted   bsp_abort, exit(3) and SIGSEGV in the program are not restarted
#   migrate         --migrate-load: the job moves off a host whose load was raised (setload)
#   unwritable      one host's checkpoint directory is read-only: the job leaves it out and
#                   restarts on the spare (with no restarts: one line naming it, exit 1)
#   full_disk       one host's disk fills after checkpoint 1: the job stops with checkpoint 1 kept
#                   (exit 75) and the command that continues it, which works once there is room
#   copy_fails      the spare the job restarts on cannot take the shards: left out, the job
#                   restarts on the next spare
#   two_hosts_lost  --copies 2, one process a host: two hosts killed at once (each the other's
#                   only holder with one copy): the job finishes on spares from the copies
#   copy_and_holder_lost  the same two hosts killed with one copy (the default): no whole
#                   checkpoint, one line that names the shard missing everywhere, exit 125
#   logins          a job that ends well: two ssh logins a host (probe, MPI daemon), and its
#                   default checkpoint directory removed by its processes at bsp_end
set -u
scenario=${1:?scenario}
: "${CKPT_JOB:?}"
# shellcheck source=e2e_lib.sh
. "$(dirname "$0")/e2e_lib.sh"

tag=restart-e2e-$$                  # on every process's command line (job_processes)
ckpt=$dir/ckpt                      # the checkpoint directory, private on each host
steps=40 every=4
[ "$scenario" = migrate ] && steps=80  # room for the probes that see the load before the end
job=("$CKPT_JOB" "$steps" "$every" --ms 100 "$tag")


# The job's answer, and on which hosts its last run's processes were.
expect_answer() {
  local got
  [ -n "$1" ] || fail "the uninterrupted run printed no RESULT"
  got=$(grep '^RESULT' "$out")
  [ "$got" = "$1" ] || fail "answer '$got', not the uninterrupted run's '$1'"
}
expect_last_run_on() {  # expect_last_run_on REGEX: the last P "pid" lines name hosts matching REGEX
  local p=$1 regex=$2 n
  n=$(grep '^pid ' "$out" | tail -n "$p" | grep -Ec " on ($regex)$")
  [ "$n" -eq "$p" ] || fail "the last run's processes are not all on $regex: $(grep '^pid ' "$out" | tail -n "$p" | tr '\n' ';')"
}

# on_host I COMMAND...: runs COMMAND in host I's mount namespace (its private directories).
on_host() {
  local i=$1 p
  shift
  p=$("$EMUHOSTS" pids "$dir" "$i" | head -n 1)
  [ -n "$p" ] || { fail "host $i runs nothing"; return 1; }
  nsenter -t "$p" -m -r -- "$@"
}

# crash_hosts_of_pids A B: kills the hosts that pids A and B run on (one process a host), both at
# once; their numbers in lost_a and lost_b.
crash_hosts_of_pids() {
  local crashing
  lost_a=$(sed -n "s/^pid $1 of [0-9]* on emu\([0-9]*\)$/\1/p" "$out" | head -n 1)
  lost_b=$(sed -n "s/^pid $2 of [0-9]* on emu\([0-9]*\)$/\1/p" "$out" | head -n 1)
  [ -n "$lost_a" ] && [ -n "$lost_b" ] || fail "pids $1 and $2 said no host"
  "$EMUHOSTS" crash "$dir" "$lost_a" &
  crashing=$!
  "$EMUHOSTS" crash "$dir" "$lost_b"
  wait "$crashing"
}
# The hosts of 1-6 not killed by crash_hosts_of_pids, as "emuI|emuJ|...".
kept_hosts() { local i; for i in 1 2 3 4 5 6; do [ "$i" = "$lost_a" ] || [ "$i" = "$lost_b" ] || echo "emu$i"; done | paste -sd '|'; }

restarted_from() { sed -n 's/^bsprun: restart [0-9]* of [0-9]*: from checkpoint \([0-9]*\) .*/\1/p' "$err" | tail -n 1; }

export EMU_PRIVATE_DIRS=$ckpt EMU_NO_RC=1

case $scenario in
host_lost)
  # emu1 and emu2 take the job (2 processes each); emu3, busy, is the spare.
  start_hosts 0.1 0.2 3.5
  want=$(reference 4)
  start_job -p 4 --hostfile hosts.yaml --restarts 2 --checkpoint-dir "$ckpt" "${job[@]}"
  wait_for "$out" "^checkpoint 2 at step" 60
  "$EMUHOSTS" crash "$dir" 2
  wait_job 120
  show
  expect_status 0
  expect_match "$err" "^bsprun: lost (emu2: |process [23] on emu2: killed by signal)"
  expect_count "$err" "^bsprun: restart " 1
  expect_match "$err" "^bsprun: restart 1 of 2: from checkpoint [0-9]+ on emu1 emu3 \(2 shards brought over\)$"
  expect_match "$out" "^resumed from checkpoint $(restarted_from) at step "
  expect_last_run_on 4 "emu1|emu3"
  expect_answer "$want"
  expect_count "$err" "^-----|ORTE|Primary job" 0
  expect_nothing_left 3
  ;;

process_killed)
  # One of the job's processes on emu2 is killed; emu2 itself stays. Open MPI's mpirun names the
  # process; with MPICH, bsprun finds it (and those Hydra ended after it) from the exit notes.
  start_hosts 0.1 0.2 3.5
  want=$(reference 4)
  start_job -p 4 --hostfile hosts.yaml --restarts 2 --checkpoint-dir "$ckpt" "${job[@]}"
  bsprun_pid=$pid
  wait_for "$out" "^checkpoint 2 at step" 60
  victim=
  for p in $("$EMUHOSTS" pids "$dir" 2); do
    if tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -q "^$CKPT_JOB .*$tag"; then victim=$p; break; fi
  done
  [ -n "$victim" ] || fail "no process of the job found on emu2"
  kill -KILL "$victim" 2>/dev/null
  wait_job 120
  show
  expect_status 0
  expect_match "$err" "^bsprun: lost process(es)? [0-9, and]+ on (emu1 and )?emu2: "
  expect_count "$err" "^bsprun: restart " 1
  expect_match "$err" "^bsprun: restart 1 of 2: from checkpoint [0-9]+ on emu"
  expect_match "$out" "^resumed from checkpoint $(restarted_from) at step "
  expect_answer "$want"
  expect_nothing_left 3
  # Nothing of the runs' exit notes is left in the hosts' (shared) home: each run's directory
  # is named by its job marker, bspg-<bsprun's pid>-<random> (other tests may have theirs there).
  left=$(find ~/.cache/bspg/exits -mindepth 1 -maxdepth 1 -name "bspg-$bsprun_pid-*" 2>/dev/null)
  [ -z "$left" ] || fail "exit notes left in ~/.cache/bspg/exits: $(echo $left)"
  ;;

frozen)
  # emu2 freezes (sshd and every process SIGSTOPped): lost within --host-timeout, restarted on emu3.
  start_hosts 0.1 0.2 3.5
  want=$(reference 4)
  start_job -p 4 --hostfile hosts.yaml --restarts 2 --host-timeout 4 --checkpoint-dir "$ckpt" "${job[@]}"
  wait_for "$out" "^checkpoint 2 at step" 60
  "$EMUHOSTS" freeze "$dir" 2
  frozen_at=$SECONDS
  wait_for "$err" "^bsprun: lost emu2: no answer for [0-9.]+ s \(.*\), noticed by bsprun's probes; stopping the job$" 60
  noticed=$((SECONDS - frozen_at))
  lost_at=$(date +%s%3N)
  # 4 s, a probe round and its timeout; generous for a loaded machine.
  [ "$noticed" -le 20 ] || fail "the frozen host was noticed after $noticed s (--host-timeout 4)"
  wait_for "$err" "^bsprun: restart 1 of 2: " 60
  echo "---- from the loss to the restart: $(($(date +%s%3N) - lost_at)) ms"
  wait_job 120
  show
  expect_status 0
  expect_match "$err" "^bsprun: restart 1 of 2: from checkpoint [0-9]+ on emu1 emu3 \(2 shards brought over\)$"
  expect_last_run_on 4 "emu1|emu3"
  expect_answer "$want"
  # Thawed, what was left on emu2 finds its job gone and ends.
  "$EMUHOSTS" thaw "$dir" 2
  expect_nothing_left 3
  ;;

frozen_profile)
  # As frozen, with --profile: the records are not asked of the frozen host (its ssh would wait
  # out its connect timeout, 10 s, before the restart), so the restart comes as soon as without
  # --profile, and bsprun says whose records are missing.
  start_hosts 0.1 0.2 3.5
  want=$(reference 4)
  start_job -p 4 --hostfile hosts.yaml --restarts 2 --host-timeout 4 --checkpoint-dir "$ckpt" \
    --profile "$dir/prof" "${job[@]}"
  wait_for "$out" "^checkpoint 2 at step" 60
  "$EMUHOSTS" freeze "$dir" 2
  wait_for "$err" "^bsprun: lost emu2: .*; stopping the job$" 60
  lost_at=$(date +%s%3N)
  wait_for "$err" "^bsprun: restart 1 of 2: " 60
  gap_ms=$(($(date +%s%3N) - lost_at))
  echo "---- from the loss to the restart: $gap_ms ms"
  # About 2 s without --profile here (the frozen scenario prints its own); waiting out emu2's
  # ssh connect timeout would add 10 s.
  [ "$gap_ms" -lt 12000 ] || fail "the restart came $gap_ms ms after the loss (the profile waited for emu2?)"
  wait_job 120
  show
  expect_status 0
  expect_match "$err" "^bsprun: profile: the records of emu2's processes stay there \(it does not answer\)"
  expect_answer "$want"
  [ -s "$dir/prof/supersteps.csv" ] || fail "no profile"
  "$EMUHOSTS" thaw "$dir" 2
  expect_nothing_left 3
  ;;

resume)
  # The default checkpoint directory (~/.cache/bspg/checkpoints/JOB on each host), private per host.
  home=$(getent passwd "$(id -un)" | cut -d: -f6)
  export EMU_PRIVATE_DIRS="$home/.cache/bspg/checkpoints"
  start_hosts 0.1 0.2
  want=$(reference 4)
  id=e2e-$$
  start_job -p 4 --hostfile hosts.yaml --job-id "$id" "${job[@]}"
  wait_for "$out" "^checkpoint 2 at step" 60
  kill -TERM "$pid"
  wait_job 60
  show
  expect_status 143
  expect_match "$err" "^bsprun: job $id: checkpoints in ~/\.cache/bspg/checkpoints/$id on each host$"
  expect_match "$err" "^bsprun: to continue the job from its last checkpoint: bsprun --resume -p 4 --hostfile hosts\.yaml --job-id $id $CKPT_JOB $steps $every --ms 100 $tag$"
  expect_nothing_left 2
  # Another process count, and a job that never ran, are refused before anything starts.
  expect_refused 2 "^bsprun: the checkpoints in ~/\.cache/bspg/checkpoints/$id are of another job size \(checkpoint [0-9]+ of 4 processes\); this run has -p 3$" \
    --resume --job-id "$id" -p 3 --hostfile hosts.yaml "${job[@]}"
  expect_refused 125 "^bsprun: nothing to resume: no reachable host holds a checkpoint of this job in ~/\.cache/bspg/checkpoints/no-such-job$" \
    --resume --job-id no-such-job -p 4 --hostfile hosts.yaml "${job[@]}"
  # Process 0's shard (on emu1) is damaged: its copy, on emu2, is brought over.
  newest=$(ssh -F ssh_config emu1 "ls ~/.cache/bspg/checkpoints/$id" | sed -n 's/^c\([0-9]*\)$/\1/p' | sort -n | tail -n 1)
  [ -n "$newest" ] || fail "no checkpoint on emu1"
  ssh -F ssh_config emu1 "printf garbage | dd of=.cache/bspg/checkpoints/$id/c$newest/shard-0 bs=1 seek=100 conv=notrunc status=none"
  run_bsprun -v --resume --job-id "$id" -p 4 --hostfile hosts.yaml "${job[@]}"
  expect_status 0
  expect_match "$err" "^bsprun: copying emu2:c$newest/copy-0 to emu1:c$newest/shard-0$"
  expect_match "$err" "^bsprun: resuming job $id: from checkpoint $newest on emu1 emu2 \(1 shard brought over\)$"
  expect_match "$out" "^resumed from checkpoint $newest at step "
  expect_answer "$want"
  # Finished: the job's default directory is gone from its hosts.
  for h in emu1 emu2; do
    ssh -F ssh_config "$h" "test ! -e ~/.cache/bspg/checkpoints/$id" || fail "~/.cache/bspg/checkpoints/$id is still on $h"
  done
  expect_nothing_left 2
  ;;

second_loss | exhausted)
  # emu1 and emu2 take the job; emu3 and emu4 are spares (emu3 the less busy: after emu2 the job
  # fills emu1 and emu3). emu2 is lost, and then emu3 while the job restarts there.
  start_hosts 0.1 0.2 2.0 5.0
  want=$(reference 4)
  restarts=2
  [ "$scenario" = exhausted ] && restarts=1
  start_job -p 4 --hostfile hosts.yaml --restarts "$restarts" --checkpoint-dir "$ckpt" "${job[@]}"
  wait_for "$out" "^checkpoint 2 at step" 60
  "$EMUHOSTS" crash "$dir" 2
  wait_for "$err" "^bsprun: restart 1 of $restarts: from checkpoint [0-9]+ on emu1 emu3 " 60
  "$EMUHOSTS" crash "$dir" 3
  wait_job 120
  show
  expect_match "$err" "^bsprun: lost (emu3: |process [23] on emu3: )"
  if [ "$scenario" = second_loss ]; then
    expect_status 0
    expect_match "$err" "^bsprun: restart 2 of 2: from checkpoint [0-9]+ on emu1 emu4 \(2 shards brought over\)$"
    expect_last_run_on 4 "emu1|emu4"
    expect_answer "$want"
  else
    expect_status 75
    expect_count "$err" "^bsprun: restart 2 " 0
    last=$(tail -n 1 "$err")
    case $last in
      "bsprun: no restarts left (1 of 1 used); checkpoint "*" is whole: continue the job with: bsprun --resume -p 4 --hostfile hosts.yaml --restarts 1 --checkpoint-dir $ckpt ${job[*]}") ;;
      *) fail "the last line is not the one saying how to continue: $last" ;;
    esac
    expect_nothing_left 4
    # The command it gives finishes the job (on emu1 and emu4).
    run_bsprun --resume --checkpoint-dir "$ckpt" -p 4 --hostfile hosts.yaml --restarts 1 "${job[@]}"
    expect_status 0
    expect_match "$err" "^bsprun: resuming job [^ ]+: from checkpoint [0-9]+ on emu1 emu4 "
    expect_answer "$want"
  fi
  expect_nothing_left 4
  ;;

not_restarted)
  # The program's own failures end the job as they always did, with restarts to spare.
  start_hosts 0.1 0.2 3.5
  for failure in "--abort-at 6" "--exit-at 6" "--segv-at 6"; do
    # shellcheck disable=SC2086
    run_bsprun -p 4 --hostfile hosts.yaml --restarts 2 --checkpoint-dir "$ckpt" "${job[@]}" $failure
    expect_status nonzero
    expect_count "$err" "^bsprun: (restart|lost)" 0
    expect_count "$out" "^pid " 4
    case $failure in
      --abort*) expect_status 1; cat "$out" "$err" >both; expect_count both "^ckpt_job: process 3 aborts at step 6$" 1 ;;
      --exit*) expect_status 3 ;;
      --segv*)
        expect_status 139
        if [ "${MPI_FAMILY:-openmpi}" = mpich ]; then
          # Hydra names the process only on its standard output; the library's line says it.
          expect_match "$err" "^bspg: process 3: crashed with signal SIGSEGV"
        else
          expect_match "$err" "^bsprun: process 3 on emu2 ended by signal 11 \(Segmentation fault\): the program failed; not restarted$"
        fi ;;
    esac
    expect_nothing_left 3
  done
  ;;

migrate)
  # emu1 and emu2 take the job; emu3 (load 1.9) is free enough. emu2's load goes up to 9 (its
  # owner is back): after 3 probes in a row above 4 besides the job's own 2 processes, the job
  # stops after its next checkpoint and continues on emu1 and emu3.
  start_hosts 0.1 0.2 1.9
  want=$(reference 4)
  start_job -p 4 --hostfile hosts.yaml --restarts 1 --host-timeout 3 --migrate-load 4 --checkpoint-dir "$ckpt" "${job[@]}"
  wait_for "$out" "^checkpoint 1 at step" 60
  "$EMUHOSTS" setload "$dir" 2 9
  wait_job 120
  show
  expect_status 0
  expect_match "$err" "^bsprun: emu2 is busy \(load 7\.00 besides the job's 2 processes, above --migrate-load 4 in 3 probes in a row\): moving the job to other hosts after its next checkpoint$"
  expect_match "$err" "^bspg: stopping after checkpoint [0-9]+, as asked \($ckpt/stop\)$"
  expect_match "$err" "^bsprun: moving the job off emu2: from checkpoint [0-9]+ on emu1 emu3 \(2 shards brought over\)$"
  expect_count "$err" "^bsprun: (restart|lost)" 0
  expect_last_run_on 4 "emu1|emu3"
  expect_answer "$want"
  expect_nothing_left 3
  ;;

unwritable)
  # emu2's checkpoint directory is read-only from the start: the first checkpoint cannot be
  # written there, and the job says so in one line instead of hanging.
  start_hosts 0.1 0.2 3.5
  want=$(reference 4)
  on_host 2 mount -o remount,ro "$ckpt"
  run_bsprun -p 4 --hostfile hosts.yaml --checkpoint-dir "$ckpt" "${job[@]}"
  expect_status 1
  expect_match "$err" "^bspg: checkpoint 1 could not be written on emu2: $ckpt/c1: .*Read-only file system; there is no earlier checkpoint$"
  expect_count "$out" "^RESULT" 0
  expect_nothing_left 3
  # With a restart to spare, emu2 is left out and the job runs on emu1 and emu3.
  run_bsprun -p 4 --hostfile hosts.yaml --restarts 1 --checkpoint-dir "$ckpt" "${job[@]}"
  expect_status 0
  expect_match "$err" "^bsprun: leaving out emu2: checkpoint 1 could not be written there$"
  expect_match "$err" "^bsprun: restart 1 of 1: from the beginning on emu1 emu3 "
  expect_last_run_on 4 "emu1|emu3"
  expect_answer "$want"
  expect_nothing_left 3
  ;;

full_disk)
  # After checkpoint 1, emu2's disk fills up (its checkpoint directory is a small tmpfs): checkpoint
  # 2 cannot be written there. The job stops with checkpoint 1 whole, and says how to continue.
  start_hosts 0.1 0.2
  want=$(reference 4)
  on_host 2 mount -o remount,size=1m "$ckpt"
  start_job -p 4 --hostfile hosts.yaml --checkpoint-dir "$ckpt" "${job[@]}"
  wait_for "$out" "^checkpoint 1 at step" 60
  on_host 2 sh -c "dd if=/dev/zero of='$ckpt/filler' bs=64k status=none 2>/dev/null; true"
  wait_job 120
  show
  expect_status 75
  expect_match "$err" "^bspg: checkpoint 2 could not be written on emu2: $ckpt/c2/[a-z]+-[0-9]+(\.part)?: .*No space left on device; checkpoint 1 is kept$"
  expect_match "$err" "^bsprun: checkpoint 1 is whole: once emu2 can write again, continue the job with: bsprun --resume -p 4 --hostfile hosts\.yaml --checkpoint-dir $ckpt ${job[*]}$"
  expect_count "$out" "^RESULT" 0
  expect_nothing_left 2
  on_host 2 rm -f "$ckpt/filler"
  run_bsprun --resume -p 4 --hostfile hosts.yaml --checkpoint-dir "$ckpt" "${job[@]}"
  expect_status 0
  expect_match "$err" "^bsprun: resuming job [^ ]+: from checkpoint 1 on emu1 emu2"
  expect_answer "$want"
  expect_nothing_left 2
  ;;

copy_fails)
  # emu1 and emu2 run the job; emu3 (the spare the restart chooses) cannot take the shards (its
  # checkpoint directory is read-only); emu4 can.
  start_hosts 0.1 0.2 2.0 5.0
  want=$(reference 4)
  on_host 3 mount -o remount,ro "$ckpt"
  start_job -p 4 --hostfile hosts.yaml --restarts 1 --checkpoint-dir "$ckpt" "${job[@]}"
  wait_for "$out" "^checkpoint 2 at step" 60
  "$EMUHOSTS" crash "$dir" 2
  wait_job 120
  show
  expect_status 0
  expect_match "$err" "^bsprun: could not bring the shards of checkpoint [0-9]+ over: emu3: .*; leaving out emu3 and planning again$"
  expect_match "$err" "^bsprun: restart 1 of 1: from checkpoint [0-9]+ on emu1 emu4 \(2 shards brought over\)$"
  expect_last_run_on 4 "emu1|emu4"
  expect_answer "$want"
  expect_nothing_left 4
  ;;

two_hosts_lost)
  # One process a host: four of emu1-emu4 take the job, emu5 and emu6, busy, are the spares.
  # The hosts of pids 1 and 2 are killed at once: with two copies, pid 1's shard is also with
  # pids 2 and 3, pid 2's with pids 3 and 0.
  export EMU_SLOTS=1
  start_hosts 0.1 0.1 0.1 0.1 3.5 3.6
  want=$(reference 4)
  start_job -p 4 --copies 2 --hostfile hosts.yaml --restarts 2 --checkpoint-dir "$ckpt" "${job[@]}"
  wait_for "$out" "^checkpoint 2 at step" 60
  crash_hosts_of_pids 1 2
  wait_job 120
  show
  expect_status 0
  expect_match "$err" "^bsprun: lost .*emu($lost_a|$lost_b)"
  expect_match "$err" "^bsprun: restart [12] of 2: from checkpoint [0-9]+ on "
  expect_match "$out" "^resumed from checkpoint $(restarted_from) at step "
  expect_last_run_on 4 "$(kept_hosts)"
  expect_answer "$want"
  expect_nothing_left $(kept_hosts | tr -d emu | tr '|' ' ')
  ;;

copy_and_holder_lost)
  # The same two hosts lost with one copy (the default): pid 1's copy was with pid 2.
  export EMU_SLOTS=1
  start_hosts 0.1 0.1 0.1 0.1 3.5 3.6
  start_job -p 4 --hostfile hosts.yaml --restarts 2 --checkpoint-dir "$ckpt" "${job[@]}"
  wait_for "$out" "^checkpoint 2 at step" 60
  crash_hosts_of_pids 1 2
  wait_job 120
  show
  expect_status 125
  expect_match "$err" "^bsprun: no whole checkpoint to restart from: checkpoint [0-9]+ lacks a whole shard of process 1 on the reachable hosts$"
  expect_count "$out" "^resumed from checkpoint" 0
  expect_count "$out" "^RESULT" 0
  expect_nothing_left $(kept_hosts | tr -d emu | tr '|' ' ')
  ;;

logins)
  # A job that ends well costs each host two ssh logins (the probe, the MPI daemon's): its
  # processes remove the default checkpoint directory themselves at bsp_end, so bsprun does not
  # log in again to clean up, and the directory is gone all the same.
  home=$(getent passwd "$(id -un)" | cut -d: -f6)
  export EMU_PRIVATE_DIRS="$home/.cache/bspg/checkpoints"
  start_hosts 0.1 0.2
  steps=8 every=4
  want=$(reference 2)
  job=("$CKPT_JOB" "$steps" "$every" "$tag")
  id=e2e-logins-$$
  run_bsprun -p 2 --hostfile hosts.yaml --job-id "$id" "${job[@]}"
  expect_status 0
  expect_answer "$want"
  expect_count "$out" "^checkpoint 2 at step 8" 1
  for i in 1 2; do
    n=$(grep -c "Accepted publickey" "$dir/emu$i/sshd.log")
    [ "$n" -eq 2 ] || { fail "emu$i: $n ssh logins for the job, not 2 (probe, MPI daemon)"; grep -E "Accepted publickey|Starting session" "$dir/emu$i/sshd.log" | sed "s/^/    | /"; }
  done
  for h in emu1 emu2; do
    ssh -F ssh_config "$h" "test ! -e ~/.cache/bspg/checkpoints/$id" || fail "~/.cache/bspg/checkpoints/$id is still on $h"
  done
  expect_nothing_left 2
  ;;

*)
  echo "unknown scenario $scenario"
  exit 2
  ;;
esac

finish
