#!/usr/bin/env bash
# check_known.sh DIR P [checkpoint] - checks DIR/supersteps.csv, DIR/profile.json and
# DIR/profile.png of a profiled run of known_supersteps.c at P processes, row by row: what each
# process put, got and sent in each superstep, and who waited for whom in superstep 2.
set -u
dir=$1 p=$2 checkpoint=${3:-}
csv=$dir/supersteps.csv
fail() { echo "FAIL: $*" >&2; exit 1; }
[ -s "$csv" ] || fail "no $csv"
for column in superstep pid compute_s sync_s wait_s bytes_out bytes_in messages_out messages_in \
              h_bytes kind group attempt; do
  head -n 1 "$csv" | tr ',' '\n' | grep -qx "$column" || fail "no column '$column' in $csv"
done

# Every row as "superstep kind group pid bytes_out bytes_in messages_out messages_in h_bytes
# compute_s wait_s sync_s", found by the header's names.
rows=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; ++i) c[$i] = i; next }
  { print $c["superstep"], $c["kind"], $c["group"], $c["pid"], $c["bytes_out"], $c["bytes_in"],
          $c["messages_out"], $c["messages_in"], $c["h_bytes"], $c["compute_s"], $c["wait_s"],
          $c["sync_s"] }' "$csv")
row() { awk -v s="$1" -v k="$2" -v q="$3" '$1 == s && $2 == k && $4 == q' <<<"$rows"; }
field() { awk -v n="$1" '{ print $n }'; }

# Supersteps 1..5: a put of 100*(s+1) bytes to the right neighbour; in 3 also a get of 64 bytes
# from the left one (64 out of each server, 64 into each getter); in 4 a 1004-byte message (a
# 4-byte tag and 1000 bytes) from every process to process 0.
for s in 1 2 3 4 5; do
  for ((q = 0; q < p; ++q)); do
    r=$(row "$s" sync "$q")
    [ -n "$r" ] || fail "no row for superstep $s, process $q"
    out=$((100 * (s + 1))) in=$((100 * (s + 1))) mout=1 min=1
    if [ "$s" = 3 ] && [ "$p" -gt 1 ]; then out=$((out + 64)) in=$((in + 64)) mout=2 min=2; fi
    if [ "$s" = 3 ] && [ "$p" = 1 ]; then out=$((out + 64)) in=$((in + 64)) mout=2 min=2; fi
    if [ "$s" = 4 ]; then
      out=$((out + 1004)) mout=2
      if [ "$q" = 0 ]; then in=$((in + 1004 * p)) min=$((1 + p)); fi
    fi
    [ "$(field 5 <<<"$r")" = "$out" ] || fail "superstep $s, process $q: bytes_out $(field 5 <<<"$r"), not $out"
    [ "$(field 6 <<<"$r")" = "$in" ] || fail "superstep $s, process $q: bytes_in $(field 6 <<<"$r"), not $in"
    [ "$(field 7 <<<"$r")" = "$mout" ] || fail "superstep $s, process $q: messages_out $(field 7 <<<"$r"), not $mout"
    [ "$(field 8 <<<"$r")" = "$min" ] || fail "superstep $s, process $q: messages_in $(field 8 <<<"$r"), not $min"
  done
done
# The h-relation of superstep 4 is process 0's incoming bytes.
h4=$(row 4 sync 0 | field 9)
[ "$h4" = $((500 + 1004 * p)) ] || fail "superstep 4: h_bytes $h4, not $((500 + 1004 * p))"

# Superstep 2: process 1 % P computed 40 ms; with P > 1 the others waited for it at the sync.
slow=$((1 % p))
c=$(row 2 sync "$slow" | field 10)
awk -v c="$c" 'BEGIN { exit !(c >= 0.035) }' || fail "superstep 2: process $slow computed $c s, not >= 0.035"
for ((q = 0; q < p; ++q)); do
  [ "$q" = "$slow" ] && continue
  w=$(row 2 sync "$q" | field 11)
  awk -v w="$w" 'BEGIN { exit !(w >= 0.02) }' || fail "superstep 2: process $q waited $w s, not >= 0.02"
done
# Waiting is part of the sync, never more than it.
awk '{ if ($11 < 0 || $11 > $12 + 1e-9) { print "wait " $11 " outside 0.." $12 " in: " $0; exit 1 } }' \
  <<<"$rows" || fail "a wait_s outside 0..sync_s"

# The group sync of the even processes (8 bytes each to itself), the checkpoint, bsp_end.
if [ "$p" -gt 1 ]; then
  n=$(awk '$2 == "group_sync"' <<<"$rows" | wc -l)
  [ "$n" = "$p" ] || fail "$n group_sync rows, not $p"
  awk '$2 == "group_sync" && ($5 != 8 || $6 != 8)' <<<"$rows" | grep -q . &&
    fail "a group_sync row without its 8 bytes"
fi
if [ -n "$checkpoint" ]; then
  [ "$(awk '$2 == "checkpoint"' <<<"$rows" | wc -l)" = "$p" ] || fail "not $p checkpoint rows"
fi
[ "$(awk '$2 == "end"' <<<"$rows" | wc -l)" = "$p" ] || fail "not $p end rows"

# profile.json: a track (process_name) and compute slices for every process.
json=$dir/profile.json
[ -s "$json" ] || fail "no $json"
grep -q '"traceEvents"' "$json" || fail "no traceEvents in $json"
for ((q = 0; q < p; ++q)); do
  tr '{' '\n' <"$json" | grep '"process_name"' | grep -q "\"pid\": *$q[,}]" ||
    fail "no track for process $q in $json"
  tr '{' '\n' <"$json" | grep '"name": *"compute"' | grep -q "\"pid\": *$q[,}]" ||
    fail "no compute slice of process $q in $json"
done
# Who sent whom how much over the whole run (traffic.csv, in the data's direction): every
# process its right neighbour 2000 bytes in 5 puts and, through that neighbour's get in
# superstep 3, 64 bytes more; process 0 a 1004-byte message; with p >= 2 itself 8 bytes (the
# group superstep's put).
traffic=$dir/traffic.csv
[ "$(head -n 1 "$traffic" 2>/dev/null)" = "from,to,bytes,messages" ] || fail "no $traffic with its header"
expected=$(awk -v p="$p" 'BEGIN {
  for (s = 0; s < p; ++s) {
    r = (s + 1) % p; b[s "," r] += 2064; m[s "," r] += 6
    b[s ",0"] += 1004; m[s ",0"] += 1
    if (p >= 2) { b[s "," s] += 8; m[s "," s] += 1 }
  }
  for (k in b) print k "," b[k] "," m[k] }' | sort)
actual=$(tail -n +2 "$traffic" | sort)
[ "$actual" = "$expected" ] ||
  fail "$traffic holds $(echo "$actual" | tr '\n' ' ')instead of $(echo "$expected" | tr '\n' ' ')"
# The pictures.
if command -v gnuplot >/dev/null; then
  [ "$(head -c 4 "$dir/traffic.png" | od -An -c | tr -d ' \n')" = '211PNG' ] ||
    fail "$dir/traffic.png is not a PNG"
  [ "$(head -c 4 "$dir/profile.png" | od -An -c | tr -d ' \n')" = '211PNG' ] ||
    fail "$dir/profile.png is not a PNG"
fi
echo "profile ok: $(($(wc -l <"$csv") - 1)) rows"
