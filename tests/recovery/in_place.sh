#!/bin/bash
# in_place.sh BUILD_DIR - recovery in place (BSPG_SPARES) under Open MPI's fault tolerance, with
# mpirun alone: processes killed while the job runs, each run's answer compared with an
# uninterrupted run's, what each process says, and nothing left running afterwards.
# Needs an MPI with ULFM (Open MPI 5 built with it); run by ctest where the build found it.
set -u
build=${1:?usage: in_place.sh BUILD_DIR}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1
counter=$build/tests/bsplib/progs/ckpt_counter
init=$build/tests/recovery/recover_init
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
mpi() { timeout -k 10 120 mpirun --oversubscribe --mca btl_tcp_if_include lo "$@"; }

# The OS process id of world rank $2 of the program named $1 (waits for it to start).
pid_of_rank() {
  local name=$1 rank=$2 p r
  for _ in $(seq 100); do
    for p in $(pgrep -f "$name"); do
      r=$(tr '\0' '\n' </proc/"$p"/environ 2>/dev/null | sed -n 's/^OMPI_COMM_WORLD_RANK=//p')
      [ "$r" = "$rank" ] && { echo "$p"; return; }
    done
    sleep 0.05
  done
}

# Waits until process 0 said "checkpoint C at step ..." in FILE (at most 60 s): losses come at a
# point of the computation, however loaded the machine is.
wait_for_checkpoint() {
  for _ in $(seq 600); do
    tr -d '\0' <"$2" 2>/dev/null | grep -q "^checkpoint $1 at step" && return
    sleep 0.1
  done
}

# run NAME SPARES "KILL_SPEC" PROGRAM ARGS...: the job with SPARES spares over 4 processes; KILL_SPEC
# is "C:RANK[,RANK...] ..." (world ranks killed together once checkpoint C is written).
# Nothing of an earlier scenario may still run (its processes end by themselves, within 0.2 s).
quiet_machine() {
  for _ in $(seq 50); do
    pgrep -f "ckpt_counter 300|recover_init 300" >/dev/null || return 0
    sleep 0.1
  done
  pkill -9 -f "ckpt_counter 300|recover_init 300"
}

run() {
  local name=$1 spares=$2 kills=$3
  shift 3
  quiet_machine
  local dir=$work/$name
  mkdir -p "$dir/ck"
  (mpi --with-ft ulfm -np $((4 + spares)) -x BSPG_SPARES="$spares" ${extra_env:-} \
     -x BSPG_CHECKPOINT_DIR="$dir/ck" "$@" >"$dir/out" 2>&1; echo "$?" >"$dir/status") &
  local job=$!
  local spec at ranks rank pid
  for spec in $kills; do
    at=${spec%%:*} ranks=${spec#*:}
    wait_for_checkpoint "$at" "$dir/out"
    for rank in ${ranks//,/ }; do
      pid=$(pid_of_rank "$(basename "$1")" "$rank")
      [ -n "$pid" ] && kill -9 "$pid"
    done
  done
  wait "$job"
  tr -d '\0' <"$dir/out" >"$dir/text"
  status=$(cat "$dir/status")
  text=$dir/text
}

left_over() {
  sleep 0.5
  if pgrep -f "$work" >/dev/null || pgrep -f "ckpt_counter 300|recover_init 300" >/dev/null; then
    fail "$1: processes left after the job"
    pkill -9 -f "ckpt_counter 300|recover_init 300"
  fi
}

# The answers without losses.
mkdir -p "$work/ref/ck"
ref_counter=$(mpi -np 4 -x BSPG_CHECKPOINT_DIR="$work/ref/ck" "$counter" 300 10 slow 10 | grep RESULT)
ref_init=$(mpi -np 4 -x BSPG_CHECKPOINT_DIR="$work/ref/ck" "$init" 300 10 10 | grep RESULT)
[ -n "$ref_counter" ] && [ -n "$ref_init" ] || { echo "FAIL: the runs without losses gave no answer"; exit 1; }

expect_recovered() {  # NAME REF COUNT [MORE]: COUNT recoveries, or up to MORE
  local name=$1 ref=$2 count=$3 more=${4:-$3}
  [ "$status" = 0 ] || fail "$name: exit status $status (want 0)"
  grep -q "^$ref\$" "$text" || fail "$name: wrong or no answer: $(grep RESULT "$text")"
  local got
  got=$(grep -c '^bspg: recovered in place from checkpoint [0-9]*: process' "$text")
  [ "$got" -ge "$count" ] && [ "$got" -le "$more" ] ||
    fail "$name: $got recoveries in place said, want $count to $more"
  if grep -q "no recovery in place" "$text"; then fail "$name: a restart was asked for"; fi
  left_over "$name"
  [ "$failures" = 0 ] || { echo "--- $name output:"; grep -v '^checkpoint' "$text" | tail -20; }
}

expect_restart() {  # NAME PATTERN
  local name=$1 pattern=$2
  [ "$failures" = 0 ] || true
  [ "$status" = 76 ] || fail "$name: exit status $status (want 76, for bsprun's restart)"
  grep -q "no recovery in place: $pattern.*; the job ends for a restart" "$text" ||
    grep -q "no recovery in place: the recovery did not end within 5 s" "$text" ||
    fail "$name: no line saying why ($pattern)"
  left_over "$name"
  [ "$failures" = 0 ] || { echo "--- $name output:"; grep -v '^checkpoint' "$text" | tail -20; }
}

# 1. One process killed (the bsp_begin-in-main style), one spare.
run one_killed 1 "10:2" "$counter" 300 10 slow 10
expect_recovered one_killed "$ref_counter" 1
grep -q "^resumed from checkpoint" "$text" || fail "one_killed: did not resume from a checkpoint"

# 2. The bsp_init style: process 0 runs main again, with its globals as at the start.
run init_style 1 "10:3" "$init" 300 10 10
expect_recovered init_style "$ref_init" 1
[ "$(grep -c '^main run 1$' "$text")" = 2 ] || fail "init_style: main did not run again with its globals put back"
if grep -q '^main run 2' "$text"; then fail "init_style: a global kept its value across the recovery"; fi

# 3. Two processes killed at once, two spares; their shards' copies on others. (The MPI may
# report the two losses apart: one recovery or two.)
run two_at_once 2 "10:1,3" "$counter" 300 10 slow 10
expect_recovered two_at_once "$ref_counter" 1 2

# 4. Two losses one after the other, two spares.
run one_then_another 2 "8:2 18:1" "$counter" 300 10 slow 10
expect_recovered one_then_another "$ref_counter" 2

# 5. A spare lost while waiting: said by the other spare, and the job goes on without it; the
# only spare lost: said at the end.
run spare_lost 2 "5:5" "$counter" 300 10 slow 10
expect_recovered spare_lost "$ref_counter" 0
grep -q "^bspg: a spare was lost while waiting; 1 spare is left" "$text" || fail "spare_lost: not said"
run only_spare_lost 1 "5:4" "$counter" 300 10 slow 10
expect_recovered only_spare_lost "$ref_counter" 0
grep -q "^bspg: 1 of the job's 1 spare was lost while waiting" "$text" ||
  fail "only_spare_lost: not said"

# 6. Process 0 lost: the restart path.
run zero_lost 1 "10:0" "$counter" 300 10 slow 10
expect_restart zero_lost "process 0 runs main's sequential part"

# 7. More lost than spares.
run too_few_spares 1 "10:1,2" "$counter" 300 10 slow 10
expect_restart too_few_spares "fewer spares are left than processes were lost"

# 8. A process and the only holder of its copy (the next process) lost at once: a restart from
# disk, said in one line; where the MPI reports the two losses apart, two recoveries in place.
run copy_lost_too 2 "10:1,2" "$counter" 300 10 slow 10
if [ "$status" = 76 ]; then
  expect_restart copy_lost_too \
    "no process left holds a copy of process 1's shard of checkpoint [0-9]* (bsprun --copies keeps more)"
else
  expect_recovered copy_lost_too "$ref_counter" 2
fi

# 9. The recoveries bsprun allows used up.
extra_env="-x BSPG_RECOVERIES=0" run none_allowed 1 "10:2" "$counter" 300 10 slow 10
expect_restart none_allowed "the recoveries allowed (bsprun --restarts) are used up"

# Through bsprun on this machine: --spares starts the spare, the recovery passes through, -v says
# which path each loss took, and a loss in place cannot take (process 0) restarts from disk.
bsprun=$build/bin/bsprun
run_bsprun() {  # NAME KILL_SPEC BSPRUN_ARGS... (signal: $signal, default KILL)
  local name=$1 kills=$2
  shift 2
  quiet_machine
  local dir=$work/$name
  mkdir -p "$dir"
  (cd "$dir" && timeout -k 10 180 "$bsprun" "$@" >"$dir/out" 2>&1; echo "$?" >"$dir/status") &
  local job=$! spec at rank pid
  for spec in $kills; do
    at=${spec%%:*} rank=${spec#*:}
    wait_for_checkpoint "$at" "$dir/out"
    pid=$(pid_of_rank ckpt_counter "$rank")
    [ -n "$pid" ] && kill -"${signal:-KILL}" "$pid"
  done
  wait "$job"
  tr -d '\0' <"$dir/out" >"$dir/text"
  status=$(cat "$dir/status")
  text=$dir/text
}
run_bsprun bsprun_in_place "10:2" -p 4 --spares 1 --restarts 2 -v "$counter" 300 10 slow 10
expect_recovered bsprun_in_place "$ref_counter" 1
grep -q "in place" <(grep '^bsprun' "$text") || fail "bsprun_in_place: -v does not say the recovery took the in-place path"
# A process stopped (SIGSTOP): bsprun finds it at --host-timeout, kills it, and the job recovers in
# place.
signal=STOP run_bsprun bsprun_stopped "10:2" -p 4 --spares 1 --restarts 2 --host-timeout 2 -v "$counter" 300 10 slow 10
expect_recovered bsprun_stopped "$ref_counter" 1
grep -q "stopped for --host-timeout: ended, for recovery in place" "$text" ||
  fail "bsprun_stopped: bsprun did not say it ended the stopped process"
run_bsprun bsprun_zero_lost "10:0" -p 4 --spares 1 --restarts 2 -v "$counter" 300 10 slow 10
[ "$status" = 0 ] || fail "bsprun_zero_lost: exit status $status (want 0 after a restart)"
grep -q "^$ref_counter\$" "$text" || fail "bsprun_zero_lost: wrong or no answer"
grep -q "no recovery in place: process 0 runs main's sequential part" "$text" ||
  fail "bsprun_zero_lost: the library's line did not pass through"
grep -q "^bsprun: restart 1 of 2" "$text" || fail "bsprun_zero_lost: no restart said"
left_over bsprun_zero_lost
[ "$failures" = 0 ] || { echo "--- bsprun output:"; grep -v '^checkpoint' "$text" | tail -30; }

if [ "$failures" = 0 ]; then echo "PASS: recovery in place, 13 scenarios"; else exit 1; fi
