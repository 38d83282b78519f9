#!/usr/bin/env bash
# probe_scale.sh [BUILD_DIR] - how bsprun's probing scales with the number of candidate hosts.
#
# For N silent candidates (they accept TCP and never answer, like hung machines), runs
# `bsprun --dry-run` and reports its wall time, peak threads, peak RSS and CPU time, with no limit
# and under `ulimit -v 1000000` (as on many login nodes); the median of REPEAT runs of each.
# Every probe times out, so a run should take about one probe timeout.
#
# Runs in a network namespace of its own (root; tests/sealed.sh), where the
# candidates are loopback addresses 127.1.x.y served by tests/launcher/hosts/silent_hosts.
# Needs /usr/bin/time (Debian package "time") and a build with tests (./bspg.sh build).
#
# Environment: SIZES (default "40 400 2000"), LIMITS (address-space limits in kB, "none" for
# none; default "none 1000000"), REPEAT (3), TIMEOUT (probe timeout, 2 s), FANOUT (bsprun
# --fanout; default: bsprun's own), BSPRUN (default BUILD_DIR/bin/bsprun).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=$(cd "${1:-$here/../build}" && pwd)
bsprun=${BSPRUN:-$build/bin/bsprun}
silent=$build/tests/launcher/hosts/silent_hosts
sizes=${SIZES:-40 400 2000} limits=${LIMITS:-none 1000000} repeat=${REPEAT:-3} timeout_s=${TIMEOUT:-2}

die() { echo "probe_scale.sh: $*" >&2; exit 1; }
[ -x "$bsprun" ] || die "no bsprun at $bsprun (build first: ./bspg.sh build)"
[ -x "$silent" ] || die "no $silent (build the tests: ./bspg.sh build)"
[ -x /usr/bin/time ] || die "needs /usr/bin/time (apt-get install time)"
if [ -z "${PROBE_SCALE_NETNS:-}" ]; then
  PROBE_SCALE_NETNS=1 exec "$here/../tests/sealed.sh" "$0" "$build"
fi

work=$(mktemp -d /tmp/bspg-probe-scale-XXXXXX)
listener=
cleanup() {
  [ -z "$listener" ] || kill "$listener" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# run N LIMIT: one bsprun run; prints "wall_s threads rss_kb cpu_s timed_out local_messages".
run() {
  local n=$1 limit=$2 peak=0 pid=0 threads
  local fanout=()
  [ -z "${FANOUT:-}" ] || fanout=(--fanout "$FANOUT")
  bash -c "${limit:+ulimit -v $limit; }exec /usr/bin/time -v -o '$work/time' \"\$@\"" bsprun \
    "$bsprun" --dry-run -p 1 --hostfile "$work/hosts.yaml" --probe-timeout "$timeout_s" "${fanout[@]}" /bin/true \
    >"$work/out" 2>&1 &
  local timer=$!
  # Peak threads of bsprun (the child of time), sampled until it ends.
  while kill -0 "$timer" 2>/dev/null; do
    [ "$pid" -ne 0 ] || pid=$(pgrep -P "$timer" 2>/dev/null | head -n 1 || true)
    pid=${pid:-0}
    if [ "$pid" -ne 0 ] && read -r _ threads < <(grep '^Threads:' "/proc/$pid/status" 2>/dev/null); then
      [ "$threads" -le "$peak" ] || peak=$threads
    fi
    sleep 0.01
  done
  wait "$timer" || true
  awk -v threads="$peak" -v n="$n" \
    -v timed_out="$(grep -c 'not used: timed out after' "$work/out" || true)" \
    -v local_lines="$(grep -cE '^bsprun: (probing at most|probing from|.*on this machine)' "$work/out" || true)" '
    /Elapsed \(wall clock\)/ { split($NF, t, ":"); wall = (length(t) == 3) ? t[1] * 3600 + t[2] * 60 + t[3] : t[1] * 60 + t[2] }
    /User time/ { cpu += $NF } /System time/ { cpu += $NF }
    /Maximum resident set size/ { rss = $NF }
    END { printf "%.2f %d %d %.2f %d %d\n", wall, threads, rss, cpu, timed_out, local_lines }' "$work/time"
}

printf 'bsprun --dry-run, probe timeout %s s, fan-out %s, median of %s runs (%s)\n' "$timeout_s" \
  "${FANOUT:-default}" "$repeat" "$(nproc) cores"
printf '%10s  %-17s  %7s  %7s  %11s  %6s  %9s  %s\n' candidates limit "wall s" threads "peak RSS MB" "CPU s" \
  "timed out" "local messages"
for n in $sizes; do
  rm -f "$work/hosts.yaml"
  "$silent" "$n" "$work/hosts.yaml" &
  listener=$!
  for _ in $(seq 1 100); do [ -f "$work/hosts.yaml" ] && break; sleep 0.05; done
  [ -f "$work/hosts.yaml" ] || die "silent_hosts did not start"
  for limit in $limits; do
    [ "$limit" != none ] || limit=
    : >"$work/runs"
    for _ in $(seq 1 "$repeat"); do run "$n" "$limit" >>"$work/runs"; done
    col() { awk -v c="$1" '{ print $c }' "$work/runs" | median; }
    label=none
    [ -z "$limit" ] || label="ulimit -v $limit"
    printf '%10s  %-17s  %7.2f  %7d  %11.1f  %6.2f  %9s  %s\n' "$n" "$label" "$(col 1)" \
      "$(col 2)" "$(echo "$(col 3)" | awk '{ print $1 / 1024 }')" "$(col 4)" "$(col 5)/$n" "$(col 6)"
  done
  kill "$listener" 2>/dev/null || true
  wait "$listener" 2>/dev/null || true
  listener=
done
