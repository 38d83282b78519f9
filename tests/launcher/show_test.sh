#!/usr/bin/env bash
# show_test.sh BSPRUN PROGRAM - bsprun --show prints the starter's command line that a run with
# the same options starts (as --verbose reports it), starts no process, and exits 0; on this
# machine with -p, with --restarts and --profile, and in master mode. The parts that differ from
# run to run (bsprun's output directory, the job id, the run's id, the profile's job token and the
# exit notes' directory) are compared by their form (NAME=VALUE for Open MPI, NAME VALUE for MPICH).
set -u
bsprun=$1 program=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
normalised() {
  sed -E 's/bsprun-output-[^ :]*/OUTPUT/g; s/[0-9]{8}-[0-9]{6}-[0-9a-f]{6}/JOB/g;
    s/(BSPG_RUN[= ])[0-9a-f]{16}/\1ID/g; s/(BSPG_PROFILE_JOB[= ])[0-9]+/\1N/g;
    s/bspg-exits-[A-Za-z0-9]*/EXITS/g'
}
check() {  # check NAME BSPRUN-OPTIONS...
  local name=$1
  shift
  "$bsprun" --quiet --show "$@" "$program" >"$work/show" 2>"$work/show.err"
  local status=$?
  [ "$status" -eq 0 ] || { echo "FAIL: $name: --show exits $status: $(cat "$work/show.err")"; fail=1; }
  [ "$(wc -l <"$work/show")" -eq 1 ] || { echo "FAIL: $name: --show printed:"; cat "$work/show"; fail=1; }
  if grep -q '^rank ' "$work/show" "$work/show.err"; then echo "FAIL: $name: --show started the program"; fail=1; fi
  "$bsprun" --quiet --verbose "$@" "$program" >"$work/run" 2>"$work/run.err" ||
    { echo "FAIL: $name: the run failed: $(cat "$work/run.err")"; fail=1; }
  grep -q '^rank 0 ' "$work/run" || { echo "FAIL: $name: the run did not run"; fail=1; }
  sed -n 's/^bsprun: \(.*mpi[a-z]*\(\.[a-z]*\)\{0,1\} .*\)$/\1/p' "$work/run.err" | head -n 1 >"$work/started"
  if [ "$(normalised <"$work/show")" != "$(normalised <"$work/started")" ]; then
    echo "FAIL: $name: --show printed"
    normalised <"$work/show"
    echo "but the run started"
    normalised <"$work/started"
    fail=1
  else
    echo "ok: $name: $(normalised <"$work/show")"
  fi
}
check "-p 2" -p 2
check "-p 2 --restarts 1 --profile" -p 2 --restarts 1 --profile "$work/prof"
check "master mode" --max-procs 2
[ ! -e "$work/prof.show" ] || { echo "FAIL: --show made files"; fail=1; }
exit "$fail"
