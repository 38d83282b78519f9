#!/usr/bin/env bash
# tests/fuzz/run.sh [SECONDS_PER_TARGET | build] - builds the fuzz targets of tests/fuzz with clang's
# libFuzzer under AddressSanitizer and UndefinedBehaviorSanitizer (build-fuzz/, -DBSPG_FUZZ=ON),
# replays every target's seed corpus and findings, then fuzzes each target for SECONDS_PER_TARGET
# (default 20) on a copy of its corpus (the repository's corpus does not grow). Installs clang
# when it is missing. Exits non-zero when a target crashes, naming the input that did it.
# `build` only builds them (CI builds them while other tests run).
#
# Targets run side by side, one per core. One target, longer, keeping what it finds in a corpus
# of your own (new inputs go into the first directory):
#   mkdir -p /tmp/rsl-corpus && build-fuzz/bin/fuzz_rsl -max_total_time=600 -rss_limit_mb=1024 \
#     -timeout=10 /tmp/rsl-corpus tests/fuzz/corpus/rsl
# Replay one input under the sanitizers:   build-fuzz/bin/fuzz_rsl crash-<sha1>
# Replay it in the normal build:           build/tests/fuzz_rsl crash-<sha1>
# Keep a crashing input as a test, once the reader is fixed: copy it to
# tests/fuzz/findings/<target>/<what-it-does> (a name that says what went wrong); the test
# fuzz.replay.<target> replays every file there from then on, and so does this script.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-20} build_only=
[ "$seconds" != build ] || build_only=1 seconds=0
case $seconds in '' | *[!0-9]*) echo "usage: $0 [SECONDS_PER_TARGET | build]" >&2; exit 2;; esac
targets=(rsl hostfile probe_answer host_answers profile_raw shard untrusted)

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
install_packages() {
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y "$@" >/dev/null ||
    { as_root apt-get update >/dev/null && as_root env DEBIAN_FRONTEND=noninteractive \
      apt-get install -y "$@" >/dev/null; }
}
fuzzer_runtime() {
  compgen -G '/usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a' >/dev/null
}
if ! command -v clang++ >/dev/null || ! fuzzer_runtime; then
  install_packages clang
  if ! fuzzer_runtime; then  # Debian 13 keeps the sanitizer runtimes apart from clang
    version=$(clang++ --version | sed -n 's/.*clang version \([0-9]*\).*/\1/p')
    install_packages "libclang-rt-$version-dev"
  fi
fi

start=$SECONDS
# -O1 and line tables: libFuzzer's usual build, fast enough to fuzz, with file and line in every
# report, in about half the compile time of -O2 -g.
CC=clang CXX=clang++ cmake -S . -B build-fuzz -DBSPG_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" >/dev/null
cmake --build build-fuzz --target fuzz_targets -j "$(nproc)" >/dev/null
echo "fuzz targets built in $((SECONDS - start)) s"
[ -z "$build_only" ] || exit 0

work=$(mktemp -d "${TMPDIR:-/tmp}/bspg-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
# Crash reports and reproducers stay after this script, where CI shows them.
artifacts=build-fuzz/fuzz-artifacts
rm -rf "$artifacts"
mkdir -p "$artifacts"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1
# One target: its kept inputs first (the findings must stay fixed), then new inputs into a copy
# of its corpus. Prints its report; fails when it crashed.
fuzz_target() {
  local target=$1 binary=build-fuzz/bin/fuzz_$1 corpus=$work/$1
  cp -r "tests/fuzz/corpus/$target" "$corpus"
  local inputs=("$corpus")
  [ -d "tests/fuzz/findings/$target" ] && inputs+=("tests/fuzz/findings/$target")
  if ! "$binary" -runs=0 "${inputs[@]}" >"$work/$target.replay.log" 2>&1; then
    tail -n 40 "$work/$target.replay.log"
    echo "fuzz_$target: a kept input crashes it (log above)"
    return 1
  fi
  if "$binary" -max_total_time="$seconds" -rss_limit_mb=1024 -timeout=10 -print_final_stats=1 \
      -artifact_prefix="$artifacts/$target-" "$corpus" >"$work/$target.log" 2>&1; then
    echo "fuzz_$target: $(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/$target.log" |
      grep -o '[0-9]*$') runs, nothing found"
    return 0
  fi
  tail -n 60 "$work/$target.log"
  echo "fuzz_$target found a crash; the input: $(sed -n 's/.*Test unit written to //p' \
    "$work/$target.log" | tail -n 1)"
  echo "  fix the reader, then keep the input as a test:" \
    "cp it to tests/fuzz/findings/$target/<what-it-does>"
  return 1
}

# As many targets at once as there are cores; each report whole, in the targets' order.
for target in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$(nproc)" ]; do wait -n || true; done
  { if fuzz_target "$target" >"$work/$target.report" 2>&1; then echo 0; else echo 1; fi; } \
    >"$work/$target.status" &
done
wait
failed=()
for target in "${targets[@]}"; do
  cat "$work/$target.report"
  [ "$(cat "$work/$target.status")" = 0 ] || failed+=("$target")
done
echo "fuzzing took $((SECONDS - start)) s in all"
if [ ${#failed[@]} -gt 0 ]; then
  echo "crashes in: ${failed[*]}" >&2
  exit 1
fi
