#!/usr/bin/env bash
# slurm_e2e.sh SCENARIO - bsprun inside a Slurm allocation, on an emulated Slurm cluster
# (emuslurm.sh: slurmctld, munged and one slurmd per emulated node, each node with its own
# hostname, load, network and node-local /tmp-like storage (Slurm's TmpFS)).
# No ssh may be used on this path: `ssh` on PATH is a program that records its use and fails,
# and the nodes' sshd logs must show no login.
#   placement   salloc -N 4: the least-loaded nodes are chosen (through srun), the job's answer
#               is right; --dry-run prints the RSL; --hostfile inside the allocation says ssh
#   restart     salloc --no-kill, a spare node drained and a node killed mid-run, --restarts 2:
#               the job finishes on the allocation's other spare node from its last checkpoint,
#               with the right answer
#   in_place    salloc -N 4, bsprun -p 3 --spares 1: a process of the job killed mid-run is
#               recovered in place by the spare on the fourth node where the MPI can (Open MPI 5
#               with ULFM), else the job restarts; the answer is right either way, and nothing
#               is left on any node
#   stopped     the same with process 1 stopped (SIGSTOP) and --host-timeout 4: bsprun finds it
#               through srun; with Open MPI 5 it ends it and the spare takes its place in place,
#               elsewhere the job restarts without its node; the answer is right either way
#   frozen      the same with pid 1's whole node frozen (its slurmd, daemon and process SIGSTOPped)
#               and Slurm's own node timeout at 300 s: bsprun finds it silent through srun at
#               --host-timeout 4; with Open MPI 5 its process is named lost to the others and the
#               spare takes its place in place, elsewhere the job restarts without the node; the
#               answer is right either way, and once thawed nothing is left
#   node_killed the same with pid 1's node killed (its slurmd, daemon and process at once): with
#               Open MPI 5 bsprun's srun relay holds that daemon's connection to mpirun open, and
#               the spare takes its place in place; elsewhere the job restarts without the node
#   scancel     an sbatch job running bsprun is cancelled: nothing of it is left on any node
#   sbatch      hostfiles/slurm-job.sbatch (restarts, a checkpointing program) runs as a batch job
#   controls    a failing program's exit status, -x, --time-limit and SIGINT, as on the other paths
#   salloc_end  salloc's allocation ends at its time limit, or by scancel: the reason, 75 and
#               the --resume command, which finishes the job
#   profile     --profile DIR on the nodes' own storage: the records come back through srun
#   time_limit  Slurm's signal before the time limit: bsprun stops the job and prints the --resume
#               command, which finishes it in a new allocation with the right answer
# Environment: BSPRUN, EMUHOSTS, EMUSLURM, CKPT_JOB, HELLO, SBATCH_EXAMPLE; ULFM=1 where the MPI
# recovers in place. Sealed, skipped without root, Slurm or munge.
set -u
scenario=${1:?scenario}
: "${EMUSLURM:?}" "${CKPT_JOB:?}" "${HELLO:?}"
export EMU_NETNS=1  # emuslurm.sh's nodes always have networks of their own
# shellcheck source=e2e_lib.sh
. "$(dirname "$0")/e2e_lib.sh"
for tool in slurmctld slurmd munged salloc; do
  command -v "$tool" >/dev/null || [ -x "/usr/sbin/$tool" ] || { echo "SKIP: no $tool (Slurm, munge)"; exit 77; }
done
if [ "$scenario" = placement ]; then  # with accounting: sacct
  for tool in slurmdbd mariadbd; do
    command -v "$tool" >/dev/null || [ -x "/usr/sbin/$tool" ] ||
      { echo "SKIP: no $tool (Debian's slurmdbd, mariadb-server: ./bspg.sh test installs them)"; exit 77; }
  done
fi
cleanup() {
  "$EMUSLURM" stop "$dir" >/dev/null 2>&1
  rm -rf "$dir"
}

# ssh must not be used: any use is recorded in $dir/ssh-used.
mkdir -p "$dir/nossh"
printf '#!/bin/sh\necho "$0 $*" >> %s/ssh-used\nexit 255\n' "$dir" >"$dir/nossh/ssh"
chmod +x "$dir/nossh/ssh"
export PATH="$dir/nossh:$PATH"
no_ssh_used() {
  [ ! -s "$dir/ssh-used" ] || fail "ssh was run: $(head -3 "$dir/ssh-used")"
  if grep -hs "Accepted" "$dir"/emu*/sshd.log | head -3 | grep -q .; then
    fail "a node's sshd accepted a login: $(grep -hs Accepted "$dir"/emu*/sshd.log | head -1)"
  fi
}

start_cluster() {
  "$EMUSLURM" start "$dir" "$@" >"$dir/emuslurm.out" 2>&1 ||
    { cat "$dir/emuslurm.out"; echo "FAIL: emuslurm.sh start failed"; exit 1; }
  # shellcheck disable=SC1091
  . "$dir/slurm.env"
}

# wait_gone JOB SECONDS: until Slurm no longer lists the job (status 1 if it still does then).
wait_gone() {
  local t
  for ((t = 0; t < $2 * 5; t++)); do
    [ -z "$(squeue --noheader --jobs="$1" 2>/dev/null)" ] && return 0
    sleep 0.2
  done
  return 1
}

tag=slurm-e2e-$$  # on every process's command line (job_processes)

case "$scenario" in
  placement)
    # With accounting (slurmdbd and its database), as a cluster's users have it.
    EMU_SLURM_ACCOUNTING=1 start_cluster 0.5 3 0.2 1
    wrap=(salloc --quiet -N 4 --exclusive)
    run_bsprun -p 4 "$HELLO"
    expect_status 0
    expect_match "$err" "^bsprun: inside Slurm job [0-9]+: probing its 4 nodes through srun"
    expect_match "$err" "^emu2 .* 0 \\(not needed: less free capacity"
    expect_match "$err" "^emu3 .* 2 \\(subjob 0, site emu\\)"
    expect_count "$out" "^hello from process [0-3] of 4$" 4
    expect_match "$out" "collected pids summing to 6 \\(expected 6\\)"
    # Slurm accounts for the run: sacct lists the probe's step on every node, and the run's step
    # on the three chosen nodes alone (slurmctld sends the records to slurmdbd in the background).
    job=$(sed -n 's/^bsprun: inside Slurm job \([0-9]*\):.*/\1/p' "$err" | head -n 1)
    sacct_out=$dir/sacct.out
    for ((t = 0; t < 75; t++)); do
      sacct -j "${job:-0}" -n -P --format=JobID,JobName,State,NodeList >"$sacct_out" 2>&1
      grep -q "|COMPLETED|emu\[1,3-4\]$" "$sacct_out" && break
      sleep 0.2
    done
    echo "---- sacct -j $job"
    sed 's/^/    | /' "$sacct_out"
    expect_match "$sacct_out" "^$job\\.[0-9]+\\|bsprun-probe\\|COMPLETED\\|emu\\[1-4\\]$"
    expect_count "$sacct_out" "^$job\\.[0-9]+\\|[^|]+\\|COMPLETED\\|emu\\[1,3-4\\]$" 1
    run_bsprun -p 3 --dry-run "$HELLO"
    expect_status 0
    expect_match "$out" '^ +\(hosts=\("emu[134]:1" "emu[134]:1" "emu[134]:1"\)\)$'
    expect_count "$out" '"emu2:' 0
    # A program that exists here but not on the nodes (their TmpFS is their own): one line
    # naming a node, exit 127, nothing started.
    cp "$HELLO" "$dir/nodetmp/hello-here-only"
    run_bsprun -p 2 "$dir/nodetmp/hello-here-only"
    expect_status 127
    expect_match "$err" "^bsprun: .*emu[1-4].*not found"
    expect_count "$out" "^hello from" 0
    # An allocation written with --rsl-out runs again with --rsl (no probe), on its nodes; one
    # that names a node outside the allocation, or more processes than its CPUs, is refused.
    run_bsprun -p 3 --rsl-out "$dir/three.rsl" --dry-run "$HELLO"
    expect_status 0
    run_bsprun --rsl "$dir/three.rsl"
    expect_status 0
    expect_match "$err" "^bsprun: inside Slurm job [0-9]+: running $dir/three.rsl: 3 processes in 1 subjob \\(no probe; no ssh\\)$"
    expect_count "$err" "^HOST " 0
    expect_count "$out" "^hello from process [0-2] of 3$" 3
    sed 's/"emu1:1"/"emu9:1"/' "$dir/three.rsl" >"$dir/outside.rsl"
    run_bsprun --rsl "$dir/outside.rsl"
    expect_status 125
    expect_match "$err" "^bsprun: .*host 'emu9' .* is not a node of Slurm job [0-9]+$"
    sed 's/"emu1:1"/"emu1:5"/; s/count=3/count=7/' "$dir/three.rsl" >"$dir/crowded.rsl"
    run_bsprun --rsl "$dir/crowded.rsl"
    expect_status 125
    expect_match "$err" "^bsprun: .*5 processes on emu1, but Slurm job [0-9]+ has 2 CPUs there$"
    expect_count "$out" "^hello from" 0
    # Master mode: the starter puts the master on the first chosen node in Slurm's order (emu1),
    # so that is the master's slot; bsp_begin(3) spawns the others onto the next least-loaded
    # slots of the same step.
    run_bsprun --max-procs 4 --dry-run "$MASTER_JOB" init 3 --available 4
    expect_status 0
    expect_match "$err" "master mode: the master starts on emu1; .* first P of these 4 slots: emu1 emu3 emu4 emu3$"
    expect_match "$out" '\(count=1\)'
    expect_match "$out" '"?BSPG_MASTER_SLOTS"? "emu1/0,emu3/0,emu4/0,emu3/0"'
    run_bsprun --max-procs 4 "$MASTER_JOB" init 3 --available 4
    if [ "${GRID_MASTER:-1}" = 0 ]; then
      expect_status 125  # Open MPI 5: refused before anything starts (mpi_openmpi.cpp)
      expect_match "$err" "^bsprun: master mode inside a Slurm allocation is not available with "
      expect_count "$err" "^HOST " 0
    elif [ "${SPAWNS:-1}" = 0 ]; then
      expect_status nonzero  # Debian's MPICH fails every spawn: the library says so, as elsewhere
      expect_match "$err" "bsp_begin: could not start 2 more processes of .*MPI_Comm_spawn failed"
    else
      expect_status 0
      expect_count "$out" "^pid 0 of 3 on emu1 subjob 0$" 1
      expect_count "$out" "^pid [12] of 3 on emu3 subjob 0$" 1
      expect_count "$out" "^pid [12] of 3 on emu4 subjob 0$" 1
      expect_count "$out" "^used 3 of 4$" 1
      expect_count "$out" "^PASS master_job$" 1
    fi
    no_ssh_used
    # With --hostfile inside an allocation bsprun says it takes the SSH path.
    wrap=(salloc --quiet -N 1)
    run_bsprun -p 2 --hostfile /nonexistent.yaml "$HELLO"
    expect_match "$err" "^bsprun: inside Slurm job [0-9]+, but --hostfile was given: .* over ssh$"
    ;;
  restart)
    steps=40 every=4
    want=$(reference 3)
    [ -n "$want" ] || fail "no reference answer"
    # Five nodes of one CPU for three processes: two spares. Mid-run one spare is drained and a
    # node of the job dies: the restart leaves out both, and runs on the other spare.
    EMU_SLOTS=1 start_cluster 0 0 0 0 0
    out=$dir/out err=$dir/err
    echo "---- salloc --no-kill -N 5 bsprun -p 3 --restarts 2 (in the background)"
    setsid salloc --quiet --no-kill -N 5 "$BSPRUN" -p 3 --restarts 2 "$CKPT_JOB" "$steps" "$every" --ms 100 "$tag" \
      >"$out" 2>"$err" </dev/null &
    pid=$!
    group=$pid
    wait_for "$out" "^checkpoint 2 at step" 60
    victim=$(grep -Eo "^pid 1 of 3 on emu[0-9]" "$out" | grep -Eo "[0-9]$")
    drained=
    for i in 1 2 3 4 5; do
      grep -Eq "^pid [0-2] of 3 on emu$i$" "$out" || { drained=$i; break; }
    done
    [ -n "$victim" ] && [ -n "$drained" ] || fail "no victim or spare found in the job's output"
    echo "---- node emu${drained:-?} is drained (scontrol), node emu${victim:-?} dies"
    scontrol update NodeName="emu$drained" State=DRAIN Reason=bspg-test ||
      fail "scontrol could not drain emu$drained"
    "$EMUSLURM" down "$dir" "$victim" >/dev/null
    wait_job 150
    kill -KILL -- "-$group" 2>/dev/null  # what a failed wait left
    show
    expect_status 0
    expect_match "$err" "^bsprun: restart 1 of 2: from checkpoint [0-9]+ on "
    # The node lost is named (MPICH's Hydra says only that a proxy hung up: bsprun asks the
    # nodes through srun), and nothing claims that the job could not start.
    expect_match "$err" "^bsprun: lost emu$victim: "
    expect_count "$err" "could not start" 0
    expect_match "$err" "^bsprun: leaving out emu$drained \\(Slurm reports it drain"
    expect_count "$out" "^pid [0-2] of 3 on emu$drained$" 0
    expect_count "$out" "^$want$" 1
    expect_nothing_left 5 15
    no_ssh_used
    ;;
  in_place | stopped)
    steps=40 every=4
    want=$(reference 3)
    [ -n "$want" ] || fail "no reference answer"
    EMU_SLOTS=1 start_cluster 0 0 0 0
    out=$dir/out err=$dir/err
    timeout_option=()
    [ "$scenario" = stopped ] && timeout_option=(--host-timeout 4)
    echo "---- salloc -N 4 bsprun -p 3 -v --spares 1 --restarts 2 ${timeout_option[*]} (in the background)"
    setsid salloc --quiet --no-kill -N 4 "$BSPRUN" -p 3 -v --spares 1 --restarts 2 "${timeout_option[@]}" \
      "$CKPT_JOB" "$steps" "$every" --ms 100 "$tag" >"$out" 2>"$err" </dev/null &
    pid=$!
    group=$pid
    wait_for "$out" "^checkpoint 2 at step" 60
    node=$(tr -d '\0' <"$out" | grep -Eo "^pid 1 of 3 on emu[0-9]" | grep -Eo "[0-9]$")
    victim=$(process_on "${node:-0}")
    [ -n "$victim" ] || fail "no process of pid 1 found on emu${node:-?}"
    if [ "$scenario" = stopped ]; then
      echo "---- pid 1 (process $victim on emu$node) is stopped"
      kill -STOP "$victim"
    else
      echo "---- pid 1 (process $victim on emu$node) is killed"
      kill -KILL "$victim"
    fi
    wait_job 150
    kill -KILL -- "-$group" 2>/dev/null  # what a failed wait left
    kill -KILL "$victim" 2>/dev/null     # stopped, and not ended: the checks below say so
    show
    expect_status 0
    if [ "${ULFM:-0}" = 1 ]; then
      [ "$scenario" = stopped ] &&
        expect_match "$err" "^bsprun: process 1 on emu$node \(process id $victim\) stopped for --host-timeout: ended, for recovery in place$"
      expect_match "$err" "^bspg: recovered in place from checkpoint [0-9]+: process 1 \(host emu$node, process id [0-9]+\) lost, a spare on emu[0-9] took its place, in [0-9.]+ s$"
      expect_count "$err" "^bsprun: restart " 0
    else
      [ "$scenario" = stopped ] &&
        expect_match "$err" "^bsprun: lost process 1 on emu$node: stopped \(SIGSTOP\) for [0-9.]+ s, noticed through srun"
      expect_match "$err" "^bsprun: restart 1 of 2: from checkpoint [0-9]+ on "
    fi
    expect_count "$out" "^$want$" 1
    expect_nothing_left 4 15
    no_ssh_used
    ;;
  frozen | node_killed)
    # A whole node frozen (its slurmd, the MPI's daemon and the job's process there SIGSTOPped),
    # with Slurm's own watch far off (SlurmdTimeout 300 s): bsprun finds the node silent through
    # srun at --host-timeout.
    steps=40 every=4
    want=$(reference 3)
    [ -n "$want" ] || fail "no reference answer"
    EMU_SLOTS=1 EMU_SLURMD_TIMEOUT=300 start_cluster 0 0 0 0
    out=$dir/out err=$dir/err
    echo "---- salloc -N 4 bsprun -p 3 -v --spares 1 --restarts 2 --host-timeout 4 (in the background)"
    setsid salloc --quiet --no-kill -N 4 "$BSPRUN" -p 3 -v --spares 1 --restarts 2 --host-timeout 4 \
      "$CKPT_JOB" "$steps" "$every" --ms 100 "$tag" >"$out" 2>"$err" </dev/null &
    pid=$!
    group=$pid
    wait_for "$out" "^checkpoint 2 at step" 60
    node=$(tr -d '\0' <"$out" | grep -Eo "^pid 1 of 3 on emu[0-9]" | grep -Eo "[0-9]$")
    [ -n "$node" ] || fail "no node of pid 1 found in the job's output"
    lost_at=$(date +%s.%N)
    if [ "$scenario" = node_killed ]; then
      echo "---- node emu$node (pid 1's) is killed"
      "$EMUSLURM" down "$dir" "${node:-0}"
    else
      echo "---- node emu$node (pid 1's) is frozen"
      "$EMUSLURM" freeze "$dir" "${node:-0}"
      wait_for "$err" "(does not answer|no answer) through srun" 60
      echo "frozen to bsprun's line: $(awk -v a="$lost_at" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }') s"
    fi
    wait_job 150
    kill -KILL -- "-$group" 2>/dev/null  # what a failed wait left
    show
    # A process killed mid-write may leave NUL bytes in the output (grep would call it binary).
    tr -d '\0' <"$out" >"$out.text"
    expect_status 0
    if [ "$scenario" = node_killed ]; then
      if [ "${ULFM:-0}" = 1 ]; then
        # bsprun's srun relay holds the daemon's connection to mpirun open, and says so.
        expect_match "$err" "^bsprun: the MPI daemon on emu$node is gone, and its host does not answer Slurm's slurmd: its processes are lost"
        expect_match "$err" "^bsprun: emu$node is gone with its MPI daemon: process 1 there named lost to the job's other processes, for recovery in place$"
        if grep -q "^bspg: .*no recovery in place" "$err"; then
          # Open MPI 5.0.7 now and then reports a living process lost with the node's (seen
          # once in six runs, process 0): the library says why not in place, and the job
          # restarts from the checkpoint, with the same answer.
          echo "(the MPI reported another process lost too: no recovery in place, a restart)"
          expect_count "$err" "^bsprun: restart [0-9] of 2: from checkpoint [0-9]+ on " 1
        else
          expect_match "$err" "^bspg: recovered in place from checkpoint [0-9]+: process 1 \(host emu$node, process id [0-9]+\) lost, a spare on emu[0-9] took its place, in [0-9.]+ s$"
          expect_count "$err" "^bsprun: restart " 0
        fi
      else
        expect_match "$err" "^bsprun: restart 1 of 2: from checkpoint [0-9]+ on "
      fi
    elif [ "${ULFM:-0}" = 1 ]; then
      expect_match "$err" "^bsprun: emu$node does not answer through srun for --host-timeout: process 1 there named lost to the job's other processes, for recovery in place$"
      expect_match "$err" "^bspg: recovered in place from checkpoint [0-9]+: process 1 \(host emu$node, process id [0-9]+\) lost, a spare on emu[0-9] took its place, in [0-9.]+ s$"
      expect_count "$err" "^bsprun: restart " 0
    else
      expect_match "$err" "^bsprun: lost emu$node: no answer through srun for [0-9.]+ s \(--host-timeout\), noticed by bsprun; stopping the job$"
      expect_match "$err" "^bsprun: restart 1 of 2: from checkpoint [0-9]+ on "
      # The restart runs without the frozen node.
      expect_count "$out.text" "^pid [0-2] of 3 on emu$node$" 1
    fi
    expect_count "$out.text" "^$want$" 1
    resumed=$(grep '^resumed from checkpoint' "$out.text" | tail -n 1 | sed -n 's/.* at \([0-9.]*\))$/\1/p')
    [ -n "$resumed" ] &&
      echo "lost to resumed: $(awk -v a="$lost_at" -v b="$resumed" 'BEGIN { printf "%.3f", b - a }') s"
    # Thawed, what was left on the node finds its job gone (Slurm ends the step's processes).
    if [ "$scenario" = frozen ]; then "$EMUSLURM" thaw "$dir" "${node:-0}"; fi
    expect_nothing_left 4 30
    no_ssh_used
    ;;
  scancel)
    start_cluster 0 0
    out=$dir/out err=$dir/err
    printf '#!/bin/sh\nexec %q -p 4 %q 100000 1000 --ms 100 %q\n' "$BSPRUN" "$CKPT_JOB" "$tag" >"$dir/job.sh"
    job=$(sbatch --parsable -N 2 --exclusive --output="$out" --error="$err" "$dir/job.sh") ||
      fail "sbatch failed"
    pid=$$  # wait_for polls while this shell lives
    wait_for "$out" "^pid 3 of 4 on emu" 60
    [ "$(job_processes 1)" -gt 0 ] && [ "$(job_processes 2)" -gt 0 ] ||
      fail "the job does not run on both nodes"
    echo "---- scancel $job"
    scancel "$job"
    expect_nothing_left 2 15
    wait_gone "$job" 20 || fail "job $job still in squeue"
    show
    no_ssh_used
    ;;
  sbatch)
    : "${SBATCH_EXAMPLE:?}"
    steps=24 every=4
    want=$(reference 4)
    EMU_SLOTS=1 start_cluster 0 0 0 0 0
    out=$dir/out
    job=$(BSPRUN_DIR=$(dirname "$BSPRUN") PROGRAM="$CKPT_JOB" PROGRAM_ARGS="$steps $every --ms 50 $tag" \
      sbatch --parsable --export=ALL --output="$out" "$SBATCH_EXAMPLE") || fail "sbatch failed"
    wait_gone "$job" 120
    sed 's/^/    | /' "$out"
    expect_count "$out" "^$want$" 1
    expect_match "$out" "^bsprun: inside Slurm job $job: probing its 5 nodes through srun"
    expect_nothing_left 5 15
    no_ssh_used
    ;;
  time_limit)
    # Slurm's signal before the time limit (the example's --signal=B:TERM@120, sent here at once
    # with scancel --batch --signal=TERM): bsprun stops the job and prints the command that
    # continues it, which finishes it in a new allocation of the same nodes with the right answer.
    : "${SBATCH_EXAMPLE:?}"
    steps=40 every=4
    want=$(reference 2)
    EMU_SLOTS=1 start_cluster 0 0 0
    out=$dir/out
    job=$(BSPRUN_DIR=$(dirname "$BSPRUN") PROGRAM="$CKPT_JOB" PROGRAM_ARGS="$steps $every --ms 100 $tag" P=2 \
      sbatch --parsable --export=ALL -N 3 --output="$out" "$SBATCH_EXAMPLE") || fail "sbatch failed"
    pid=$$
    wait_for "$out" "^checkpoint 2 at step" 60
    scancel --batch --signal=TERM "$job"
    wait_gone "$job" 60
    sed 's/^/    | /' "$out"
    expect_count "$out" "^$want$" 0
    expect_match "$out" "^bsprun: to continue the job from its last checkpoint: bsprun --resume -p 2 --restarts 3 --job-id slurm-$job "
    expect_nothing_left 3 15
    resume=$(grep -aEo -- "--resume -p 2 --restarts 3 --job-id slurm-$job .*" "$out" | head -1)
    # shellcheck disable=SC2086  # the command bsprun printed, as a user pastes it
    wrap=(salloc --quiet -N 3)
    run_bsprun $resume
    expect_status 0
    expect_match "$out" "^resumed from checkpoint [0-9]+ at step"
    expect_count "$out" "^$want$" 1
    no_ssh_used
    ;;
  salloc_end)
    # The allocation ends under the job: by scancel (salloc runs bsprun outside the allocation
    # and does not signal it), and at its time limit, through salloc and through sbatch (whose
    # bsprun gets SIGTERM, without --signal). bsprun names the reason, blames no node, and as a
    # whole checkpoint was written ends with 75 and the --resume command, which finishes the job
    # in a new allocation of the same nodes; no exit note is left on the nodes or here.
    # Slurm looks at time limits every 30 s: the jobs compute for 105 s, ended after 60 to 95.
    steps=700 every=4
    want=$(reference 2)
    EMU_SLOTS=1 start_cluster 0 0 0 0 0 0
    # The nodes share this home, as clusters' nodes do; one of the test's own.
    export HOME=$dir/home
    mkdir -p "$HOME"
    args=(-p 2 --restarts 2 "$CKPT_JOB" "$steps" "$every" --ms 150 "$tag")
    in_salloc() {  # in_salloc NAME [SALLOC OPTIONS]: bsprun in the background, job id in $job
      local name=$1
      shift
      setsid salloc --no-kill "$@" -N 3 sh -c '"$0" "$@"; echo "bsprun exit status $?" >&2' \
        "$BSPRUN" --job-id "end-$name" "${args[@]}" >"$dir/out.$name" 2>"$dir/err.$name" </dev/null &
    }
    ended_as() {  # ended_as NAME FILE REASON: what bsprun said and its status
      expect_match "$2" "^bsprun: Slurm job [0-9]+ $3, and the job with it; checkpoint [0-9]+ is whole"
      expect_match "$2" "^bsprun exit status 75$"
      expect_count "$2" "failed|no candidate|no whole checkpoint|restart 1 of|Slurm process starter" 0
      expect_match "$2" "^bsprun: to continue the job from its last checkpoint: bsprun --resume --job-id end-$1 -p 2 --restarts 2 "
    }
    in_salloc scancel
    pid=$!
    out=$dir/out.scancel err=$dir/err.scancel
    wait_for "$out" "^checkpoint 2 at step" 60
    job=$(grep -aEo "Granted job allocation [0-9]+" "$err" | grep -Eo "[0-9]+$" | head -n 1)
    scancel "${job:-0}"
    wait_job 60
    show
    ended_as scancel "$err" "was cancelled"
    wait_gone "$job" 60 || fail "job $job still in squeue"

    echo "---- salloc -t 1 and sbatch -t 1, at once"
    in_salloc salloc_limit -t 1
    pid=$!
    # The batch script waits for bsprun through the SIGTERM it gets too.
    printf '#!/bin/sh\ntrap "echo batch script: SIGTERM" TERM\n%q --job-id end-sbatch_limit' "$BSPRUN" >"$dir/limit.sh"
    printf ' %q' "${args[@]}" >>"$dir/limit.sh"
    printf ' &\nb=$!\nwait $b; s=$?\nwhile kill -0 $b 2>/dev/null; do wait $b; s=$?; done\necho "bsprun exit status $s"\n' >>"$dir/limit.sh"
    batch=$(sbatch --parsable --no-kill -t 1 -N 3 --output="$dir/out.sbatch" "$dir/limit.sh") ||
      fail "sbatch failed"
    out=$dir/out.salloc_limit err=$dir/err.salloc_limit
    wait_job 150
    show
    ended_as salloc_limit "$err" "reached its time limit"
    wait_gone "$batch" 60 || fail "job $batch still in squeue"
    sed 's/^/    | /' "$dir/out.sbatch"
    ended_as sbatch_limit "$dir/out.sbatch" "reached its time limit"
    expect_nothing_left 6 15
    left=$(find "$HOME/.cache/bspg/exits" "$dir/nodetmp" -path '*exits*' 2>/dev/null | head -n 3)
    [ -z "$left" ] || fail "exit notes left behind: $left"

    # One of them, resumed as printed in an allocation of every node (which three it had is
    # Slurm's choice), finishes with the right answer.
    resume=$(grep -aEo -- "--resume --job-id end-salloc_limit .*" "$err" | head -1)
    out=$dir/out err=$dir/err
    wrap=(salloc --quiet -N 6)
    # shellcheck disable=SC2086  # the command bsprun printed, as a user pastes it
    run_bsprun $resume
    expect_status 0
    expect_match "$out" "^resumed from checkpoint [0-9]+ at step"
    expect_count "$out" "^$want$" 1
    no_ssh_used
    ;;
  profile)
    # --profile DIR on node-local storage (each node's TmpFS is its own): the records each node's
    # processes wrote there come back through srun, and the profile is whole.
    : "${KNOWN:?}" "${CHECK_KNOWN:?}"
    start_cluster 0.1 0.1
    wrap=(salloc --quiet -N 2 --exclusive)
    run_bsprun -p 4 --profile "$dir/nodetmp/prof" "$KNOWN"
    expect_status 0
    expect_match "$out" "^PASS known_supersteps$"
    expect_match "$err" "^written: .*/nodetmp/prof/supersteps\\.csv"
    "$CHECK_KNOWN" "$dir/nodetmp/prof" 4 >"$dir/check" 2>&1 || fail "$(cat "$dir/check")"
    no_ssh_used
    ;;

  guide)
    # The user guide's Slurm examples (docs/slurm.md) inside allocations of a 4-node cluster of
    # 2 CPUs a node (-p 8 fills it): each places and shows what it would start, through Slurm.
    : "${WHERE:?}"
    start_cluster 0 0 0 0
    guide_examples slurm "$WHERE"
    no_ssh_used
    ;;
  controls)
    # What a user controls behaves as on the other paths: a failing program's exit status, -x,
    # --time-limit, and Ctrl-C (SIGINT to bsprun), with nothing of the job left on the nodes. The
    # environment travels as Slurm carries it (srun's --export=ALL), all of it, -x on top.
    : "${WHERE:?}"
    # Each node has a CPU more than this machine's cores, so that a full node runs more
    # processes than cores (the nodes are this machine).
    cores=$(lscpu -p=socket,core | grep -v '^#' | sort -u | wc -l)
    EMU_SLOTS=$((cores + 1)) start_cluster 0 0
    wrap=(salloc --quiet -N 2 --exclusive)
    run_bsprun -p 4 "$WHERE" --exit 3
    expect_status 3
    expect_count "$out" "^rank [0-3] " 4
    # --show: the starter's command line through Slurm, and nothing started.
    run_bsprun --show -p 4 "$WHERE" --exit 3
    expect_status 0
    expect_count "$out" "^rank " 0
    expect_count "$out" "$WHERE --exit 3\$" 1
    # Full nodes: more processes than cores, said once (as on the other paths), unless --quiet.
    full=$((2 * (cores + 1)))
    run_bsprun --show -p "$full" "$WHERE"
    expect_status 0
    expect_count "$err" "^bsprun: more processes than cores on emu[12] [(]$((cores + 1)) on $cores cores?[)], emu[12] [(]$((cores + 1)) on $cores cores?[)]: they take turns" 1
    run_bsprun --show --quiet -p "$full" "$WHERE"
    expect_status 0
    expect_count "$err" "take turns" 0
    wrap=(env BSPG_FROM_HERE=1 salloc --quiet -N 2 --exclusive)
    run_bsprun -p 2 -x BSPG_TEST_X=7 "$WHERE" --env BSPG_TEST_X --env BSPG_FROM_HERE
    expect_status 0
    expect_count "$out" "^rank [01] env BSPG_TEST_X=7$" 2
    expect_count "$out" "^rank [01] env BSPG_FROM_HERE=1$" 2
    wrap=(salloc --quiet -N 2 --exclusive)
    run_bsprun -p 4 --time-limit 3 "$WHERE" --sleep 60 "$tag"
    expect_status 124
    expect_match "$err" "time limit"
    expect_nothing_left 2 15
    out=$dir/out err=$dir/err
    echo "---- salloc -N 2 --exclusive bsprun -p 4 (in the background), then SIGINT to bsprun"
    # (bsprun ends by the signal, as a shell then reports it; salloc would say 0 of it)
    # shellcheck disable=SC2016  # a script for sh, with its arguments
    setsid salloc --quiet -N 2 --exclusive sh -c '"$0" "$@"; echo "bsprun exit status $?" >&2' \
      "$BSPRUN" -p 4 "$WHERE" --sleep 60 "$tag" >"$out" 2>"$err" </dev/null &
    pid=$!
    group=$pid
    for ((t = 0; t < 150 && $(job_processes 1) + $(job_processes 2) < 4; t++)); do sleep 0.2; done
    [ "$(job_processes 1)" -ge 1 ] && [ "$(job_processes 2)" -ge 1 ] &&
      [ $(($(job_processes 1) + $(job_processes 2))) -eq 4 ] ||
      fail "the job's 4 processes did not start on both nodes"
    bsprun_pid=$(pgrep -s "$group" -x bsprun | head -n 1)
    [ -n "$bsprun_pid" ] && kill -INT "$bsprun_pid"
    wait_job 30
    kill -KILL -- "-$group" 2>/dev/null  # what a failed wait left
    show
    expect_match "$err" "^bsprun exit status 130$"
    expect_nothing_left 2 15
    no_ssh_used
    ;;
  *)
    echo "unknown scenario $scenario" >&2
    exit 2
    ;;
esac
finish
