#!/usr/bin/env bash
# whole_lines_test.sh - every line a process prints reaches bsprun's stdout or stderr whole, and
# none is lost (progs/long_lines.c), with and without --tag-output.
#
#   whole_lines_test.sh BSPRUN LONG_LINES P [BSPRUN_OPTIONS...]
#
# Runs "BSPRUN [BSPRUN_OPTIONS...] LONG_LINES P". Each line must be one letter repeated (process
# pid prints 'a' + pid) with --tag-output after "[pid] " naming its process, each process's
# lines of each length counted exactly, stdout's on stdout and stderr's on stderr.
set -u
bsprun=$1 prog=$2 procs=$3
shift 3
tagged=0
for o in "$@"; do [ "$o" = --tag-output ] && tagged=1; done
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
# --quiet: stderr holds the program's lines only (no notice of more processes than cores).
timeout --kill-after=5 -s TERM 150 "$bsprun" --quiet "$@" "$prog" "$procs" >"$out" 2>"$err" </dev/null
status=$?
fail=0
[ $status -eq 0 ] || { echo "FAIL: bsprun exited with $status"; fail=1; }

# check FILE STREAM EXPECTED: EXPECTED is "length:count ..." per process.
check() {
  awk -v procs="$procs" -v tagged="$tagged" -v stream="$2" -v expected="$3" '
    {
      line = $0
      if (tagged) {
        if (!match(line, /^\[[0-9]+\] /)) { bad++; if (bad < 4) printf "%s line %d: no [pid] prefix (%d bytes: %.40s...)\n", stream, NR, length(line), line; next }
        pid = substr(line, 2, RLENGTH - 3) + 0
        line = substr(line, RLENGTH + 1)
      }
      c = substr(line, 1, 1)
      rest = line
      n = gsub(c, "", rest)
      if (c !~ /^[a-z]$/ || n != length(line) || (tagged && c != sprintf("%c", 97 + pid))) {
        bad++
        if (bad < 4) printf "%s line %d is not whole: %d bytes, begins %.40s\n", stream, NR, length($0), $0
        next
      }
      count[c ":" length(line)]++
    }
    END {
      split(expected, want, " ")
      for (p = 0; p < procs; p++) {
        c = sprintf("%c", 97 + p)
        for (w in want) {
          split(want[w], lc, ":")
          got = count[c ":" lc[1]] + 0
          if (got != lc[2]) { bad++; printf "%s: process %d printed %d lines of %d letters, %d arrived\n", stream, p, lc[2], lc[1], got }
        }
      }
      exit bad > 0
    }' "$1" || fail=1
}
check "$out" stdout "20480:6 102400:3 3:3072"
check "$err" stderr "20480:3"
if [ $fail -ne 0 ]; then
  echo "FAIL: bsprun $* long_lines $procs (stdout $(wc -c <"$out") bytes, stderr $(wc -c <"$err") bytes)"
  exit 1
fi
echo "PASS: whole lines at p = $procs ($*)"
