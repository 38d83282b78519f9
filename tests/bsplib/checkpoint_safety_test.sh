#!/usr/bin/env bash
# checkpoint_safety_test.sh MPIRUN PROGRAM HOSTINFO P CASE - checkpoints never lie (issue 14), through
# plain mpirun with BSPG_CHECKPOINT_DIR and BSPG_RESUME, with the program of checkpoint_test.sh
# (ckpt_counter). Each case compares the answer with an uninterrupted run's and checks that nothing
# outside the checkpoint directory changed. CASE is one of:
#   fresh       a fresh run in a directory holding an earlier run's checkpoint 8 never restores
#               from it, removes it at its first checkpoint, and resumes from its own checkpoint 2
#   symlink     links planted as DIR/c1, DIR/c3, DIR/stop and DIR/c2/shard-0 are removed or
#               refused, never followed: what they point to is untouched
#   refused     a planted link in place of the default directory's parent (in a /tmp of the
#               test's), a directory of another uid and one of mode 0777 are refused with one line
#   unwritable  a file in place of the directory, one process's directory impossible to create,
#               and a read-only file system: one line and exit 1 (or 75 with a checkpoint kept)
#               within seconds, never a hang
#   full_disk   a tmpfs where checkpoint 1 fits and checkpoint 2 does not, at the data and at the
#               markers: exit 75 with the line, checkpoint 1 whole, resuming it gives the answer
#   stop_file   a stop file naming another run does not stop the job; one naming its own does
#   two_jobs    a second job on a directory in use is refused with a line naming the first's holder
# Prints "PASS checkpoint_safety CASE" when every check holds, "FAIL: ..." otherwise.
set -u
read -ra mpirun <<<"$1"  # the starter and its options (root, beyond the cores)
program=$2 hostinfo=$3 p=$4 case=$5
# full_disk and the read-only case mount file systems: in a mount namespace of their own.
if [ "$case" = full_disk ] || [ "$case" = unwritable ]; then
  if [ -z "${BSPG_TEST_MOUNT_NS:-}" ]; then
    exec unshare --mount --propagation private env BSPG_TEST_MOUNT_NS=1 "$0" "$@"
  fi
fi
dir=$(mktemp -d /tmp/bspg-ckpt-safety.XXXXXX)
mounts=()
cleanup() {
  for m in "${mounts[@]}"; do umount "$m" 2>/dev/null; done
  rm -rf "$dir"
}
trap cleanup EXIT
host=$(hostname)
fail() { echo "FAIL: $*"; exit 1; }
show_fail() { cat "$dir/out" "$dir/err"; fail "$@"; }
# run CKPT RESUME ARGS...: stdout in $dir/out, stderr in $dir/err (apart: a starter may forward the
# two streams in pieces that interleave mid-line), status returned. CKPT "" leaves BSPG_CHECKPOINT_DIR
# unset (the default directory). Extra environment in the array `extra`.
extra=()
run() {
  local ckpt=$1 resume=$2; shift 2
  local where=(BSPG_CHECKPOINT_DIR="$ckpt")
  [ -n "$ckpt" ] || where=(-u BSPG_CHECKPOINT_DIR)
  env "${where[@]}" BSPG_RESUME="$resume" "${extra[@]}" timeout 120 "${mpirun[@]}" -np "$p" \
    "$program" "$@" >"$dir/out" 2>"$dir/err"
}
# A starter may also move a piece of one stream to the other (Open MPI 5's does), so the checks
# read both: the program's own lines (progress and answer), found wherever their pieces went,
program_lines='(resumed from )?checkpoint [0-9]+ at step [0-9]+|RESULT [0-9]+ after [0-9]+ steps'
said() { cat "$dir/out" "$dir/err" | grep -oE "$program_lines"; }
# ... and everything else, with the program's lines taken out of it (where one was put in the
# middle of a line of bspg's, that line is whole again).
others() { cat "$dir/out" "$dir/err" | perl -0pe 's/(resumed from )?checkpoint \d+ at step \d+\n//g; s/RESULT \d+ after \d+ steps\n//g'; }
result() { said | grep -o '^RESULT [0-9]* after [0-9]* steps'; }
# The library's own lines ("bspg: ..."): exactly one, matching the pattern.
one_line() {
  local n pattern=$1
  # A pattern that ends the line lets it end with where the program made the call (" [in main]").
  [[ "$pattern" != *'$' ]] || pattern="${pattern%?}( \[[^]]*\])?\$"
  others >"$dir/others"
  n=$(grep -c '^bspg: ' "$dir/others")
  [ "$n" -eq 1 ] || show_fail "$n lines from bspg instead of one"
  grep -Eq -- "$pattern" "$dir/others" || show_fail "no line matching: $pattern"
}
# A listing of a tree with every file's content hash: what must not change.
snapshot() {
  (cd "$1" && find . -printf '%p %y %s %m %u %l\n' | sort &&
    find . -type f -exec md5sum {} + | sort)
}
outside=$dir/outside
mkdir -p "$outside/victim"
for f in a b c; do head -c 5000 /dev/urandom >"$outside/victim/$f"; done
snapshot "$outside" >"$dir/outside.before"
same_outside() {
  snapshot "$outside" >"$dir/outside.after"
  cmp -s "$dir/outside.before" "$dir/outside.after" ||
    { diff "$dir/outside.before" "$dir/outside.after"; fail "$* changed what lies outside"; }
}
# checkpoint_whole DIR N: every shard and copy of DIR/cN is whole and of the run its markers
# name; P markers with the contract's one line.
checkpoint_whole() {
  local c=$1/c$2 run="" f v
  [ -d "$c" ] && [ ! -L "$c" ] || fail "$c is not there"
  [ "$(ls "$c"/complete-* 2>/dev/null | wc -l)" -eq "$p" ] || { ls -l "$c"; fail "$c has not $p markers"; }
  for f in "$c"/complete-*; do
    v=$(cat "$f")
    [[ $v =~ ^bspg\ checkpoint\ $2\ of\ $p\ processes\ run\ ([0-9a-f]{16})\ program\ 0{16}$ ]] ||
      fail "marker $f holds '$v'"
    [ -z "$run" ] || [ "$run" = "${BASH_REMATCH[1]}" ] || fail "markers of $c name two runs"
    run=${BASH_REMATCH[1]}
  done
  for f in "$c"/shard-* "$c"/copy-*; do
    [ -e "$f" ] || continue
    v=$("$hostinfo" --check-shard "$f") || fail "$f is not whole: $v"
    [[ $v =~ ^ok\ [0-9]+\ $2\ $run$ ]] || fail "$f: '$v' (run $run expected)"
  done
  [ "$(ls "$c"/shard-* | wc -l)" -eq "$p" ] || fail "$c has not $p shards"
}

# The answer of a run that is never interrupted.
run "$dir/ref" 0 20 4 || show_fail "the uninterrupted run failed"
want=$(result)
[ -n "$want" ] || show_fail "the uninterrupted run printed no RESULT"

# crashed DIR: a fresh run killed in superstep 10 after its checkpoints 1 and 2 (steps 4, 8).
crashed() {
  # MPICH 4.2's mpiexec reports 0 in most runs that lose a process (bsprun does not: tests/launcher,
  # local_killed_process_fails); what must hold is that no answer came.
  if run "$1" 0 20 4 crash 10 && [ "${mpirun[0]##*/}" != mpiexec.mpich ]; then
    show_fail "the run that loses a process exited 0"
  fi
  if result >/dev/null; then show_fail "the run that loses a process gave an answer"; fi
  said | grep -q "^checkpoint 2 at step 8" || show_fail "no checkpoint 2 before the crash"
  said | grep -q "^resumed" && show_fail "a fresh run restored a checkpoint"
  checkpoint_whole "$1" 2
}
resumed_from_2() {  # resumed_from_2 DIR: BSPG_RESUME=last restores checkpoint 2 and gives the answer
  run "$1" last 20 4 || show_fail "the resumed run failed"
  said | grep -q "^resumed from checkpoint 2 at step 8" || show_fail "did not resume from checkpoint 2"
  [ "$(result)" = "$want" ] || show_fail "resumed answer '$(result)' differs from '$want'"
}

case $case in
fresh)
  ck=$dir/ck
  # An earlier run, killed in superstep 9 after its checkpoint 8 (one every superstep).
  run "$ck" 0 20 1 crash 9
  checkpoint_whole "$ck" 8
  old_run=$(sed -n 's/.* run \([0-9a-f]*\) .*/\1/p' "$ck/c8/complete-0")
  crashed "$ck"
  [ ! -e "$ck/c8" ] || fail "the earlier run's checkpoint 8 is still there after the fresh run's checkpoints"
  grep -q " run $old_run " "$ck/c2/complete-0" && fail "the fresh run's checkpoint names the earlier run"
  resumed_from_2 "$ck"
  same_outside "the runs"
  ;;
symlink)
  ck=$dir/ck
  mkdir -m 700 "$ck"
  ln -s "$outside/victim" "$ck/c1"
  ln -s "$outside/victim" "$ck/c3"
  ln -s "$outside/victim/a" "$ck/stop"
  crashed "$ck"
  [ ! -L "$ck/c1" ] && [ ! -e "$ck/c3" ] && [ ! -e "$ck/stop" ] || fail "planted links are still there"
  same_outside "a fresh run"
  # Links planted after the crash: beyond the checkpoint resumed, and in place of a shard (a
  # whole shard lies where it points, and must not be read).
  ln -s "$outside/victim" "$ck/c3"
  ln -s "$outside/victim" "$ck/c9"
  cp "$ck/c2/shard-0" "$outside/victim/shard-0"
  rm "$ck/c2/shard-0"
  ln -s "$outside/victim/shard-0" "$ck/c2/shard-0"
  snapshot "$outside" >"$dir/outside.before"
  resumed_from_2 "$ck"
  others | grep -q "bspg: process 0: checkpoint 2: .*/c2/shard-0 is a symbolic link (not followed); using the buddy's copy" \
    || show_fail "the link in place of shard-0 was not reported"
  [ ! -e "$ck/c9" ] && [ ! -L "$ck/c9" ] || fail "the link c9 beyond the restored checkpoint is still there"
  same_outside "a resumed run"
  ;;
refused)
  # The default directory, TMPDIR/bspg-UID-checkpoints/PROGRAM, in a /tmp of the test's (mode
  # 1777): its parent planted as a link by someone else (uid 4321).
  mkdir -m 1777 "$dir/tmp"
  mkdir "$outside/elsewhere"
  snapshot "$outside" >"$dir/outside.before"
  ln -s "$outside/elsewhere" "$dir/tmp/bspg-$(id -u)-checkpoints"
  chown -h 4321 "$dir/tmp/bspg-$(id -u)-checkpoints"
  extra=(TMPDIR="$dir/tmp")
  run "" 0 20 4
  status=$?
  extra=()
  [ "$status" -eq 1 ] || show_fail "a planted link in a directory others can write: exit $status"
  one_line "^bspg: process [0-9]+: bspg_resume: the checkpoint directory $dir/tmp/bspg-$(id -u)-checkpoints/[^ ]+ leads through $dir/tmp/bspg-$(id -u)-checkpoints, a symbolic link of uid 4321 in $dir/tmp, which others can write; refusing to follow it$"
  same_outside "a refused run"
  # A link in a directory of another user (0755, so only that user could have planted it).
  mkdir "$dir/bspg-x" "$outside/victim2"
  ln -s "$outside/victim2" "$dir/bspg-x/checkpoints"
  chown -h 4321 "$dir/bspg-x" "$dir/bspg-x/checkpoints"
  snapshot "$outside" >"$dir/outside.before"
  run "$dir/bspg-x/checkpoints/job1" 0 20 4
  status=$?
  [ "$status" -eq 1 ] || show_fail "a link in a directory of uid 4321: exit $status"
  one_line "^bspg: process [0-9]+: bspg_resume: the checkpoint directory $dir/bspg-x/checkpoints/job1 leads through $dir/bspg-x/checkpoints, a symbolic link in $dir/bspg-x, which is owned by uid 4321 \(another user\); refusing to follow it$"
  same_outside "a link of another user's directory"
  # A directory of another user that anyone can rearrange (0777, no sticky bit) is no road.
  mkdir -m 777 "$dir/anyones" && chown 4321 "$dir/anyones"
  run "$dir/anyones/job1" 0 20 4
  status=$?
  [ "$status" -eq 1 ] || show_fail "a path through uid 4321's 0777 directory: exit $status"
  one_line "^bspg: process [0-9]+: bspg_resume: the checkpoint directory $dir/anyones/job1 leads through $dir/anyones, owned by uid 4321 and writable by others \(mode 0777\); refusing to use it$"
  [ -z "$(ls -A "$dir/anyones")" ] || fail "something was written into uid 4321's 0777 directory"
  # A directory of another user, and one that anybody can write.
  mkdir -m 700 "$dir/theirs" && chown 4321 "$dir/theirs"
  run "$dir/theirs" 0 20 4
  status=$?
  [ "$status" -eq 1 ] || show_fail "a directory of uid 4321: exit $status"
  one_line "^bspg: process [0-9]+: bspg_resume: the checkpoint directory $dir/theirs is owned by uid 4321, not by this user \(uid $(id -u)\); refusing to use it$"
  [ -z "$(ls -A "$dir/theirs")" ] || fail "something was written into a directory of uid 4321"
  mkdir -m 777 "$dir/open"
  run "$dir/open" 0 20 4
  status=$?
  [ "$status" -eq 1 ] || show_fail "a directory of mode 0777: exit $status"
  one_line "^bspg: process [0-9]+: bspg_resume: the checkpoint directory $dir/open is writable by group or others \(mode 0777\); refusing to use it \(chmod go-w $dir/open\)$"
  [ -z "$(ls -A "$dir/open")" ] || fail "something was written into a directory of mode 0777"
  # A link to a directory one owns, in a directory only one can write, is fine.
  mkdir -m 700 "$dir/real"
  ln -s "$dir/real" "$dir/via"
  run "$dir/via/ck" 0 20 4 || show_fail "a directory through a link in a private directory failed"
  [ "$(result)" = "$want" ] || show_fail "answer through a private link differs"
  [ -d "$dir/real/ck/c5" ] || fail "no checkpoint 5 where the private link leads"
  same_outside "refused runs"
  ;;
unwritable)
  # A file in place of the checkpoint directory: on every process.
  touch "$dir/file"
  SECONDS=0
  run "$dir/file" 0 20 4
  status=$?
  [ "$status" -eq 1 ] || show_fail "a file in place of the directory: exit $status"
  one_line "^bspg: checkpoint 1 could not be written on $host: $dir/file: Not a directory; there is no earlier checkpoint$"
  # One process (the last) cannot create its directory: the others must not wait for it.
  cat >"$dir/wrap.sh" <<EOF
#!/bin/sh
rank=\${OMPI_COMM_WORLD_RANK:-\${PMI_RANK:-}}
[ "\$rank" = "$((p - 1))" ] && export BSPG_CHECKPOINT_DIR=$dir/file/sub
exec "\$@"
EOF
  chmod +x "$dir/wrap.sh"
  BSPG_CHECKPOINT_DIR=$dir/pp BSPG_RESUME=0 timeout 120 "${mpirun[@]}" -np "$p" "$dir/wrap.sh" \
    "$program" 20 4 >"$dir/out" 2>"$dir/err"
  status=$?
  [ "$status" -eq 1 ] || show_fail "one process's directory impossible: exit $status"
  one_line "^bspg: checkpoint 1 could not be written on $host: $dir/file: Not a directory; there is no earlier checkpoint$"
  [ ! -e "$dir/pp/c1" ] || fail "the others' part of checkpoint 1 was left"
  # A read-only file system, after checkpoint 2: the resumed run cannot write checkpoint 3.
  mkdir "$dir/ro"
  mount -t tmpfs -o size=4m,mode=0700 tmpfs "$dir/ro" && mounts+=("$dir/ro") || fail "cannot mount a tmpfs"
  crashed "$dir/ro/ck"
  mount -o remount,ro "$dir/ro" || fail "cannot remount read-only"
  run "$dir/ro/ck" last 20 4
  status=$?
  [ "$status" -eq 75 ] || show_fail "a read-only directory with checkpoint 2 kept: exit $status"
  said | grep -q "^resumed from checkpoint 2 at step 8" || show_fail "did not resume from checkpoint 2"
  one_line "^bspg: checkpoint 3 could not be written on $host: $dir/ro/ck/[^ ]+: Read-only file system; checkpoint 2 is kept$"
  checkpoint_whole "$dir/ro/ck" 2
  [ "$SECONDS" -lt 100 ] || fail "the unwritable cases took $SECONDS s"
  same_outside "runs on unwritable directories"
  ;;
full_disk)
  fs=$dir/fs
  mkdir "$fs"
  # How much checkpoint 1 takes: lock, shards, copies and markers, in pages of the tmpfs.
  mount -t tmpfs -o size=4m,mode=0700 tmpfs "$fs" && mounts+=("$fs") || fail "cannot mount a tmpfs"
  run "$fs/ck" 0 20 4 crash 6
  checkpoint_whole "$fs/ck" 1
  used=$(($(df --output=used -k "$fs" | tail -1) / 4))
  data=0
  for f in "$fs"/ck/c1/shard-* "$fs"/ck/c1/copy-*; do data=$((data + ($(stat -c %s "$f") + 4095) / 4096)); done
  umount "$fs"
  # Checkpoint 2 does not fit: half its data, then all its data and half its markers.
  for room in "$((data / 2))" "$((data + p / 2))"; do
    mount -t tmpfs -o size=$(((used + room) * 4096)),mode=0700 tmpfs "$fs" || fail "cannot mount a tmpfs"
    run "$fs/ck" 0 20 4
    status=$?
    [ "$status" -eq 75 ] || show_fail "a full disk ($room pages beyond checkpoint 1): exit $status"
    if [ "$room" -lt "$data" ]; then at="(shard|copy)-[0-9]+"; else at="complete-[0-9]+"; fi
    one_line "^bspg: checkpoint 2 could not be written on $host: $fs/ck/c2/$at[.]part: No space left on device; checkpoint 1 is kept$"
    result >/dev/null && show_fail "a run that could not write checkpoint 2 gave an answer"
    checkpoint_whole "$fs/ck" 1
    [ ! -e "$fs/ck/c2" ] || fail "the part of checkpoint 2 written was left"
    mount -o remount,size=4m "$fs" || fail "cannot grow the tmpfs"
    run "$fs/ck" last 20 4 || show_fail "the resume of checkpoint 1 failed"
    said | grep -q "^resumed from checkpoint 1 at step 4" || show_fail "did not resume from checkpoint 1"
    [ "$(result)" = "$want" ] || show_fail "resumed answer '$(result)' differs from '$want'"
    umount "$fs"
  done
  same_outside "runs on a full disk"
  ;;
stop_file)
  ck=$dir/ck
  mkdir -m 700 "$ck"
  echo bbbbbbbbbbbbbbbb >"$ck/stop"
  extra=(BSPG_RUN=aaaaaaaaaaaaaaaa)
  run "$ck" 0 20 4 || show_fail "a stop file of another run stopped the job"
  [ "$(result)" = "$want" ] || show_fail "answer '$(result)' differs from '$want'"
  [ ! -e "$ck/stop" ] || fail "the fresh run left another run's stop file"
  echo aaaaaaaaaaaaaaaa >"$ck/stop"
  run "$ck" 0 20 4
  status=$?
  [ "$status" -eq 75 ] || show_fail "a stop file naming the run: exit $status"
  one_line "^bspg: stopping after checkpoint 1, as asked \($ck/stop\)$"
  result >/dev/null && show_fail "the stopped job gave an answer"
  checkpoint_whole "$ck" 1
  rm "$ck/stop"
  run "$ck" last 20 4 || show_fail "the resume after the stop failed"
  said | grep -q "^resumed from checkpoint 1 at step 4" || show_fail "did not resume from checkpoint 1"
  [ "$(result)" = "$want" ] || show_fail "resumed answer '$(result)' differs from '$want'"
  same_outside "stop files"
  ;;
two_jobs)
  ck=$dir/ck
  BSPG_CHECKPOINT_DIR=$ck BSPG_RESUME=0 timeout 120 "${mpirun[@]}" -np "$p" "$program" 20 4 slow 400 \
    >"$dir/first" 2>"$dir/first.err" &
  first=$!
  for _ in $(seq 100); do grep -qs "^bspg job" "$ck/lock" && break; sleep 0.1; done
  holder=$(head -n 1 "$ck/lock")
  [[ $holder =~ ^bspg\ job,\ process\ [0-9]+\ \(pid\ 0\ of\ the\ job\)\ on\ $host$ ]] ||
    fail "the first job's lock says '$holder'"
  run "$ck" 0 20 4
  status=$?
  kill -0 "$first" 2>/dev/null || fail "the first job ended before the second was refused"
  [ "$status" -eq 1 ] || show_fail "a second job on a directory in use: exit $status"
  holder_re=$(printf '%s' "$holder" | sed 's/[][().*^$+?{}|\\]/\\&/g')
  one_line "^bspg: process 0: bspg_resume: the checkpoint directory $ck is in use by another job: $holder_re \($ck/lock\)$"
  wait "$first" || { cat "$dir/first" "$dir/first.err"; fail "the first job failed"; }
  cp "$dir/first" "$dir/out"
  cp "$dir/first.err" "$dir/err"
  [ "$(result)" = "$want" ] || show_fail "the first job's answer '$(result)' differs from '$want'"
  checkpoint_whole "$ck" 5
  same_outside "two jobs"
  ;;
*) fail "unknown case '$case'" ;;
esac
echo "PASS checkpoint_safety $case"
