#!/usr/bin/env bash
# checkpoint_test.sh MPIRUN PROGRAM P [TO_OLDER V] - superstep checkpoints through plain mpirun (BSPG_CHECKPOINT_DIR,
# BSPG_RESUME): a run killed in superstep 10 resumes from its last checkpoint and ends with the answer of
# a run that was never interrupted; a damaged shard is said and its buddy's copy used; a damaged shard
# and copy, and a program that declares other areas, are refused with a message. With TO_OLDER V (a
# tool rewriting shards as an older bspg wrote them, format version V), only: a checkpoint of
# version V shards resumes.
set -u
read -ra mpirun <<<"$1"  # the starter and its options (root, beyond the cores)
program=$2 p=$3
dir=$(mktemp -d /tmp/bspg-ckpt-test.XXXXXX)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
run() {  # run DIR RESUME ARGS...: output in $dir/out, status returned
  local ckpt=$1 resume=$2; shift 2
  BSPG_CHECKPOINT_DIR=$ckpt BSPG_RESUME=$resume timeout 120 "${mpirun[@]}" \
    -np "$p" "$program" "$@" >"$dir/out" 2>&1
}
result() { grep -o '^RESULT [0-9]* after [0-9]* steps' "$dir/out"; }

run "$dir/ref" 0 20 4 || { cat "$dir/out"; fail "the uninterrupted run failed"; }
want=$(result)
[ -n "$want" ] || { cat "$dir/out"; fail "the uninterrupted run printed no RESULT"; }

# Killed in superstep 10: checkpoints 1 and 2 (steps 4 and 8) count, the resumed run redoes 9-20.
crashed() {  # crashed DIR: a run killed in superstep 10, into DIR
  # The starter's status: MPICH 4.2's mpiexec reports 0 in most runs that lose a process (bsprun
  # does not: tests/launcher, local_killed_process_fails); what must hold is that no answer came.
  if run "$1" 0 20 4 crash 10 && [ "${mpirun[0]##*/}" != mpiexec.mpich ]; then
    cat "$dir/out"; fail "the run that loses a process exited 0"
  fi
  if result >/dev/null; then cat "$dir/out"; fail "the run that loses a process gave an answer"; fi
  grep -q "^checkpoint 2 at step 8" "$dir/out" || { cat "$dir/out"; fail "no checkpoint 2 before the crash"; }
  ls "$1"/c2/complete-* >/dev/null 2>&1 || fail "checkpoint 2 has no complete marker"
  [ ! -e "$1/c1" ] || fail "checkpoint 1 was not removed after checkpoint 2 counted"
}
if [ -n "${4:-}" ]; then
  v=${5:?the format version to rewrite shards as}
  crashed "$dir/v$v"
  "$4" "$v" "$dir/v$v"/c2/shard-* "$dir/v$v"/c2/copy-* || fail "the shards could not be rewritten as version $v"
  run "$dir/v$v" last 20 4 || { cat "$dir/out"; fail "the run resumed from version $v shards failed"; }
  grep -q "^resumed from checkpoint 2 at step 8" "$dir/out" || { cat "$dir/out"; fail "did not resume from checkpoint 2"; }
  [ "$(result)" = "$want" ] || { cat "$dir/out"; fail "resumed answer '$(result)' differs from '$want'"; }
  # Read whole, not taken for damage: no shard fell back to its buddy's copy.
  ! grep -q "using the buddy's copy" "$dir/out" || { cat "$dir/out"; fail "a version $v shard was not used"; }
  echo "ok: resumed from version $v shards with the uninterrupted answer ($want)"
  exit 0
fi
crashed "$dir/a"
run "$dir/a" last 20 4 || { cat "$dir/out"; fail "the resumed run failed"; }
grep -q "^resumed from checkpoint 2 at step 8" "$dir/out" || { cat "$dir/out"; fail "did not resume from checkpoint 2"; }
[ "$(result)" = "$want" ] || { cat "$dir/out"; fail "resumed answer '$(result)' differs from '$want'"; }
echo "ok: resumed from checkpoint 2 with the uninterrupted answer ($want)"

# A damaged shard: the copy (kept by another process) is used, and that is said.
crashed "$dir/b"
shard=$dir/b/c2/shard-0
size=$(stat -c %s "$shard")
printf 'garbage!' | dd of="$shard" bs=1 seek=$((size / 2)) conv=notrunc status=none
if [ "$p" -ge 2 ]; then
  run "$dir/b" 2 20 4 || { cat "$dir/out"; fail "resume with a damaged shard failed"; }
  grep -q "bspg: process 0: checkpoint 2: .*shard-0 is damaged (checksum mismatch); using the buddy's copy" "$dir/out" ||
    { cat "$dir/out"; fail "the damaged shard was not reported"; }
  [ "$(result)" = "$want" ] || { cat "$dir/out"; fail "answer after using the copy differs"; }
  echo "ok: damaged shard reported, copy used"
  # Shard and copy damaged (in a new crashed run: the resumed one went on and removed c2).
  crashed "$dir/b"
  for file in "$dir/b/c2/shard-0" "$dir/b/c2/copy-0"; do
    printf 'garbage!' | dd of="$file" bs=1 seek=$((size / 2)) conv=notrunc status=none
  done
fi
if run "$dir/b" 2 20 4; then cat "$dir/out"; fail "resume without a whole shard exited 0"; fi
grep -q "bspg_resume: checkpoint 2 cannot be restored: .*shard-0 is damaged" "$dir/out" ||
  { cat "$dir/out"; fail "no message naming the damaged shard"; }
[ "$(grep -c 'bspg_resume' "$dir/out")" -eq 1 ] || { cat "$dir/out"; fail "the message is not printed once"; }
echo "ok: no whole shard: refused with one message"

# Other areas than the checkpoint holds.
crashed "$dir/c"
if run "$dir/c" last 20 4 bigger; then cat "$dir/out"; fail "resume with other areas exited 0"; fi
grep -q "bspg_resume: checkpoint 2 holds 3 persisted area(s) of 8000, 8, 8 bytes; this run declared 3 of 8008, 8, 8 bytes" \
  "$dir/out" || { cat "$dir/out"; fail "no message naming the mismatch"; }
echo "ok: other areas refused"
