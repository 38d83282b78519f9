#!/usr/bin/env bash
# install_test.sh BUILD_DIR SOURCE_DIR MPIRUN - install bspg into a prefix that holds only another
# BSPlib's bsp.h (a stand-in that fails to compile), check the layout (headers under include/bspg,
# bspg's own benchmarks under libexec/bspg, the stand-in untouched), and build a BSPlib program the
# ways a user would: the installed bspcc, pkg-config and CMake's find_package(bspg), then pkg-config
# and find_package on the build tree. Each program must run on 2 processes and print process 0's
# result; the installed programs must run without LD_LIBRARY_PATH.
set -euo pipefail
build=$1 source=$2
read -ra mpirun <<<"$3"  # the starter and its options (root, beyond the cores)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix with space"
mkdir -p "$prefix/include"
stand_in='#error "the bsp.h of another BSPlib was included, not bspg'"'"'s"'
printf '%s\n' "$stand_in" >"$prefix/include/bsp.h"
cmake --install "$build" --prefix "$prefix" >/dev/null
fail() { echo "FAIL: $*"; exit 1; }
[ "$(cat "$prefix/include/bsp.h")" = "$stand_in" ] || fail "the install overwrote PREFIX/include/bsp.h"
for header in bsp.h bspg.h bsp.hpp mcbsp.h mcbsp.hpp bsp_level1.h; do
  [ -f "$prefix/include/bspg/$header" ] || fail "no PREFIX/include/bspg/$header"
  [ "$header" = bsp.h ] || [ ! -e "$prefix/include/$header" ] || fail "PREFIX/include/$header installed"
done
for tool in bsprun bspcc bspcxx bspprof bspbench bspg-hostinfo; do
  [ -x "$prefix/bin/$tool" ] || fail "no PREFIX/bin/$tool"
done
for bench in bspratio bspcases bspscale bspwan bspprofcost; do
  [ ! -e "$prefix/bin/$bench" ] || fail "$bench installed in PREFIX/bin"
  [ -x "$prefix/libexec/bspg/$bench" ] || fail "no PREFIX/libexec/bspg/$bench"
done
# Installed programs find the installed library by themselves.
unset LD_LIBRARY_PATH
"$prefix/bin/bspbench" --help >"$work/output" 2>&1 || fail "installed bspbench --help: $(head -3 "$work/output")"
"$prefix/libexec/bspg/bspratio" --help >"$work/output" 2>&1 ||
  fail "installed libexec/bspg/bspratio --help: $(head -3 "$work/output")"
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
# ... and through the installed bsprun.
timeout 60 "$prefix/bin/bsprun" -q -p 2 "$work/by_bspcc" >"$work/output" 2>&1 || true
grep -qF "$expect" "$work/output" || fail "installed bsprun -p 2: $(tr '\n' '|' <"$work/output" | cut -c1-400)"

export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
# pkg-config escapes the space in the prefix for a shell: eval undoes it, as a Makefile's shell would.
eval "cc \"\$source/bsplib/examples/hello.c\" $(pkg-config --cflags --libs bspg) -o \"\$work/by_pkgconfig\""
run "pkg-config bspg" "$work/by_pkgconfig"

mkdir "$work/app"
cat >"$work/app/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.18)
project(app C)
find_package(bspg REQUIRED)
add_executable(app "$source/bsplib/examples/hello.c")
target_link_libraries(app PRIVATE bspg::bspg)
CMAKE
cmake -S "$work/app" -B "$work/app/build" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/app/build" >/dev/null
run "find_package(bspg)" "$work/app/build/app"

# The build tree serves the same two users, without installing.
export PKG_CONFIG_PATH="$build/lib/pkgconfig"
eval "cc \"\$source/bsplib/examples/hello.c\" $(pkg-config --cflags --libs bspg) -o \"\$work/by_build_pkgconfig\""
run "pkg-config bspg of the build tree" "$work/by_build_pkgconfig"
cmake -S "$work/app" -B "$work/app/build-tree" -DCMAKE_PREFIX_PATH="$build" >/dev/null
cmake --build "$work/app/build-tree" >/dev/null
run "find_package(bspg) of the build tree" "$work/app/build-tree/app"
echo "installed bspg works with bspcc, bsprun, pkg-config and find_package, and so does the build tree"
