#!/usr/bin/env bash
# recovery_in_place.sh [BUILD_DIR] - what losing a process costs at p = 4 with MIB MiB persisted
# per process (ckpt_job, tests/launcher), recovered in place (bsprun --spares 1, Open MPI with its
# fault tolerance) beside the restart path: from the moment of the loss to bspg_resume's return on
# the restored state, when the job's next superstep starts. Medians of repeated runs.
#   On this machine: a process killed, in place and by a restart (REPEAT runs each).
#   On emulated hosts (the grid path: four hosts and a fifth for the spare, each with its own
#   network; tests/recovery/in_place_e2e.sh): a process killed, in place and by a restart, a
#   process stopped at --host-timeout 4, a host killed and a host frozen (GRID_REPEAT runs each);
#   and what an in-memory checkpoint costs there with one and two copies (nothing lost:
#   bspg_checkpoint's median beside its limit on the same hosts, a memcpy plus plain MPI sending
#   as much to each copy's host, benchmarks/buddy_transfer).
#   Needs root, unshare and sshd; says why it skips otherwise.
# Skips (exit 0, one line) where the MPI cannot recover in place.
# Environment: MIB (16), REPEAT (5), GRID_REPEAT (3; 0: no grid runs), EVERY (10: supersteps per
# checkpoint), MS (10: per superstep).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=$(cd "${1:-$here/../build}" && pwd)
bsprun=$build/bin/bsprun job=$build/tests/launcher/progs/ckpt_job
mib=${MIB:-16} repeat=${REPEAT:-5} every=${EVERY:-10} ms=${MS:-10}
for f in "$bsprun" "$job"; do
  [ -x "$f" ] || { echo "recovery_in_place.sh: no $f (build first: ./bspg.sh build)" >&2; exit 1; }
done
if ! grep -q "BSPG_HAVE_ULFM:INTERNAL=1\|BSPG_HAVE_ULFM:.*=1" "$build/CMakeCache.txt" 2>/dev/null; then
  echo "recovery_in_place.sh: skipped: this build's MPI has no fault tolerance (ULFM; Open MPI 5 built with it has)"
  exit 0
fi
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_mpi_yield_when_idle=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# One run: kill world rank 2 once checkpoint 3 is written; prints seconds from the kill to the
# restored state ("resumed ... at E").
one_run() {
  local out=$work/out
  : >"$out"
  (cd "$work" && timeout 300 "$bsprun" -p 4 "$@" "$job" 100000 "$every" --ms "$ms" --mib "$mib" \
     >"$out" 2>&1) &
  local runner=$!
  for _ in $(seq 1200); do grep -q "^checkpoint 3 at step" "$out" && break; sleep 0.05; done
  local pid="" p r
  for p in $(pgrep -f "ckpt_job 100000"); do
    r=$(tr '\0' '\n' </proc/"$p"/environ 2>/dev/null | sed -n 's/^OMPI_COMM_WORLD_RANK=//p')
    [ "$r" = 2 ] && pid=$p
  done
  local killed
  killed=$(date +%s.%N)
  kill -9 "$pid"
  local resumed=""
  for _ in $(seq 1200); do
    resumed=$(sed -n 's/^resumed from checkpoint .* at \([0-9.]*\))$/\1/p' "$out" | head -1)
    [ -n "$resumed" ] && break
    sleep 0.02
  done
  pkill -TERM -f "$bsprun -p 4" 2>/dev/null || true
  wait "$runner" 2>/dev/null || true
  [ -n "$resumed" ] && awk -v a="$killed" -v b="$resumed" 'BEGIN { printf "%.3f\n", b - a }'
}

: >"$work/in_place" ; : >"$work/restart"
for _ in $(seq "$repeat"); do
  one_run --spares 1 --restarts 1 >>"$work/in_place" || true
  one_run --restarts 1 >>"$work/restart" || true
done
in_place=$(median <"$work/in_place") restart=$(median <"$work/restart")
echo "a killed process at p = 4, $mib MiB persisted per process, this machine ($(lscpu | sed -n 's/^Model name: *//p' | head -1)); median of $repeat runs"
printf '%-12s %10s %8s %s\n' path "seconds" runs "values"
printf '%-12s %10s %8s %s\n' in-place "$in_place" "$(wc -l <"$work/in_place")" "$(tr '\n' ' ' <"$work/in_place")"
printf '%-12s %10s %8s %s\n' restart "$restart" "$(wc -l <"$work/restart")" "$(tr '\n' ' ' <"$work/restart")"
awk -v a="$in_place" -v b="$restart" 'BEGIN { if (a > 0) printf "restart / in place: %.1fx; target for in place: <= 0.3 s\n", b / a }'

# ---- The grid path, on emulated hosts ----------------------------------------------------------
grid_repeat=${GRID_REPEAT:-3}
[ "$grid_repeat" -gt 0 ] || exit 0
if [ "$(id -u)" -ne 0 ] || ! command -v unshare >/dev/null || [ ! -x /usr/sbin/sshd ]; then
  echo "grid path: skipped: emulated hosts need root, unshare and /usr/sbin/sshd"
  exit 0
fi
scenarios=(process_killed process_killed_restart frozen host_killed host_frozen)
for scenario in "${scenarios[@]}"; do
  : >"$work/grid_$scenario"
  for _ in $(seq "$grid_repeat"); do
    env -u OMPI_MCA_btl_tcp_if_include BSPRUN=$bsprun CKPT_JOB=$job EMUHOSTS=$here/../tests/launcher/emuhosts.sh \
      SEALED=$here/../tests/sealed.sh EMU_NETNS=1 E2E_MIB=$mib \
      "$here/../tests/recovery/in_place_e2e.sh" "$scenario" >"$work/log" 2>&1 || true
    sed -n 's/^loss to resumed: \([0-9.]*\) s.*/\1/p' "$work/log" >>"$work/grid_$scenario"
  done
done
echo "the grid path: p = 4 on emulated hosts and a fifth for the spare, $mib MiB persisted per process; median of $grid_repeat runs"
printf '%-40s %10s %8s %s\n' loss "seconds" runs "values"
describe() {
  case $1 in
  process_killed) echo "process killed, in place" ;;
  process_killed_restart) echo "process killed, restart" ;;
  frozen) echo "process stopped, --host-timeout 4" ;;
  host_killed) echo "host killed, in place" ;;
  host_frozen) echo "host frozen, --host-timeout 4, in place" ;;
  esac
}
for scenario in "${scenarios[@]}"; do
  printf '%-40s %10s %8s %s\n' "$(describe "$scenario")" "$(median <"$work/grid_$scenario")" \
    "$(wc -l <"$work/grid_$scenario")" "$(tr '\n' ' ' <"$work/grid_$scenario")"
done
echo "targets: process killed <= 0.3 s, stopped <= 4.5 s, host killed <= 1 s, host frozen <= 4.5 s"

echo "an in-memory checkpoint (--spares 1) on the same hosts, $mib MiB per process, one and two copies; one line per run"
for copies in 1 2; do
  for _ in $(seq "$grid_repeat"); do
    env -u OMPI_MCA_btl_tcp_if_include BSPRUN=$bsprun CKPT_JOB=$job EMUHOSTS=$here/../tests/launcher/emuhosts.sh \
      SEALED=$here/../tests/sealed.sh EMU_NETNS=1 E2E_MIB=$mib E2E_COPIES=$copies \
      BUDDY_TRANSFER=$build/benchmarks/buddy_transfer \
      "$here/../tests/recovery/in_place_e2e.sh" checkpoint_cost >"$work/log" 2>&1 || true
    grep -a '^checkpoint in memory' "$work/log" || echo "(failed: $(tail -n 1 "$work/log"))"
  done
done
echo "target: a ratio of at most 1.2 with one copy (the disk copy, written behind the job, not counted)"
