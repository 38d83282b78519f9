#!/usr/bin/env bash
# bspg.sh - set up, build and use bspg from a fresh checkout.
#
#   ./bspg.sh run      install what is missing, build, run a BSP program on 2 local processes
#   ./bspg.sh test     install what is missing, build, run the whole test suite (ctest)
#   ./bspg.sh bench    install what is missing, build, run the speed benchmarks against raw MPI
#   ./bspg.sh build    install what is missing and build only
#   ./bspg.sh setup    install what is missing for build and test, nothing else
#
# Environment: BSPG_MPI (openmpi or mpich; default: the distribution's default MPI, Open MPI on
# Debian), BUILD_DIR (default ./build, or ./build-mpich with BSPG_MPI=mpich), JOBS (default: the
# number of cores), BSPG_TESTS (all, the default, or core: the library's behaviour tests, the local
# launcher, one grid and one restart scenario; ctest -LE extended), BSPG_TESTS_MAX_PROCS (a test
# that runs on several process counts, NAME.p1, NAME.p2, ..., runs only on those up to this one;
# default: all), BSPG_CCACHE (an absolute directory: compile through ccache, installed when
# missing, keeping its cache there; for builds from scratch that repeat, as CI's one per MPI).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mpi=${BSPG_MPI:-}
case "$mpi" in
  ""|openmpi|mpich) ;;
  *) echo "bspg.sh: BSPG_MPI='$mpi': choose openmpi or mpich (or leave it unset for the default)" >&2
     exit 2 ;;
esac
if [ "$mpi" = mpich ]; then build=${BUILD_DIR:-$here/build-mpich}; else build=${BUILD_DIR:-$here/build}; fi
jobs=${JOBS:-$(nproc)}
tests=${BSPG_TESTS:-all}
case "$tests" in
  all) test_selection=() ;;
  core) test_selection=(-LE extended) ;;
  *) echo "bspg.sh: BSPG_TESTS='$tests': choose all or core" >&2; exit 2 ;;
esac
max_procs=${BSPG_TESTS_MAX_PROCS:-}
case "$max_procs" in
  ""|[1-9]) ;;
  *) echo "bspg.sh: BSPG_TESTS_MAX_PROCS='$max_procs': choose a process count from 1 to 9 (or leave it unset for all)" >&2
     exit 2 ;;
esac
ccache_dir=${BSPG_CCACHE:-}
case "$ccache_dir" in
  ""|/*) ;;
  *) echo "bspg.sh: BSPG_CCACHE='$ccache_dir': give an absolute directory (or leave it unset)" >&2
     exit 2 ;;
esac
# Tests side by side. Open MPI's processes sleep while they wait (the tests ask it to yield when
# idle), so most tests leave the cores idle and three per core finish in two thirds of the time;
# MPICH's poll, and more tests than cores only slow each other down.
if [ "$mpi" = mpich ]; then test_jobs=$jobs; else test_jobs=$((jobs * 3)); fi

# Debian packages bspg needs to build, test and run: the same names on Debian 12 and 13
# (libnetfilter-queue-dev and iptables: the tests' wide-area delay between emulated sites).
packages=(cmake g++ make pkg-config libssh-dev libhwloc-dev libdw-dev nlohmann-json3-dev libxxhash-dev
  lowdown groff-base
  libyaml-cpp-dev libgtest-dev libgmock-dev openssh-client openssh-server gnuplot-nox
  iproute2 util-linux procps man-db libnetfilter-queue-dev iptables
  # for the tests' emulated Slurm cluster (tests/launcher/emuslurm.sh)
  slurmctld slurmd slurm-client munge)
# Only `test` installs the database a test's emulated cluster keeps its accounts in (sacct):
# Debian enables its service, and nothing else of bspg needs it.
if [ "${1:-}" = test ] || [ "${1:-}" = setup ]; then packages+=(slurmdbd mariadb-server); fi
[ -z "$ccache_dir" ] || packages+=(ccache)
if [ "$mpi" = mpich ]; then
  packages+=(libmpich-dev mpich)
else
  packages+=(libopenmpi-dev openmpi-bin)
fi

say() { printf '\033[1m[bspg]\033[0m %s\n' "$*"; }

install_missing() {
  local missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  say "installing Debian packages: ${missing[*]}"
  local sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  "${sudo[@]}" apt-get update -qq
  # openssh-server must not start a system sshd: tests start their own, on loopback only.
  printf '#!/bin/sh\nexit 101\n' | "${sudo[@]}" tee /usr/sbin/policy-rc.d >/dev/null
  "${sudo[@]}" chmod +x /usr/sbin/policy-rc.d
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
  "${sudo[@]}" rm -f /usr/sbin/policy-rc.d
}

# build [TARGET...]: configures and builds everything, or only the targets named (and what they need).
build() {
  install_missing
  say "configuring and building in $build"
  local launcher=()
  if [ -n "$ccache_dir" ]; then
    mkdir -p -- "$ccache_dir"
    # The sources' absolute paths are the same in every build directory: builds for the other MPI
    # find what does not include mpi.h (most of it) in the cache.
    export CCACHE_DIR=$ccache_dir CCACHE_BASEDIR=$here
    launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  fi
  cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=Release -DBSPG_MPI="$mpi" -DBSPG_TESTS=ON \
    "${launcher[@]}" >/dev/null
  if [ $# -eq 0 ]; then cmake --build "$build" -j "$jobs"
  else cmake --build "$build" -j "$jobs" --target "$@"; fi
}

case "${1:-}" in
  build) build ;;
  setup) install_missing ;;
  run)
    build bsprun bspbench  # not the tests' programs
    say "running a BSP program on 2 processes: bsprun -p 2 bspbench --quick"
    exec "$build/bin/bsprun" -p 2 "$build/bin/bspbench" --quick ;;
  test)
    build
    if [ "$tests" = core ]; then say "running the core tests (ctest -LE extended)"
    else say "running the test suite"; fi
    cd "$build"
    if [ -n "$max_procs" ]; then
      say "leaving out the runs on more than $max_procs processes of tests that also run on fewer"
      fewer=$("$here/tests/fewer_procs.sh" "$max_procs")
      [ -z "$fewer" ] || test_selection+=(-E "$fewer")
    fi
    ctest --output-on-failure --timeout 600 -j "$test_jobs" "${test_selection[@]}" && exit 0
    # Many tests start whole MPI jobs side by side on few cores; a starter under that load now
    # and then loses a line or a deadline. A test that failed is run once more, alone: one that
    # fails again fails the suite, one that passes is named, never hidden.
    failed=Testing/Temporary/LastTestsFailed.log
    # More than a few is no flake: the suite has failed.
    [ -s "$failed" ] && [ "$(wc -l <"$failed")" -le 5 ] || exit 1
    names=$(sed 's/^[0-9]*:/  /' "$failed")
    say "running the $(wc -l <"$failed") failed test(s) once more, one at a time"
    # By name: --rerun-failed takes the numbers of the log, which under a selection (-LE, -E) may
    # name other tests.
    pattern=$(sed -e 's/^[0-9]*://' -e 's/[].*^$+?(){}|\\[]/\\&/g' "$failed" | paste -sd '|')
    ctest --output-on-failure --timeout 600 -R "^($pattern)\$" || exit 1
    say "WARNING: these tests failed under the parallel run and passed alone (flaky under load):"
    printf '%s\n' "$names" >&2 ;;
  bench)
    build bsprun bspratio bspcases bspbench launcher_ckpt_job
    say "bspratio: the three ratios against raw MPI (p=2)"
    "$build/bin/bsprun" -p 2 "$build/bin/bspratio"
    say "bspcases: the cases a BSPlib user on one machine meets first, against raw MPI (p=2)"
    "$build/bin/bsprun" -p 2 "$build/bin/bspcases"
    say "recovery_in_place: a lost process recovered in place against a restart (p=4; where the MPI can)"
    "$here/benchmarks/recovery_in_place.sh" "$build"
    say "bspbench: r, g and l for bspg and raw MPI (p=2)"
    exec "$build/bin/bsprun" -p 2 "$build/bin/bspbench" ;;
  -h|--help|help|"")
    sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
    [ -n "${1:-}" ] || exit 2 ;;
  *) echo "bspg.sh: unknown command '$1' (run, test, bench, build, setup)" >&2; exit 2 ;;
esac
