#!/bin/sh
# hostile_dir_test.sh BSPRUN PROGRAM: bsprun --profile never writes through a link planted in the
# profile directory, refuses a directory that others can write, and does not wait on a FIFO in
# place of ./bspbench.dat. Prints PASS hostile_dir, or FAIL lines.
set -u
bsprun=$1 program=$2
work=$(mktemp -d /tmp/bspg-hostile-prof.XXXXXX) || exit 1
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
echo "precious" >"$work/victim"

# 1. Links in place of every output: the job's profile is refused file by file, the victim stays.
dir=$work/prof
mkdir -m 700 "$dir"
for f in supersteps.csv profile.json profile.dat profile.gp profile.steps.tmp; do
  ln -s "$work/victim" "$dir/$f"
done
(cd "$work" && timeout 60 "$bsprun" -p 2 --profile "$dir" "$program") >"$work/out1" 2>&1
[ "$(cat "$work/victim")" = precious ] || fail "a planted link let bsprun overwrite a file outside DIR"
grep -q "supersteps.csv: it is a symbolic link; refusing to follow it" "$work/out1" ||
  { cat "$work/out1"; fail "no line naming the planted link"; }

# ... and a link in place of each later output alone: the victim stays, and the file is refused
# (traffic.gp, like the pictures, is removed before it is written: no refusal needed).
for f in profile.dat profile.waits.dat profile.waits.tmp profile.gp traffic.csv traffic.gp; do
  one=$work/one-$f
  mkdir -m 700 "$one"
  ln -s "$work/victim" "$one/$f"
  (cd "$work" && timeout 60 "$bsprun" -p 2 --profile "$one" "$program") >"$work/out-$f" 2>&1
  [ "$(cat "$work/victim")" = precious ] || fail "a link planted as $f let bsprun overwrite a file outside DIR"
  [ "$f" = traffic.gp ] || grep -q "$f: it is a symbolic link; refusing to follow it" "$work/out-$f" ||
    { cat "$work/out-$f"; fail "no line naming the link planted as $f"; }
done

# 2. A profile directory that others can write is refused in one line.
open_dir=$work/open
mkdir -m 777 "$open_dir"
(cd "$work" && timeout 60 "$bsprun" -p 2 --profile "$open_dir" "$program") >"$work/out2" 2>&1
grep -q "^bsprun: --profile: the profile directory $open_dir is writable by group or others (mode 0777); refusing to use it" "$work/out2" && ! grep -q "^PASS\|known" "$work/out2" ||
  { cat "$work/out2"; fail "a profile directory of mode 0777 was not refused"; }

# 3. A FIFO as ./bspbench.dat: the profile is merged without waiting on it.
mkfifo "$work/bspbench.dat"
start=$(date +%s)
(cd "$work" && timeout 60 "$bsprun" -p 2 --profile "$work/fifo" "$program") >"$work/out3" 2>&1
status=$?
[ "$status" -ne 124 ] || fail "bsprun waited on the FIFO bspbench.dat (killed after 60 s)"
[ $(($(date +%s) - start)) -lt 30 ] || fail "bsprun took more than 30 s with a FIFO bspbench.dat"
[ -s "$work/fifo/supersteps.csv" ] || { cat "$work/out3"; fail "no profile with a FIFO bspbench.dat"; }
echo "PASS hostile_dir"
