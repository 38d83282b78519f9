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
run() { timeout 60 "${mpirun[@]}" -np 2 "$@"; }
expect='process 0 collected pids summing to 1 (expected 1)'

"$prefix/bin/bspcc" "$source/bsplib/examples/hello.c" -o "$work/by_bspcc"
run "$work/by_bspcc" | grep -qF "$expect" || { echo "FAIL: program built with the installed bspcc"; exit 1; }

export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
# pkg-config escapes the space in the prefix for a shell: eval undoes it, as a Makefile's shell would.
eval "cc \"\$source/bsplib/examples/hello.c\" $(pkg-config --cflags --libs bspg) -o \"\$work/by_pkgconfig\""
run "$work/by_pkgconfig" | grep -qF "$expect" || { echo "FAIL: program built with pkg-config bspg"; exit 1; }

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
run "$work/app/build/app" | grep -qF "$expect" || { echo "FAIL: program built with find_package(bspg)"; exit 1; }
echo "installed bspg works with bspcc, pkg-config and find_package"
