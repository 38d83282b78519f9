#!/bin/bash
# disk_behind.sh SCENARIO BUILD_DIR - with spares (BSPG_SPARES, in-memory copies) a checkpoint's
# disk copy is written behind the job; what a user relies on still holds:
#   durable_at_end  after the job ends, its last checkpoint is whole on disk (every shard, copy and
#                   complete marker under its final name, nothing left .part) and the earlier ones
#                   are gone; the answer is an uninterrupted run's without spares
#   disk_full       the checkpoint directory is a 12 MiB file system and each process persists
#                   8 MiB: the disk copy of checkpoint 1 fails behind the job, and the next
#                   checkpoint ends the job with the one line that names the file and the cause,
#                   status 1 (no earlier checkpoint), within the time limit
#   stop_asked      a stop file (as bsprun --migrate-load writes) while the job runs: the job
#                   stops right after a checkpoint with status 75 and its one line, its processes
#                   leaving together (none taken for lost), that checkpoint whole on disk
# Needs an MPI with ULFM (Open MPI 5 built with it); disk_full needs root and unshare (a mount
# namespace for the small file system) and skips (77) without them.
set -u
scenario=${1:?usage: disk_behind.sh SCENARIO BUILD_DIR}
build=${2:?usage: disk_behind.sh SCENARIO BUILD_DIR}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1
job=$build/tests/launcher/progs/ckpt_job
work=$(mktemp -d /var/tmp/bspg-disk-behind-XXXXXX)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
# run SPARES DIR ARGS...: p = 2 (and the spares) under mpirun, output in $out, status in $status.
run() {
  local spares=$1 dir=$2
  shift 2
  out=$work/out.$spares
  local with=()
  [ "$spares" -gt 0 ] && with=(-x BSPG_SPARES="$spares")
  timeout -k 10 120 mpirun --oversubscribe --mca btl_tcp_if_include lo --with-ft ulfm \
    -np $((2 + spares)) "${with[@]}" -x BSPG_CHECKPOINT_DIR="$dir" "$job" "$@" >"$out" 2>&1
  status=$?
  tr -d '\0' <"$out" >"$out.text"
  out=$out.text
}

case $scenario in
durable_at_end)
  run 0 "$work/plain" 8 2 --mib 4
  want=$(grep '^RESULT' "$out")
  [ "$status" -eq 0 ] || fail "the run without spares: status $status"
  run 1 "$work/ck" 8 2 --mib 4
  [ "$status" -eq 0 ] || fail "status $status"
  got=$(grep '^RESULT' "$out")
  [ -n "$want" ] && [ "$got" = "$want" ] || fail "answer '$got', not the uninterrupted run's '$want'"
  for f in shard-0 shard-1 copy-0 copy-1 complete-0 complete-1; do
    [ -s "$work/ck/c4/$f" ] || fail "c4/$f missing after the job"
  done
  left=$(cd "$work/ck" && find . -name '*.part' -o -name 'c[0-9]*' -type d ! -name c4 | sort)
  [ -z "$left" ] || fail "left in the checkpoint directory: $(echo $left)"
  ;;
disk_full)
  if [ "$(id -u)" -ne 0 ] || ! command -v unshare >/dev/null; then
    echo "SKIP: needs root and unshare"
    exit 77
  fi
  mkdir -p "$work/small"
  out=$work/out
  # One mount namespace for the job: the small file system is seen by this job alone.
  timeout -k 10 150 unshare -m --propagation private sh -c '
    mount -t tmpfs -o size=12m bspg-small "$1" || exit 99
    shift
    exec "$@"' sh "$work/small" \
    mpirun --oversubscribe --mca btl_tcp_if_include lo --with-ft ulfm -np 3 -x BSPG_SPARES=1 \
    -x BSPG_CHECKPOINT_DIR="$work/small/ck" "$job" 8 2 --mib 8 >"$out" 2>&1
  status=$?
  tr -d '\0' <"$out" >"$out.text"
  [ "$status" -ne 99 ] || { echo "SKIP: cannot mount a small file system here"; exit 77; }
  [ "$status" -ne 124 ] && [ "$status" -ne 137 ] || fail "the job hung (status $status)"
  [ "$status" -ne 0 ] || fail "the job ended with status 0"
  grep -Eq "^bspg: checkpoint 1 could not be written on [^:]+: $work/small/ck/c1/[a-z]+-[01](\.part)?: No space left on device; there is no earlier checkpoint$" "$out.text" ||
    fail "no line naming checkpoint 1's file and the full disk"
  [ "$(grep -c '^bspg: checkpoint' "$out.text")" -eq 1 ] || fail "not exactly one line"
  grep '^bspg: checkpoint' "$out.text"
  out=$out.text
  ;;
stop_asked)
  run_id=5e1f0c0ffee0d00d
  mkdir -p "$work/ck"
  timeout -k 10 120 mpirun --oversubscribe --mca btl_tcp_if_include lo --with-ft ulfm -np 3 \
    -x BSPG_SPARES=1 -x BSPG_RUN="$run_id" -x BSPG_CHECKPOINT_DIR="$work/ck" "$job" 200 2 --ms 50 \
    >"$work/out" 2>&1 &
  started=$!
  for _ in $(seq 600); do
    grep -aq "^checkpoint 2 at step" "$work/out" && break
    sleep 0.1
  done
  echo "$run_id" >"$work/ck/stop"
  wait "$started"
  status=$?
  out=$work/out.text
  tr -d '\0' <"$work/out" >"$out"
  [ "$status" -eq 75 ] || fail "status $status, not 75"
  stopped=$(sed -n 's|^bspg: stopping after checkpoint \([0-9]*\), as asked (.*/stop)$|\1|p' "$out")
  [ -n "$stopped" ] || fail "no line saying the job stopped after a checkpoint, as asked"
  ! grep -Eq "^bspg: .*lost" "$out" || fail "a process was taken for lost: $(grep -E '^bspg: .*lost' "$out")"
  for f in shard-0 shard-1 copy-0 copy-1 complete-0 complete-1; do
    [ -s "$work/ck/c$stopped/$f" ] || fail "c$stopped/$f missing after the stop"
  done
  ;;
*)
  echo "disk_behind.sh: unknown scenario '$scenario'" >&2
  exit 2
  ;;
esac
if [ "$failures" -gt 0 ]; then
  echo "---- output"
  cat "$out"
  exit 1
fi
echo "ok: $scenario"
