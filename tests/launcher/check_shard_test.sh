#!/usr/bin/env bash
# check_shard_test.sh MPIRUN HOSTINFO CKPT_JOB - bspg-hostinfo --check-shard, which bsprun runs on a
# host to learn whether a checkpoint shard there is whole: "ok PID N" and exit 0 for a shard and
# its buddy's copy; one line saying what is wrong and exit 1 for a damaged, truncated, missing or
# foreign file, a directory and a FIFO (without waiting for a writer), and a shard of a format an
# older bspg wrote, named as such; exit 2 without a file.
set -u
read -ra mpirun <<<"$1"  # the starter and its options (root, beyond the cores)
hostinfo=$2 job=$3
dir=$(mktemp -d /tmp/bspg-check-shard.XXXXXX)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
# expect STATUS REGEX FILE...: bspg-hostinfo --check-shard's status and its one line of output.
expect() {
  local want=$1 regex=$2 out status
  shift 2
  out=$(timeout 10 "$hostinfo" --check-shard "$@" 2>&1)
  status=$?
  [ "$status" -eq "$want" ] || fail "--check-shard $*: exit $status, not $want ($out)"
  [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] || [ "$want" -eq 2 ] || fail "--check-shard $*: not one line: $out"
  printf '%s\n' "$out" | grep -Eq -- "$regex" || fail "--check-shard $*: '$out' does not match '$regex'"
}

BSPG_CHECKPOINT_DIR=$dir/ckpt timeout 120 "${mpirun[@]}" -np 3 "$job" 4 2 \
  >"$dir/out" 2>&1 || { cat "$dir/out"; fail "ckpt_job did not run"; }
c=$dir/ckpt/c2
expect 0 '^ok 1 2 [0-9a-f]{16}$' "$c/shard-1"
expect 0 '^ok 2 2 [0-9a-f]{16}$' "$c/copy-2"
cp "$c/shard-0" "$dir/damaged"
size=$(stat -c %s "$dir/damaged")
printf 'X' | dd of="$dir/damaged" bs=1 seek=$((size / 2)) conv=notrunc status=none
expect 1 '^damaged \(checksum mismatch\)$' "$dir/damaged"
cp "$c/shard-0" "$dir/older"
printf '\001' | dd of="$dir/older" bs=1 seek=8 conv=notrunc status=none  # the format version: 1
expect 1 '^written by an older bspg \(shard format 1; this bspg reads formats 2 to [0-9]+\)$' "$dir/older"
head -c $((size - 5)) "$c/shard-0" >"$dir/short"
expect 1 '^truncated or extended: [0-9]+ bytes, the header says [0-9]+$' "$dir/short"
expect 1 '^missing$' "$dir/no-such-shard"
expect 1 '^shorter than its header$' "$c/complete-0"
head -c 200 /dev/urandom >"$dir/foreign"
expect 1 '^not a bspg checkpoint shard$' "$dir/foreign"
expect 1 '^not a regular file$' "$c"
mkfifo "$dir/fifo"
expect 1 '^not a regular file$' "$dir/fifo"
expect 2 'takes one FILE' 
echo "ok: --check-shard"
