#!/usr/bin/env bash
# tests/sanitized.sh - builds bspg and its tests under AddressSanitizer and
# UndefinedBehaviorSanitizer (-DBSPG_SANITIZE=ON, in build-sanitize or build-sanitize-mpich) and
# runs the core test set there (ctest -LE extended). Fails when a test fails or when any process
# of any test (bsprun, the tools, every MPI process on every emulated host) met a sanitizer error,
# even where the test expected the process to fail: the reports are collected in
# BUILD/sanitizer-reports and printed.
#
# Environment: BSPG_MPI (openmpi, the default, or mpich), JOBS (default: the number of cores),
# BSPG_TESTS_MAX_PROCS (default 2: see below).
# Installs what ./bspg.sh test needs where it is missing (./bspg.sh setup).
# `tests/sanitized.sh build` builds and runs nothing (CI builds while something else downloads).
#
# Left out of this run (they run in every other build):
#   crash.heap.*  AddressSanitizer's allocator catches the double free itself (label unsanitized).
#   NAME.pN, N>2  runs on three or more processes of a test that also runs on one or two take the
#                 same code under the sanitizers (tests/fewer_procs.sh); tests only on more
#                 (beyond_4) still run. Every other build runs them all; here they would cost
#                 minutes (three sanitized processes on two cores) and find nothing new.
# Leaks are not reported here: MPI libraries keep what they allocate until exit. The readers of
# untrusted input are checked for leaks by tests/fuzz/run.sh.
set -euo pipefail
case "${1:-}" in
  "" | build) ;;
  *) echo "usage: tests/sanitized.sh [build]" >&2; exit 2 ;;
esac
here=$(cd "$(dirname "$0")/.." && pwd)
mpi=${BSPG_MPI:-openmpi}
case $mpi in
  openmpi) build=$here/build-sanitize; mpi_option="" ;;
  mpich) build=$here/build-sanitize-mpich; mpi_option=mpich ;;
  *) echo "sanitized.sh: BSPG_MPI='$mpi': choose openmpi or mpich" >&2; exit 2 ;;
esac
jobs=${JOBS:-$(nproc)}
max_procs=${BSPG_TESTS_MAX_PROCS:-2}
# As ./bspg.sh test: three tests per core with Open MPI, whose waiting processes sleep.
if [ "$mpi" = mpich ]; then test_jobs=$jobs; else test_jobs=$((jobs * 3)); fi
say() { printf '\033[1msanitized.sh: %s\033[0m\n' "$*"; }

BSPG_MPI=$mpi "$here/bspg.sh" setup
say "building under AddressSanitizer and UndefinedBehaviorSanitizer in $build"
# -O1 -g1: the sanitizers' usual optimisation, and line tables for their reports; it builds in
# about half the time of -O2 -g.
cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBSPG_SANITIZE=ON \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
  -DBSPG_MPI="$mpi_option" >/dev/null
cmake --build "$build" -j "$jobs" >/dev/null
[ "${1:-}" != build ] || exit 0

reports=$build/sanitizer-reports
rm -rf "$reports"
mkdir -p "$reports"
# Every report goes to a file of its own (a test expecting a failure would pass on a report on its
# standard error). The sanitizers' signal handlers stay out: bspg's crash line is under test.
export ASAN_OPTIONS="detect_leaks=0:handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_abort=0:log_path=$reports/asan"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$reports/ubsan"
[ "$(id -u)" -ne 0 ] || export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

say "running the core tests (ctest -LE 'extended|unsanitized'), up to $max_procs processes where a test runs on several"
cd "$build"
status=0
fewer=$("$here/tests/fewer_procs.sh" "$max_procs")
if ! ctest --output-on-failure --timeout 600 -j "$test_jobs" -LE 'extended|unsanitized' ${fewer:+-E "$fewer"}; then
  # As ./bspg.sh test: a few failures under the parallel run are run once more, alone.
  failed=Testing/Temporary/LastTestsFailed.log
  if [ -s "$failed" ] && [ "$(wc -l <"$failed")" -le 5 ]; then
    say "running the $(wc -l <"$failed") failed test(s) once more, one at a time"
    # By name: --rerun-failed takes the numbers of the log, which under a selection (-LE, -E) may
    # name other tests.
    names=$(sed -e 's/^[0-9]*://' -e 's/[].*^$+?(){}|\\[]/\\&/g' "$failed" | paste -sd '|')
    ctest --output-on-failure --timeout 600 -R "^($names)\$" || status=1
  else
    status=1
  fi
fi

shopt -s nullglob
found=("$reports"/*)
if [ ${#found[@]} -gt 0 ]; then
  say "${#found[@]} sanitizer report(s), in $reports:"
  for report in "${found[@]}"; do
    printf '\n---- %s\n' "$report"
    head -n 40 "$report"
  done
  status=1
fi
[ $status -eq 0 ] && say "no test failed, no sanitizer report"
exit $status
