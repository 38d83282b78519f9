#!/usr/bin/env bash
# directory_use_test.sh BSPRUN KNOWN_SUPERSTEPS RESTART_ONCE FAILS_AFTER - whose records a
# profile directory holds: a second bsprun on a directory in use is refused before its job
# starts, and the first ends with its own profile; a job that never starts leaves the earlier
# profile as it was; --resume merges the records of its own job only, never an unrelated one's.
set -u
bsprun=$1 known=$2 restart_once=$3 fails_after=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
column() {  # CSV COLUMN: the column's distinct values, in order, on one line
  awk -F, -v name="$2" 'NR == 1 { for (i = 1; i <= NF; ++i) if ($i == name) c = i; next } { print $c }' "$1" |
    sort -un | tr '\n' ' '
}

# Two jobs on one directory: the second is refused in one line and starts nothing.
d=$work/shared
"$bsprun" -p 3 --profile "$d" "$fails_after" none 5 3 >"$work/first.log" 2>&1 &
first=$!
for _ in $(seq 100); do [ -e "$d/raw/a0.s0.p2.bspprof" ] && break; sleep 0.1; done
"$bsprun" -p 2 --profile "$d" "$known" >"$work/second.log" 2>&1
status=$?
[ "$status" = 125 ] || fail "second job on a directory in use: exit $status, not 125"
grep -q "^bsprun: --profile $d: the directory is in use by bsprun pid $first on " "$work/second.log" ||
  fail "second job: no line naming the first: $(tr '\n' '|' <"$work/second.log")"
[ "$(wc -l <"$work/second.log")" = 1 ] || fail "second job: more than one line: $(tr '\n' '|' <"$work/second.log")"
grep -q "PASS known_supersteps" "$work/second.log" && fail "second job ran"
wait "$first"
status=$?
[ "$status" = 0 ] || fail "first job: exit $status: $(tr '\n' '|' <"$work/first.log")"
[ "$(column "$d/supersteps.csv" pid)" = "0 1 2 " ] ||
  fail "first job's profile: pids $(column "$d/supersteps.csv" pid), not 0 1 2"

# A job that never starts (no such program) leaves the earlier profile as it was.
before=$(cd "$d" && md5sum supersteps.csv profile.json raw/*)
"$bsprun" -p 2 --profile "$d" "$work/no-such-program" >"$work/never.log" 2>&1
status=$?
[ "$status" = 127 ] || fail "job that never starts: exit $status, not 127"
after=$(cd "$d" && md5sum supersteps.csv profile.json raw/*)
[ "$before" = "$after" ] || fail "a job that never started changed the profile directory"
grep -q "keeps the earlier profile as it was" "$work/never.log" ||
  fail "job that never starts: no word of the earlier profile: $(tr '\n' '|' <"$work/never.log")"

# --resume: its own job's records go on as attempt 1; an unrelated job's are never merged in.
mine=$work/mine other=$work/other ck=$work/ck
"$bsprun" -p 3 --job-id job-one --checkpoint-dir "$ck" --profile "$mine" "$restart_once" \
  >"$work/one.log" 2>&1
[ $? != 0 ] || fail "checkpointed job: it did not lose its process: $(tr '\n' '|' <"$work/one.log")"
"$bsprun" -p 2 --profile "$other" "$known" >/dev/null 2>&1 || fail "unrelated job failed"
cp -r "$ck" "$ck-copy"
"$bsprun" -p 3 --resume --job-id job-one --checkpoint-dir "$ck" --profile "$mine" "$restart_once" \
  >"$work/resume-mine.log" 2>&1 || fail "--resume into its own profile: $(tr '\n' '|' <"$work/resume-mine.log")"
[ "$(column "$mine/supersteps.csv" attempt)" = "0 1 " ] ||
  fail "--resume into its own profile: attempts $(column "$mine/supersteps.csv" attempt), not 0 1"
"$bsprun" -p 3 --resume --job-id job-one --checkpoint-dir "$ck-copy" --profile "$other" "$restart_once" \
  >"$work/resume-other.log" 2>&1 || fail "--resume into another job's profile: $(tr '\n' '|' <"$work/resume-other.log")"
[ "$(column "$other/supersteps.csv" attempt)" = "0 " ] ||
  fail "--resume into another job's profile: attempts $(column "$other/supersteps.csv" attempt), not 0"
[ "$(column "$other/supersteps.csv" pid)" = "0 1 2 " ] ||
  fail "--resume into another job's profile: pids $(column "$other/supersteps.csv" pid), not 0 1 2"
grep -q '"restart 1"' "$other/profile.json" && fail "an unrelated job's records merged as a restart"
[ "$failures" -eq 0 ] && echo "PASS directory_use"
