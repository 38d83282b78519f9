#!/usr/bin/env bash
# tests/fewer_procs.sh MAX - run in a build directory: prints a ctest -E regular expression that
# leaves out the runs on more than MAX processes (tests named NAME.pN or NAME_pN, N > MAX) of each
# test that also runs on MAX or fewer. A test that runs only on more is kept: nothing it checks is
# lost. Prints nothing when nothing is left out.
set -euo pipefail
max=${1:?usage: fewer_procs.sh MAX}
case "$max" in
  [1-9]) ;;
  *) echo "fewer_procs.sh: MAX='$max' is not a process count from 1 to 9" >&2; exit 2 ;;
esac
ctest -N | sed -n 's/^ *Test *#[0-9]*: //p' |
  awk -v max="$max" '
    match($0, /[._]p[0-9]+$/) {
      base = substr($0, 1, RSTART); procs = substr($0, RSTART + 2) + 0
      names[NR] = $0; bases[NR] = base; counts[NR] = procs
      if (procs <= max) few[base] = 1
    }
    END {
      out = ""
      for (i in names)
        if (counts[i] > max && (bases[i] in few)) {
          name = names[i]; gsub(/[.+]/, "[&]", name)
          out = out (out == "" ? "" : "|") name
        }
      if (out != "") print "^(" out ")$"
    }'
