#!/usr/bin/env bash
# without_tests_test.sh SOURCE_DIR MPI - configure bspg with -DBSPG_TESTS=OFF where GoogleTest
# cannot be found (CMAKE_DISABLE_FIND_PACKAGE_GTest): configuring must succeed, the build must hold
# the library, the tools and the benchmarks, and neither a test program nor a test.
set -euo pipefail
source=$1 mpi=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cmake -S "$source" -B "$work" -DBSPG_MPI="$mpi" -DBSPG_TESTS=OFF -DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON \
  >"$work/configure.log" 2>&1 || fail "configuring with BSPG_TESTS=OFF and no GoogleTest: $(grep -m3 -A2 'Error' "$work/configure.log")"
cmake --build "$work" --target help >"$work/targets" 2>&1 || fail "no target list"
for target in bspg bsprun bspprof bspbench bspratio bspg-hostinfo manpages; do
  grep -qE "^\.\.\. $target( |$)" "$work/targets" || fail "BSPG_TESTS=OFF builds no $target"
done
for target in bench_test bspg_internal bsprun_unit_tests; do
  ! grep -qE "^\.\.\. $target( |$)" "$work/targets" || fail "BSPG_TESTS=OFF still builds the test program $target"
done
tests=$(cd "$work" && ctest -N | sed -n 's/^Total Tests: //p')
[ "$tests" = 0 ] || fail "BSPG_TESTS=OFF still defines $tests tests"
echo "BSPG_TESTS=OFF configures without GoogleTest and builds no test"
