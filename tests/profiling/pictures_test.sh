#!/usr/bin/env bash
# pictures_test.sh BSPRUN SHAPES MODE [KEEP] - profiles shapes.c (MODE balanced, unbalanced or
# setup) on 3 processes with bsprun --profile and checks the data behind the pictures:
#   traffic.csv   every process sent its right neighbour 30 KiB in 30 messages, and nothing else;
#   waits         (profile.waits.dat, supersteps 1..30) unbalanced: process 0, the slow one,
#                 waits at most 30 % of a superstep on average, the others at least 40 % and 30
#                 points more than it (they wait 90 % on an idle machine); balanced and setup: no process waits 75 % (a
#                 loaded machine that stops a process now and then makes the others wait);
#   the scale     setup: the 400 ms set-up superstep is cut and labelled, and the scale's top is
#                 below half its time;
#   the pictures  profile.png and traffic.png are PNGs.
# With KEEP, the two pictures are copied to KEEP-profile.png and KEEP-traffic.png (for the
# guide's pictures: they are looked at, not compared).
set -uo pipefail
bsprun=$1 shapes=$2 mode=$3 keep=${4:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
p=3
(cd "$work" && timeout 120 "$bsprun" -q -p "$p" --profile "$work/prof" "$shapes" "$mode") \
  >"$work/out" 2>&1 || fail "the profiled run failed: $(tail -5 "$work/out" | tr '\n' '|')"
grep -q "^PASS shapes $mode\$" "$work/out" || fail "no PASS from shapes: $(tail -5 "$work/out" | tr '\n' '|')"
prof=$work/prof

expected=$(for ((s = 0; s < p; ++s)); do echo "$s,$(((s + 1) % p)),30720,30"; done | sort)
actual=$(tail -n +2 "$prof/traffic.csv" | sort)
[ "$(head -n 1 "$prof/traffic.csv")" = "from,to,bytes,messages" ] || fail "traffic.csv: wrong header"
[ "$actual" = "$expected" ] || fail "traffic.csv: $(echo "$actual" | tr '\n' ' ') instead of $(echo "$expected" | tr '\n' ' ')"

# Mean share of waiting per process over supersteps 1..30 (steps 1..30 of the profile: step 0
# is the set-up superstep; the last, after the pop, is left out too).
means=$(awk '!/^#/ && $1 >= 1 && $1 <= 30 { sum[$2] += $3; n[$2]++ }
  END { for (q in sum) printf "%d %.3f\n", q, sum[q] / n[q] }' "$prof/profile.waits.dat" | sort -n)
[ "$(echo "$means" | wc -l)" -eq "$p" ] || fail "profile.waits.dat: not $p processes: $means"
share() { awk -v q="$1" '$1 == q { print $2 }' <<<"$means"; }
case "$mode" in
  unbalanced)
    awk -v v="$(share 0)" 'BEGIN { exit !(v <= 0.3) }' ||
      fail "process 0 (the slow one) waits $(share 0) of a superstep on average"
    for ((q = 1; q < p; ++q)); do
      awk -v v="$(share "$q")" -v slow="$(share 0)" 'BEGIN { exit !(v >= 0.4 && v >= slow + 0.3) }' ||
        fail "process $q waits only $(share "$q") of a superstep on average (process 0: $(share 0))"
    done ;;
  balanced|setup)
    for ((q = 0; q < p; ++q)); do
      awk -v v="$(share "$q")" 'BEGIN { exit !(v < 0.75) }' ||
        fail "process $q waits $(share "$q") of a superstep on average in a balanced program"
    done ;;
  *) echo "pictures_test.sh: MODE is balanced, unbalanced or setup" >&2; exit 2 ;;
esac

if [ "$mode" = setup ]; then
  grep -q "cut by the scale" "$prof/profile.gp" || fail "the set-up superstep is not cut"
  setup_ms=$(sed -En "s/^set label [0-9]+ '([0-9.]+) ms' at 0(\.0)?, .*/\1/p" "$prof/profile.gp" | head -n 1)
  [ -n "$setup_ms" ] || fail "the set-up superstep (step 0) has no label with its time"
  # Below half the set-up superstep (400 ms of sleep): the scale is the other steps', which a
  # loaded machine (or a sanitized build) may stretch to tens of milliseconds.
  top=$(sed -n 's/^set yrange \[0:\([0-9.]*\)\]$/\1/p' "$prof/profile.gp" | head -n 1)
  awk -v t="$top" -v s="$setup_ms" 'BEGIN { exit !(t > 0 && t < s / 2) }' ||
    fail "the scale's top is $top ms, not below half the set-up superstep's $setup_ms ms"
fi
for picture in profile.png traffic.png; do
  [ "$(head -c 4 "$prof/$picture" | od -An -c | tr -d ' \n')" = '211PNG' ] || fail "$picture is not a PNG"
  [ -z "$keep" ] || cp "$prof/$picture" "$keep-$picture"
done
echo "PASS pictures $mode"
