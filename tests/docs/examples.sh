#!/usr/bin/env bash
# examples.sh - the user guide's example commands (docs/*.md, the lines of its code blocks that
# run build/bin/bsprun), so that tests run them as the guide shows them.
#
#   examples.sh list KIND SOURCE_DIR
#       prints the examples of KIND, one per line, without their comments: local (this machine),
#       grid (with --hostfile) or slurm (inside salloc). The grid and Slurm scenarios of
#       tests/launcher run those with --show on emulated hosts and an emulated Slurm cluster.
#   examples.sh run-local SOURCE_DIR BUILD_DIR
#       runs every local example in an empty directory, its ./prog the build's hello world, and
#       checks that each ends with status 0 and prints what hello prints; --profile DIR examples
#       must leave DIR/supersteps.csv.
set -u
mode=${1:?mode}
examples() {  # SOURCE_DIR: "FILE<TAB>COMMAND" for every example
  local f
  for f in "$1"/docs/*.md; do
    awk -v file="${f##*/}" '/^```/ { inside = !inside; next }
      inside && /(^| )build\/bin\/bsprun / { sub(/ *#.*$/, ""); print file "\t" $0 }' "$f"
  done
}
kind_of() {
  case "$1" in
    salloc*|sbatch*|srun*) echo slurm ;;
    *--hostfile*|*--rsl*) echo grid ;;
    *) echo local ;;
  esac
}
case "$mode" in
  list)
    kind=${2:?kind} source=${3:?source dir}
    examples "$source" | while IFS=$'\t' read -r _ command; do
      [ "$(kind_of "$command")" = "$kind" ] && echo "$command"
    done
    exit 0 ;;
  run-local)
    source=${2:?source dir} build=${3:?build dir}
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    cp "$build/bin/hello" "$work/prog"
    n=0 failed=0
    while IFS=$'\t' read -r file command; do
      [ "$(kind_of "$command")" = local ] || continue
      n=$((n + 1))
      read -ra words <<<"$command"
      words[0]=$build/bin/bsprun
      status=0
      (cd "$work" && timeout 120 "${words[@]}") >"$work/out" 2>&1 || status=$?
      if [ "$status" -ne 0 ] || ! grep -q "^process 0 collected pids summing to " "$work/out"; then
        echo "FAIL: $file: '$command' ended with status $status: $(tail -3 "$work/out" | tr '\n' '|')"
        failed=1
      fi
      for ((i = 0; i < ${#words[@]}; ++i)); do
        if [ "${words[i]}" = --profile ] && [ ! -s "$work/${words[i + 1]}/supersteps.csv" ]; then
          echo "FAIL: $file: '$command' left no ${words[i + 1]}/supersteps.csv"
          failed=1
        fi
      done
    done < <(examples "$source")
    [ "$n" -gt 0 ] || { echo "FAIL: no local example found in $source/docs"; exit 1; }
    [ "$failed" -eq 0 ] || exit 1
    echo "docs: the guide's $n examples on this machine ran"
    exit 0 ;;
  *) echo "examples.sh: MODE is list or run-local" >&2; exit 2 ;;
esac
