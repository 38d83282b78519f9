#!/usr/bin/env bash
# install_test.sh BUILD_DIR SOURCE_DIR MPIRUN - install bspg into a fresh prefix and build a BSPlib
# program three ways a user would: the installed bspcc, pkg-config, and CMake's find_package(bspg).
# Each program must run on 2 processes and print process 0's result.
set -euo pipefail
build=$1 source=$2
read -ra mpirun <<<"$3"  # the starter and its options (root, beyond the cores)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix with space" >/dev/null
prefix="$work/prefix with space"
expect='process 0 collected pids summing to 1 (expected 1)'
# run WHAT PROGRAM: runs PROGRAM on 2 processes; on a wrong answer says so with its output and
# exit status, and fails.
run() {
  local what=$1 status=0
  shift
  timeout 60 "${mpirun[@]}" -np 2 "$@" >"$work/output" 2>&1 || status=$?
  grep -qF "$expect" "$work/output" && return 0
  echo "FAIL: program built with $what (exit status $status); its output:"
  sed 's/^/  | /' "$work/output"
  exit 1
}

"$prefix/bin/bspcc" "$source/bsplib/examples/hello.c" -o "$work/by_bspcc"
run "the installed bspcc" "$work/by_bspcc"

export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
# pkg-config escapes the space in the prefix for a shell: eval undoes it, as a Makefile's shell would.
eval "cc \"\$source/bsplib/examples/hello.c\" $(pkg-config --cflags --libs bspg) -o \"\$work/by_pkgconfig\""
run "pkg-config bspg" "$work/by_pkgconfig"

mkdir "$work/app"
cat > "$work/app/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.18)
project(app C)
find_package(bspg REQUIRED)
add_executable(app "$source/bsplib/examples/hello.c")
target_link_libraries(app PRIVATE bspg::bspg)
CMAKE
cmake -S "$work/app" -B "$work/app/build" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/app/build" >/dev/null
run "find_package(bspg)" "$work/app/build/app"
echo "installed bspg works with bspcc, pkg-config and find_package"
