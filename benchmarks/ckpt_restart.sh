#!/usr/bin/env bash
# ckpt_restart.sh [BUILD_DIR] - what checkpoints and restarts cost, at p = 4 on emulated hosts
# (two hosts of two processes each; tests/launcher/emuhosts.sh), with ckpt_job (tests/launcher).
#
# 1. Checkpoint cost: the median time of bspg_checkpoint (as process 0 sees it, checkpoints 2 and
#    later of each run) for SIZES MiB persisted per process, with the checkpoint directory on
#    this machine's disk (CKPT_DIR), next to the limit measured with plain tools: the time for the
#    4 processes to write the same bytes (their shard and the copy each keeps, 2 x SIZE MiB each)
#    with `dd conv=fsync`, all at once, plus the time to send SIZE MiB each to the buddy on the
#    other host with plain MPI (buddy_transfer), all at once. Target: within 1.5x of the limit.
# 2. Restart time, from the loss to the job running again, for RESTART_SIZES MiB per process on
#    three hosts with private checkpoint directories (the third a spare): a host killed
#    (`emuhosts.sh crash`: sshd and every process), and a host frozen (SIGSTOP) with
#    --host-timeout HOST_TIMEOUT. Split into detection (from the moment every process of the host
#    is dead or stopped to bsprun's "lost" line), stopping
#    what is left, probing, finding the checkpoint (every host lists and checks its shards),
#    copying the shards over, starting (bsprun's "restart" line to bspg_resume's start) and
#    reading the shards (bspg_resume).
# Medians of REPEAT runs. Needs root, unshare, sshd and a build with tests (./bspg.sh build); runs
# in a network namespace of its own (tests/sealed.sh).
# Environment: SIZES ("1 16 256"), RESTART_SIZES ("1 16 256"), REPEAT (3), HOST_TIMEOUT (5),
# CKPT_DIR (a new directory in /var/tmp), BSPRUN (default BUILD_DIR/bin/bsprun).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=$(cd "${1:-$here/../build}" && pwd)
bsprun=${BSPRUN:-$build/bin/bsprun}
job=$build/tests/launcher/progs/ckpt_job
transfer=$build/benchmarks/buddy_transfer
emuhosts=$here/../tests/launcher/emuhosts.sh
sizes=${SIZES:-1 16 256} restart_sizes=${RESTART_SIZES:-1 16 256} repeat=${REPEAT:-3}
host_timeout=${HOST_TIMEOUT:-5}

die() { echo "ckpt_restart.sh: $*" >&2; exit 1; }
for f in "$bsprun" "$job" "$transfer"; do [ -x "$f" ] || die "no $f (build first: ./bspg.sh build)"; done
[ "$(id -u)" -eq 0 ] || die "needs root (emulated hosts)"
if [ -z "${CKPT_BENCH_NETNS:-}" ]; then
  CKPT_BENCH_NETNS=1 exec "$here/../tests/sealed.sh" "$0" "$build"
fi

work=$(mktemp -d /tmp/bspg-ckpt-bench-XXXXXX)
disk=${CKPT_DIR:-$(mktemp -d /var/tmp/bspg-ckpt-bench-XXXXXX)}
hosts=$work/hosts
cleanup() {
  "$emuhosts" stop "$hosts" >/dev/null 2>&1 || true
  rm -rf "$work" "$disk"
}
trap cleanup EXIT
export TMPDIR=$work OMPI_MCA_oob_tcp_if_include=lo OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_mpi_yield_when_idle=1
export EMU_NO_RC=1
cd "$work"

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
start_hosts() { "$emuhosts" stop "$hosts" >/dev/null 2>&1 || true; "$emuhosts" start "$hosts" "$@" >/dev/null; }

# ---- 1. Checkpoint cost and its limit -----------------------------------------------------------
start_hosts 0.1 0.2
echo "checkpoint cost at p = 4 (2 hosts x 2 processes; disk: $disk), median of $repeat runs"
printf '%8s %14s %10s %12s %10s %8s %8s\n' "MiB/proc" "checkpoint s" "disk s" "network s" "limit s" "ratio" "target"
for mib in $sizes; do
  : >"$work/costs"
  : >"$work/disks"
  : >"$work/nets"
  for ((r = 0; r < repeat; r++)); do
    rm -rf "${disk:?}"/*
    "$bsprun" -p 4 --hostfile "$hosts/hosts.yaml" --checkpoint-dir "$disk/job" "$job" 7 1 --mib "$mib" 2>/dev/null |
      sed -n 's/^checkpoint \([0-9]*\) at step [0-9]* took \([0-9.]*\) s$/\1 \2/p' | awk '$1 >= 2 { print $2 }' >>"$work/costs"
    rm -rf "${disk:?}"/*
    # The limit's disk part: each process's shard and the copy it keeps, all four at once.
    began=$EPOCHREALTIME
    for p in 0 1 2 3; do
      dd if=/dev/zero of="$disk/dd-$p" bs=1M count=$((2 * mib)) conv=fsync status=none &
    done
    wait
    echo "$EPOCHREALTIME - $began" | bc -l >>"$work/disks"
    rm -f "$disk"/dd-*
    # Its network part: SIZE MiB to the buddy on the other host, all four at once.
    "$bsprun" -p 4 --hostfile "$hosts/hosts.yaml" "$transfer" "$mib" 2 2>/dev/null | awk '/^transfer/ { print $2 }' >>"$work/nets"
  done
  cost=$(median <"$work/costs") d=$(median <"$work/disks") n=$(median <"$work/nets")
  awk -v m="$mib" -v c="$cost" -v d="$d" -v n="$n" 'BEGIN {
    limit = d + n; ratio = c / limit
    printf "%8d %14.4f %10.4f %12.4f %10.4f %7.2fx %8s %s\n", m, c, d, n, limit, ratio, "<= 1.5x", ratio <= 1.5 ? "PASS" : "FAIL" }'
done

# ---- 2. Restart time ----------------------------------------------------------------------------
# One restart: a fresh set of three hosts with private checkpoint directories; the job runs on
# emu1 and emu2 (emu3 is busy: the spare), emu2 is lost after checkpoint 2, and bsprun is stopped
# once the job runs again. Prints "detection stopping probing finding copying starting reading total".
restart_once() {
  local how=$1 mib=$2 private=$work/private lost_at resumed
  EMU_PRIVATE_DIRS=$private start_hosts 0.1 0.2 3.5
  : >"$work/out"
  "$bsprun" -v -p 4 --hostfile "$hosts/hosts.yaml" --restarts 1 --host-timeout "$host_timeout" \
    --checkpoint-dir "$private" "$job" 100000 2 --ms 100 --mib "$mib" >"$work/out" \
    2> >(while IFS= read -r line; do printf '%s %s\n' "$EPOCHREALTIME" "$line"; done >"$work/err") &
  local pid=$!
  for _ in $(seq 1 1200); do grep -q '^checkpoint 2 at step' "$work/out" && break; sleep 0.05; done
  # The loss: once every process of emu2 is dead (or stopped).
  if [ "$how" = killed ]; then "$emuhosts" crash "$hosts" 2; else "$emuhosts" freeze "$hosts" 2; fi
  lost_at=$EPOCHREALTIME
  for _ in $(seq 1 2400); do grep -q '^resumed from checkpoint' "$work/out" && break; sleep 0.05; done
  kill -TERM "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  "$emuhosts" thaw "$hosts" 2 >/dev/null 2>&1 || true
  sleep 0.2
  resumed=$(grep '^resumed from checkpoint' "$work/out" || true)
  [ -n "$resumed" ] || { echo "no restart: $(grep bsprun: "$work/err" | tail -n 3)" >&2; return 1; }
  awk -v lost_at="$lost_at" -v resumed="$resumed" '
    / bsprun: lost / && !lost { lost = $1 }
    / bsprun: restart 1 of 1: / { restart = $1 }
    / bsprun: restart timing: / {
      for (i = 1; i <= NF; ++i) {
        if ($i == "job") stopping = $(i + 1)
        if ($i == "probing") probing = $(i + 1)
        if ($i == "checkpoint") finding = $(i + 1)
        if ($i == "shards") copying = $(i + 1)
      }
    }
    END {
      split(resumed, w, /[ (),]+/)  # resumed from checkpoint C at step S (read in T s, at E)
      for (i = 1; i in w; ++i) { if (w[i] == "in") reading = w[i + 1]; if (w[i] == "at") at = w[i + 1] }
      starting = at - reading - restart
      printf "%.3f %.3f %.3f %.3f %.3f %.3f %.3f %.3f\n", lost - lost_at, stopping, probing, finding, copying,
             starting, reading, at - lost_at }' "$work/err"
}

echo
echo "restart time at p = 4 (2 hosts x 2 processes and a spare; private checkpoint directories), seconds, median of $repeat runs"
printf '%-28s %8s %10s %9s %8s %8s %8s %9s %8s %8s\n' "loss" "MiB/proc" "detection" "stopping" "probing" "finding" "copying" \
  "starting" "reading" "total"
for how in killed frozen; do
  for mib in $restart_sizes; do
    : >"$work/restarts"
    for ((r = 0; r < repeat; r++)); do restart_once "$how" "$mib" >>"$work/restarts" || true; done
    label="host killed"
    [ "$how" = frozen ] && label="host frozen (--host-timeout $host_timeout)"
    row=$label
    for column in 1 2 3 4 5 6 7 8; do row="$row $(awk -v c=$column '{ print $c }' "$work/restarts" | median)"; done
    # shellcheck disable=SC2086
    awk -v mib="$mib" -v label="$label" -v row="$row" 'BEGIN {
      n = split(row, v, " "); printf "%-28s %8d", label, mib
      for (i = n - 7; i <= n; ++i) printf " %9.2f", v[i]; printf "\n" }'
  done
done
