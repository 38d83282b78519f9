#!/usr/bin/env bash
# failed_job_test.sh BSPRUN FAILS_AFTER - the profile of a job that fails keeps every superstep
# that completed before the failure: after 50 quick supersteps and after 3 s of computing, for a
# crash (SIGSEGV), bsp_abort and exit(3) in one process, with the others waiting in a sync or
# computing (then stopped by the starter). Each case checks supersteps.csv: rows for supersteps
# 0..49 of every process. (A process's record of a superstep is written when its sync returns:
# the failing process waits 0.3 s first, so that the others' last sync has returned too.)
set -u
bsprun=$1 prog=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
p=3 steps=50
check() {  # how compute_s
  local how=$1 compute=$2 dir=$work/$1-$2
  "$bsprun" -p $p --profile "$dir" "$prog" "$how" $steps "$compute" >"$dir.log" 2>&1
  local status=$?
  [ "$status" -ne 0 ] || fail "$how after ${compute}s: the job ended 0"
  if [ ! -s "$dir/supersteps.csv" ]; then
    fail "$how after ${compute}s: no supersteps.csv; bsprun said: $(tr '\n' '|' <"$dir.log")"
    return
  fi
  # Rows of world syncs per process, for supersteps 0..steps-1.
  local counts
  counts=$(awk -F, -v steps=$steps 'NR == 1 { for (i = 1; i <= NF; ++i) c[$i] = i; next }
    $c["kind"] == "sync" && $c["superstep"] < steps { n[$c["pid"]]++ }
    END { for (q in n) print q, n[q] }' "$dir/supersteps.csv" | sort -n | tr '\n' ' ')
  local want="" q
  for ((q = 0; q < p; ++q)); do want+="$q $steps "; done
  [ "$counts" = "$want" ] ||
    fail "$how after ${compute}s: supersteps per process '$counts', not '$want'"
}
for how in segv abort exit3 segv-computing; do check "$how" 0.3; done
for how in segv exit3-computing; do check "$how" 3; done
[ "$failures" -eq 0 ] && echo "PASS failed_job"
