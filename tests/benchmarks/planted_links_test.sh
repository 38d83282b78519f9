#!/usr/bin/env bash
# planted_links_test.sh BSPRUN BSPBENCH BSPRATIO - the benchmarks' files (bspbench's data, script
# and picture, bspratio's CSV) are never written through a symbolic link planted where they go:
# each such run ends with one line naming the file and the link, and the link's target is left
# as it was. The same files in a directory of this user's, or in /tmp, are written as before; a
# directory of another user is refused.
set -u
bsprun=$1 bspbench=$2 bspratio=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# planted NAME COMMAND...: NAME is a link to victim; the command must fail naming it.
planted() {
  local name=$1
  shift
  echo keep >victim
  rm -f "$name" && ln -s victim "$name"
  "$@" >out.log 2>&1
  local status=$?
  [ "$status" -ne 0 ] || fail "$name planted: exit 0"
  grep -q "cannot write .*$name: it is a symbolic link; refusing to follow it" out.log ||
    fail "$name planted: no line naming it: $(tr '\n' '|' <out.log | cut -c1-300)"
  [ "$(cat victim)" = keep ] || fail "$name planted: the link's target was written"
  rm -f "$name"
}
planted bench.dat "$bsprun" -p 1 "$bspbench" --quick --out bench --no-plot
planted bench.gp "$bsprun" -p 1 "$bspbench" --quick --out bench --no-plot
planted ratios.csv "$bsprun" -p 2 "$bspratio" --quick --csv ratios.csv
if command -v gnuplot >/dev/null; then
  planted bench.png "$bsprun" -p 1 "$bspbench" --quick --out bench
fi
# Unplanted: written.
"$bsprun" -p 1 "$bspbench" --quick --out fresh --no-plot >out.log 2>&1 ||
  fail "bspbench without planted links: $(tr '\n' '|' <out.log | cut -c1-300)"
[ -s fresh.dat ] && [ -s fresh.gp ] || fail "bspbench wrote no fresh.dat or fresh.gp"
# /tmp (root's, others may write, sticky): a file of this user's there is written; another user's
# directory is refused in one line.
tmp_csv=/tmp/bspg-planted-links-$$.csv
"$bsprun" -p 2 "$bspratio" --quick --csv "$tmp_csv" >out.log 2>&1 ||
  fail "bspratio --csv in /tmp: $(tr '\n' '|' <out.log | cut -c1-300)"
[ -s "$tmp_csv" ] || fail "bspratio wrote no $tmp_csv"
rm -f "$tmp_csv"
if [ "$(id -u)" = 0 ]; then
  mkdir other && chown 4321 other && chmod 0777 other
  "$bsprun" -p 2 "$bspratio" --quick --csv other/ratios.csv >out.log 2>&1 &&
    fail "bspratio --csv into another user's directory: exit 0"
  grep -q "cannot write other/ratios.csv: the directory other is owned by uid 4321 (another user); refusing to write into it" out.log ||
    fail "another user's directory: $(tr '\n' '|' <out.log | cut -c1-300)"
fi
[ "$failures" -eq 0 ] && echo "PASS planted_links"
