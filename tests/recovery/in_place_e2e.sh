#!/usr/bin/env bash
# in_place_e2e.sh SCENARIO - recovery in place (bsprun --spares) on the grid path, on emulated
# hosts (emuhosts.sh) with private checkpoint directories: 4 hosts run the job, one process each,
# and a fifth holds the spare. Every scenario checks the job's answer against an uninterrupted
# run's and that nothing of the job is left on any host once bsprun has returned.
#   process_killed  one process of the job killed (SIGKILL) on a host that stays: the spare takes
#                   its place in place (no restart, no new mpirun), within the time the line says
#   process_killed_restart  the same kill with --recovery restart: the restart path, for
#                   comparison (benchmarks/recovery_in_place.sh times both)
#   frozen          one process of the job stopped (SIGSTOP): found by bsprun's probes at
#                   --host-timeout (4 s), killed by bsprun, and recovered in place
#   host_killed     a whole host of the job killed (its sshd, MPI daemon and process): the MPI
#                   sees the process lost, bsprun's relay keeps the daemon's connection from
#                   mpirun (Open MPI 5.0's run-time would end the job) and names the host, and
#                   the job recovers in place and ends right without finalizing MPI
#   host_frozen     a whole host of the job frozen (its sshd, MPI daemon and process SIGSTOPped):
#                   silent for --host-timeout (4 s) to bsprun's probes, which name its process
#                   lost to the others; they cut their connections to it, and the job recovers in
#                   place (Open MPI 5.0's run-time would end a job whose daemon it loses, so the
#                   daemon is left alone) and ends right without finalizing MPI, bsprun ending
#                   mpirun; once thawed, nothing is left
#   spare_lost      the spare killed while it waits: said in one line, the job goes on and ends
#                   right
#   two_killed      two spares on two more hosts, --copies 2: pids 1 and 2 killed at once (pid 1's
#                   copies are with pids 2 and 3): both recovered in place, in one recovery, or,
#                   where Open MPI 5.0.7's shrink waits for ever (the second loss reaching the
#                   survivors while they shrink), one line at bspg's time bound and a restart
#   loss_in_recovery  two spares, --copies 2: pid 2 killed, then pid 1 0.1 s later, while the
#                   others recover from the first loss: both recovered in place (in one recovery
#                   or two), or one line at bspg's time bound and a restart, as above (where
#                   that line is lost with the job's output, bsprun's from the exit notes)
#   copy_and_holder the same kill with one copy (the default): pid 1's only copy was with pid 2,
#                   so the library says why not in place (or the time bound does, as above), and
#                   bsprun restarts from disk
#   sigterm         SIGTERM to bsprun: the moment it has exited, no process of the job, spare or
#                   MPI daemon is left on any host
#   copies_across_sites  two sites (hosts 1-2 and 3-5; the spare on 5): every copy a process
#                   keeps in memory, and writes to its host's disk behind the job, is of a process
#                   at the other site, so that a whole site lost leaves every shard (--copies 1)
#   site_lost       two sites (hosts 1-2 and 3-6; the spare on 5, 6 free), --copies 1: both hosts
#                   of site 1 killed at once (two processes of the job, and their disks): every
#                   lost shard has its copy at site 2, so the job finishes right from the last
#                   checkpoint on the hosts left, a spare sharing one of them (a restart: one
#                   spare for two lost processes; where one loss reaches the others first, it is
#                   recovered in place, and the second then takes the restart)
#   memory_refused  the last process refused new in-memory files from superstep 6 on (ckpt_job
#                   --no-memory-at, as where memory ran out): checkpoint 2 cannot be kept in
#                   memory; the job ends with one line naming the host and the cause, never a
#                   hang, and bsprun restarts it without that host from checkpoint 1 on disk
#   checkpoint_cost nothing lost: what an in-memory checkpoint costs (bspg_checkpoint's median,
#                   checkpoints 2 and later) beside its limit on the same hosts, measured with
#                   plain MPI and memcpy (BUDDY_TRANSFER: benchmarks/buddy_transfer); for
#                   benchmarks/recovery_in_place.sh, E2E_MIB 16 unless set, --copies
#                   E2E_COPIES (1 unless set)
#   checkpoint_memory nothing lost: the memory the in-memory checkpoints take, per process of the
#                   job (its in-memory files, and its peak resident set), with --copies E2E_COPIES
#                   (1 unless set) and E2E_MIB (16 unless set) MiB persisted per process
# Environment: BSPRUN, EMUHOSTS, CKPT_JOB; E2E_MIB and BSPG_TRACE_RECOVERY (below).
# Runs sealed, skipped without root (e2e_lib.sh).
set -u
scenario=${1:?scenario}
: "${CKPT_JOB:?}"
# shellcheck source=../launcher/e2e_lib.sh
. "$(dirname "$0")/../launcher/e2e_lib.sh"

tag=in-place-e2e-$$ # on every process's command line
ckpt=$dir/ckpt      # the checkpoint directory, private on each host
steps=60 every=4
[ "$scenario" = checkpoint_cost ] && every=10 # the disk copy behind has the time to end
# E2E_MIB=M: each process persists M MiB more (ckpt_job --mib), for timing a recovery with
# that much state; the scenarios' checks are the same.
more=()
[ "$scenario" = checkpoint_cost ] || [ "$scenario" = checkpoint_memory ] && : "${E2E_MIB:=16}"
[ -n "${E2E_MIB:-}" ] && more=(--mib "$E2E_MIB")
job=("$CKPT_JOB" "$steps" "$every" --ms 100 "${more[@]}" "$tag")
export EMU_PRIVATE_DIRS=$ckpt EMU_NO_RC=1 EMU_SLOTS=1

# The host number the job's pid P runs on (from its "pid P of N on emuI" line).
# (Open MPI's output may hold NUL bytes: they go first.)
host_of_pid() { tr -d '\0' <"$out" | sed -n "s/^pid $1 of [0-9]* on emu\([0-9]*\)$/\1/p" | head -n 1; }
# Nothing of the job or its MPI daemons on hosts 1..5 or here, at once.
nothing_left_at_once() {
  local where p left=
  for where in 1 2 3 4 5; do
    for p in $("$EMUHOSTS" pids "$dir" "$where"); do
      [ "$(sed -n 's/^.*) \(.\) .*$/\1/p' "/proc/$p/stat" 2>/dev/null)" = Z ] && continue
      if grep -q "$tag" "/proc/$p/cmdline" 2>/dev/null ||
        grep -Eqx "prted|orted" "/proc/$p/comm" 2>/dev/null; then
        left="$left emu$where:$p"
      fi
    done
  done
  [ "$(job_processes here)" -eq 0 ] || left="$left here"
  [ -z "$left" ] || fail "still running when bsprun had exited:$left"
}
# The job's answer against the uninterrupted run's.
expect_answer() {
  local got
  got=$(tr -d '\0' <"$out" | grep '^RESULT')
  [ -n "$1" ] && [ "$got" = "$1" ] || fail "answer '$got', not the uninterrupted run's '$1'"
}
# Seconds (3 decimals) in bspg's recovery line.
recovery_seconds() { sed -n 's/^bspg: recovered in place.* in \([0-9.]*\) s$/\1/p' "$err" | tail -n 1; }
# Seconds from the loss (wall clock $1) to the job's resumption on the restored state (ckpt_job's
# "resumed from checkpoint ... at E)" line): reported, not checked (timing is no test here).
say_loss_to_resumed() {
  local resumed
  resumed=$(tr -d '\0' <"$out" | grep '^resumed from checkpoint' | tail -n 1 | sed -n 's/.* at \([0-9.]*\))$/\1/p')
  local line
  line=$(recovery_seconds)
  [ -n "$line" ] && line=" (bspg's line: $line s)"
  [ -n "$resumed" ] &&
    echo "loss to resumed: $(awk -v a="$1" -v b="$resumed" 'BEGIN { printf "%.3f", b - a }') s$line"
}

# Where Open MPI 5.0.7's shrink never ends, bspg's time bound ends the job for a restart: true,
# with that path's checks, where the library said so; false where it did not.
ended_at_the_bound() {
  if grep -Eq "^bspg: a process was lost; no recovery in place: the recovery did not end within 5 s; the job ends for a restart$" "$err"; then
    echo "(the MPI's shrink did not end: the time bound's line, and a restart)"
    expect_count "$err" "^bspg: .*no recovery in place" 1
  elif grep -Eq "^bsprun: lost process [0-9]+ on emu[0-9]: no recovery in place \(its reason did not arrive; the processes' exit notes say it ended the job\), said the library$" "$err"; then
    # The library's line went with the job's last output (Open MPI 5.0.7's run-time lost it once
    # under load, after its "[warn] Epoll ADD ... Bad file descriptor"): bsprun read the exit notes.
    echo "(the library's line was lost: its exit notes, and a restart)"
  else
    return 1
  fi
  expect_match "$err" "^bsprun: restart 1 of 2: from checkpoint [0-9]+ on "
}

case $scenario in
two_killed | copy_and_holder | loss_in_recovery)
  start_hosts 0.1 0.1 0.1 0.1 3.5 3.6 # the fifth and sixth, busy, get the spares
  run=(-p 4 -v --spares 2 --restarts 2 --hostfile hosts.yaml --checkpoint-dir "$ckpt")
  ;;
copies_across_sites | site_lost)
  unset OMPI_MCA_oob_tcp_if_include OMPI_MCA_btl_tcp_if_include # each host has a network of its own
  if [ "$scenario" = site_lost ]; then
    EMU_NETNS=1 EMU_SITES="1 1 2 2 2 2" start_hosts 0.1 0.1 0.1 0.1 3.5 3.6 # 6 is for the restart
  else
    EMU_NETNS=1 EMU_SITES="1 1 2 2 2" start_hosts 0.1 0.1 0.1 0.1 3.5
  fi
  run=(-p 4 -v --spares 1 --restarts 2 --hostfile hosts.yaml --checkpoint-dir "$ckpt")
  ;;
*)
  start_hosts 0.1 0.1 0.1 0.1 3.5 # the fifth, busy, gets the spare
  # A short --host-timeout only where a stopped process is to be found: under load (CI runs
  # tests side by side) a probe of a host that is fine can take over a second.
  timeout_s=10
  [ "$scenario" = frozen ] || [ "$scenario" = host_frozen ] && timeout_s=4
  run=(-p 4 -v --spares 1 --restarts 2 --host-timeout "$timeout_s" --hostfile hosts.yaml --checkpoint-dir "$ckpt")
  [ "$scenario" = process_killed_restart ] && run+=(--recovery restart)
  ;;
esac
# BSPG_TRACE_RECOVERY=1 in the test's environment: every recovery's steps, with the wall clock.
[ -n "${BSPG_TRACE_RECOVERY:-}" ] && run+=(-x BSPG_TRACE_RECOVERY=1)
want=$(reference 4 "${more[@]}")

case $scenario in
process_killed | frozen)
  start_job "${run[@]}" "${job[@]}"
  wait_for "$out" "^checkpoint 3 at step" 60
  victim_host=$(host_of_pid 2)
  victim=$(process_on "$victim_host")
  [ -n "$victim" ] || fail "no process of pid 2 on emu$victim_host"
  lost_at=$(date +%s.%N)
  if [ "$scenario" = frozen ]; then kill -STOP "$victim"; else kill -KILL "$victim"; fi
  wait_job 120
  [ "$scenario" = frozen ] && kill -KILL "$victim" 2>/dev/null
  show
  expect_status 0
  expect_match "$err" "^bspg: recovered in place from checkpoint [0-9]+: process 2 \(host emu$victim_host, process id [0-9]+\) lost, a spare on emu5 took its place, in [0-9.]+ s$"
  expect_match "$err" "^bsprun: process 2 on emu$victim_host lost: recovered in place"
  expect_count "$err" "^bsprun: restart " 0
  expect_answer "$want"
  say_loss_to_resumed "$lost_at"
  expect_nothing_left 5
  ;;

process_killed_restart)
  start_job "${run[@]}" "${job[@]}"
  wait_for "$out" "^checkpoint 3 at step" 60
  victim=$(process_on "$(host_of_pid 2)")
  [ -n "$victim" ] || fail "no process of pid 2 found"
  lost_at=$(date +%s.%N)
  kill -KILL "$victim"
  wait_job 120
  show
  expect_status 0
  expect_count "$err" "^bspg: recovered in place" 0
  expect_match "$err" "^bsprun: restart 1 of 2: from checkpoint [0-9]+ on "
  expect_answer "$want"
  say_loss_to_resumed "$lost_at"
  expect_nothing_left 5
  ;;

host_killed)
  start_job "${run[@]}" "${job[@]}"
  wait_for "$out" "^checkpoint 3 at step" 60
  victim_host=$(host_of_pid 2)
  # Timed from the moment the host's processes are killed (the emulator's own time not counted).
  EMUHOSTS_KILLED_AT=$dir/killed-at "$EMUHOSTS" crash "$dir" "$victim_host"
  lost_at=$(cat "$dir/killed-at")
  wait_job 120
  show
  expect_status 0
  expect_match "$err" "^bsprun: the MPI daemon on emu$victim_host is gone, and its host does not answer ssh"
  expect_match "$err" "^bsprun: emu$victim_host is gone with its MPI daemon: process 2 there named lost"
  expect_match "$err" "^bspg: recovered in place from checkpoint [0-9]+: process 2 \\(host emu$victim_host, process id [0-9]+\\) lost, a spare on emu5 took its place"
  expect_match "$err" "^bsprun: process 2 on emu$victim_host lost: recovered in place"
  expect_count "$err" "^bsprun: restart " 0
  expect_count "$err" "^bsprun: lost " 0
  expect_match "$err" "^bspg: the job ended without finalizing MPI: the lost processes on emu$victim_host"
  expect_answer "$want"
  say_loss_to_resumed "$lost_at"
  expect_nothing_left 5
  ;;

host_frozen)
  start_job "${run[@]}" "${job[@]}"
  wait_for "$out" "^checkpoint 3 at step" 60
  victim_host=$(host_of_pid 2)
  lost_at=$(date +%s.%N)
  "$EMUHOSTS" freeze "$dir" "$victim_host"
  wait_for "$err" "^bsprun: emu$victim_host does not answer for --host-timeout: process 2 there named lost" 60
  echo "frozen to bsprun's line: $(awk -v a="$lost_at" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }') s"
  wait_job 120
  show
  expect_status 0
  expect_match "$err" "^bspg: recovered in place from checkpoint [0-9]+: process 2 \\(host emu$victim_host, process id [0-9]+\\) lost, a spare on emu5 took its place, in [0-9.]+ s$"
  expect_match "$err" "^bsprun: process 2 on emu$victim_host lost: recovered in place"
  expect_count "$err" "^bsprun: restart " 0
  # The MPI's run-time still waits for the frozen processes: the living end without finalizing,
  # process 0 says so, and bsprun ends mpirun and says the host could not be reached.
  expect_match "$err" "^bspg: the job ended without finalizing MPI: the lost processes on emu$victim_host did not answer"
  expect_match "$err" "^bsprun: could not reach emu$victim_host .* to stop the job there"
  expect_answer "$want"
  say_loss_to_resumed "$lost_at"
  # Thawed, what was left on the frozen host finds its job gone and ends.
  "$EMUHOSTS" thaw "$dir" "$victim_host"
  expect_nothing_left 5
  ;;

spare_lost)
  start_job "${run[@]}" "${job[@]}"
  wait_for "$out" "^checkpoint 2 at step" 60
  spare=$(process_on 5)
  [ -n "$spare" ] || fail "no spare on emu5"
  kill -KILL "$spare"
  wait_job 120
  show
  expect_status 0
  expect_match "$err" "spare.* lost while waiting"
  expect_count "$err" "^bsprun: restart " 0
  expect_answer "$want"
  expect_nothing_left 5
  ;;

two_killed | copy_and_holder)
  [ "$scenario" = two_killed ] && run+=(--copies 2)
  start_job "${run[@]}" "${job[@]}"
  wait_for "$out" "^checkpoint 3 at step" 60
  host_a=$(host_of_pid 1) host_b=$(host_of_pid 2)
  victim_a=$(process_on "$host_a") victim_b=$(process_on "$host_b")
  [ -n "$victim_a" ] && [ -n "$victim_b" ] || fail "no processes of pids 1 and 2 found"
  lost_at=$(date +%s.%N)
  kill -KILL "$victim_a" "$victim_b"
  wait_job 120
  show
  expect_status 0
  if ended_at_the_bound; then
    : # the library could not recover in place: checked there
  elif [ "$scenario" = two_killed ]; then
    expect_match "$err" "^bspg: recovered in place from checkpoint [0-9]+: process 1 \(host emu$host_a, process id [0-9]+\), process 2 \(host emu$host_b, process id [0-9]+\) lost, spares on emu[56], emu[56] took their places, in [0-9.]+ s$"
    expect_count "$err" "^bsprun: restart " 0
  else
    expect_match "$err" "^bspg: process [12] \(host emu[0-9], process id [0-9]+\) lost; no recovery in place: no process left holds a copy of process 1's shard of checkpoint [0-9]+ \(bsprun --copies keeps more\)"
    expect_count "$err" "^bspg: .*no recovery in place" 1
    expect_match "$err" "^bsprun: restart 1 of 2: from checkpoint [0-9]+ on "
  fi
  expect_answer "$want"
  say_loss_to_resumed "$lost_at"
  expect_nothing_left 6
  ;;

loss_in_recovery)
  run+=(--copies 2)
  start_job "${run[@]}" "${job[@]}"
  wait_for "$out" "^checkpoint 3 at step" 60
  victim_a=$(process_on "$(host_of_pid 2)") victim_b=$(process_on "$(host_of_pid 1)")
  [ -n "$victim_a" ] && [ -n "$victim_b" ] || fail "no processes of pids 1 and 2 found"
  lost_at=$(date +%s.%N)
  kill -KILL "$victim_a"
  sleep 0.1
  kill -KILL "$victim_b"
  wait_job 120
  show
  expect_status 0
  if ! ended_at_the_bound; then
    # Both lost pids were taken by spares, in one recovery or two, and the job never restarted.
    for lost in 1 2; do
      grep -Eq "^bspg: recovered in place from checkpoint [0-9]+: .*process $lost \\(host emu[0-9], process id [0-9]+\\)" "$err" ||
        fail "no recovery in place of process $lost"
    done
    expect_count "$err" "^bsprun: restart " 0
  fi
  expect_answer "$want"
  say_loss_to_resumed "$lost_at"
  expect_nothing_left 6
  ;;

sigterm)
  start_job "${run[@]}" "${job[@]}"
  wait_for "$out" "^checkpoint 2 at step" 60
  [ -n "$(process_on 5)" ] || fail "no spare on emu5"
  kill -TERM "$pid"
  wait_job 30
  show
  expect_status 143
  nothing_left_at_once
  ;;

copies_across_sites)
  start_job "${run[@]}" "${job[@]}"
  wait_for "$out" "^checkpoint 3 at step" 60
  site_of_host() { if [ "$1" -le 2 ]; then echo 1; else echo 2; fi; }
  # Checkpoint 2's disk copy is whole by now (checkpoint 3 waited for it): the copies on each
  # host's disk, of whichever checkpoints are there.
  for host in 1 2 3 4; do
    copies=$(ssh -F ssh_config "emu$host" "find $ckpt -name 'copy-*'" 2>/dev/null |
      sed -n 's|^.*/copy-\([0-9]*\)$|\1|p' | sort -u)
    [ -n "$copies" ] || fail "emu$host keeps no copy"
    for ward in $copies; do
      ward_host=$(host_of_pid "$ward")
      echo "emu$host (site $(site_of_host "$host")) keeps process $ward's copy (emu$ward_host, site $(site_of_host "${ward_host:-0}"))"
      [ -n "$ward_host" ] && [ "$(site_of_host "$ward_host")" != "$(site_of_host "$host")" ] ||
        fail "emu$host keeps the copy of process $ward, at its own site"
    done
  done
  wait_job 120
  show
  expect_status 0
  expect_match "$err" "^emu[1-4] .* 1 \\(subjob [01], site site1\\)$"
  expect_match "$err" "^emu[1-4] .* 1 \\(subjob [01], site site2\\)$"
  expect_answer "$want"
  expect_nothing_left 5
  ;;

site_lost)
  start_job "${run[@]}" "${job[@]}"
  wait_for "$out" "^checkpoint 3 at step" 60
  lost_at=$(date +%s.%N)
  "$EMUHOSTS" crash "$dir" 1 &
  crashing=$!
  "$EMUHOSTS" crash "$dir" 2
  wait "$crashing"
  wait_job 180
  show
  expect_status 0
  # One restart; where the first loss was recovered in place (it counts as one), it is the second.
  if grep -q "^bsprun: process [0-3] on emu[12] lost: recovered in place" "$err"; then
    expect_match "$err" "^bsprun: restart 2 of 2: from checkpoint [0-9]+ on "
  else
    expect_match "$err" "^bsprun: restart 1 of 2: from checkpoint [0-9]+ on "
  fi
  expect_count "$err" "^bsprun: restart [0-9]+ of " 1
  # Only the hosts of site 2 are left to run it: its 4 processes there, beside the 2 of before.
  [ "$(tr -d '\0' <"$out" | grep -Ec "^pid [0-3] of 4 on emu[3-6]$")" -ge 6 ] ||
    fail "the restarted job did not run on the hosts of site 2 (emu3-emu6)"
  expect_answer "$want"
  say_loss_to_resumed "$lost_at"
  expect_nothing_left 6
  ;;

memory_refused)
  start_job "${run[@]}" "${job[@]}" --no-memory-at 6 # ckpt_job reads its options anywhere
  wait_job 120
  show
  expect_status 0
  refused_host=$(host_of_pid 3)
  expect_match "$err" "^bspg: checkpoint 2 could not be written on emu$refused_host: the in-memory copy of checkpoint 2: Cannot allocate memory; checkpoint 1 is kept$"
  expect_count "$err" "^bspg: checkpoint [0-9]+ could not be written" 1
  # The processes leave together: none is taken for lost (process 0's abort would be, under the
  # MPI's fault tolerance).
  expect_count "$err" "^bspg: .* lost|^bsprun: lost " 0
  # Nor does the MPI say a word (a collective's round that sent to a process that had left did).
  expect_count "$err" "NBC_|An error occurred" 0
  expect_match "$err" "^bsprun: leaving out emu$refused_host: checkpoint 2 could not be written there"
  expect_match "$err" "^bsprun: restart 1 of 2: from checkpoint 1 on "
  expect_answer "$want"
  expect_nothing_left 5
  ;;

checkpoint_cost)
  [ -x "${BUDDY_TRANSFER:-}" ] || fail "BUDDY_TRANSFER must name benchmarks/buddy_transfer"
  copies=${E2E_COPIES:-1}
  start_job "${run[@]}" --copies "$copies" "${job[@]}"
  wait_job 300
  show
  expect_status 0
  expect_answer "$want"
  expect_nothing_left 5
  median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
  cost=$(tr -d '\0' <"$out" | sed -n 's/^checkpoint \([0-9]*\) at step [0-9]* took \([0-9.]*\) s$/\1 \2/p' |
    awk '$1 >= 2 { print $2 }' | median)
  # The limit, on the same hosts: each of the 4 processes copies its shard in memory and sends it
  # to the next E2E_COPIES processes' hosts (where bspg places the copies) while its wards' arrive.
  "$BSPRUN" -p 4 --hostfile hosts.yaml "$BUDDY_TRANSFER" "$E2E_MIB" 1 7 "$copies" >"$dir/limit" 2>&1 ||
    fail "buddy_transfer failed: $(tail -n 3 "$dir/limit")"
  copy=$(sed -n 's/^memcpy \([0-9.]*\) s$/\1/p' "$dir/limit" | median)
  send=$(sed -n 's/^transfer \([0-9.]*\) s$/\1/p' "$dir/limit" | median)
  [ -n "$cost" ] && [ -n "$copy" ] && [ -n "$send" ] || fail "no checkpoint or limit times"
  awk -v k="$copies" -v c="$cost" -v m="$copy" -v t="$send" 'BEGIN {
    printf "checkpoint in memory, --copies %d: %.4f s; limit: memcpy %.4f s + transfer %.4f s = %.4f s; ratio %.2f\n",
      k, c, m, t, m + t, c / (m + t) }'
  ;;

checkpoint_memory)
  copies=${E2E_COPIES:-1}
  start_job "${run[@]}" --copies "$copies" "${job[@]}"
  # Each process of the job (not the spare, which keeps nothing): the largest total of its
  # in-memory files seen, and its peak resident set, sampled until the job ends.
  declare -A files_kib=() peak_kib=()
  while kill -0 "$pid" 2>/dev/null; do
    for where in 1 2 3 4; do
      p=$(process_on "$where")
      [ -n "$p" ] || continue
      # Each file once (the disk copy's thread holds duplicates of some descriptors).
      total=$(for fd in /proc/"$p"/fd/*; do
        case $(readlink "$fd" 2>/dev/null) in /memfd:bspg*) stat -L -c '%i %s' "$fd" 2>/dev/null ;; esac
      done | sort -u | awk '{ kib += $2 / 1024 } END { printf "%d\n", kib }')
      [ "$total" -gt "${files_kib[$where]:-0}" ] && files_kib[$where]=$total
      hwm=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB$/\1/p' "/proc/$p/status" 2>/dev/null)
      [ -n "$hwm" ] && [ "$hwm" -gt "${peak_kib[$where]:-0}" ] && peak_kib[$where]=$hwm
    done
    sleep 0.05
  done
  wait_job 300
  show
  expect_status 0
  expect_answer "$want"
  expect_nothing_left 5
  files=$(for w in 1 2 3 4; do echo $((${files_kib[$w]:-0} / 1024)); done | sort -n | tr '\n' ' ')
  peaks=$(for w in 1 2 3 4; do echo $((${peak_kib[$w]:-0} / 1024)); done | sort -n | tr '\n' ' ')
  echo "in-memory checkpoints at $E2E_MIB MiB per process, --copies $copies: in-memory files per process (MiB): $files; peak resident set (MiB): $peaks"
  ;;

*)
  echo "in_place_e2e.sh: unknown scenario '$scenario'" >&2
  exit 2
  ;;
esac
finish
