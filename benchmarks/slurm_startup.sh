#!/usr/bin/env bash
# slurm_startup.sh - start-up through Slurm: bsprun -p P (probe through srun, placement, one job
# step by the MPI's Slurm launcher) against `srun --mpi=pmix -n P` and `mpirun -n P` of a plain
# MPI program, all inside one allocation of the same nodes of an emulated Slurm cluster.
#
#   benchmarks/slurm_startup.sh [--build DIR] [--nodes N] [--procs P] [--reps R]
#
# Starts N emulated nodes with 2 CPUs each (tests/launcher/emuslurm.sh: slurmctld, munged, one
# slurmd per node in namespaces of its own), then inside `salloc -N N --exclusive` times R runs of
# each command, interleaved, and prints the median wall time of each, its ratio to srun's, and
# the median time bsprun spent probing (bsprun -v). The programs do no work: the build's `hello`
# for bsprun, benchmarks/mpi_hello.c (MPI_Init, MPI_Allreduce, MPI_Finalize) built with the MPI's
# compiler for the others. Needs root, unshare, Slurm and munge; runs sealed (tests/sealed.sh).
# Defaults: build/, N = 4, P = 8, R = 11.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$here/build nodes=4 procs=8 reps=11
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$(cd "$2" && pwd); shift 2 ;;
    --nodes) nodes=$2; shift 2 ;;
    --procs) procs=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "slurm_startup.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
for v in "$nodes" "$procs" "$reps"; do
  [[ $v =~ ^[1-9][0-9]{0,2}$ ]] || { echo "slurm_startup.sh: counts must be 1-999, not '$v'" >&2; exit 2; }
done
"$here/tests/sealed.sh" --check || exec "$here/tests/sealed.sh" --or-skip "$0" --build "$build" \
  --nodes "$nodes" --procs "$procs" --reps "$reps"

dir=$(mktemp -d /tmp/bspg-slurm-bench-XXXXXX)
trap '"$here/tests/launcher/emuslurm.sh" stop "$dir" >/dev/null 2>&1; rm -rf "$dir"' EXIT
mpicc=$(sed -n 's/^MPI_C_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt" | head -1)
[ -x "${mpicc:-}" ] || mpicc=mpicc
"$mpicc" -O2 -o "$dir/mpi_hello" "$here/benchmarks/mpi_hello.c"
loads=()
for ((i = 0; i < nodes; i++)); do loads+=(0); done
echo "starting $nodes emulated Slurm nodes in $dir" >&2
"$here/tests/launcher/emuslurm.sh" start "$dir" "${loads[@]}" >/dev/null
# shellcheck disable=SC1091
. "$dir/slurm.env"
export OMPI_MCA_mpi_yield_when_idle=1

cat >"$dir/inside.sh" <<EOF
set -u
now() { date +%s.%N; }
# failed WHAT FILE: says which command failed, with what it printed, and ends the runs.
failed() { echo "slurm_startup.sh: \$1 failed; it said:" >&2; sed 's/^/  | /' "\$2" >&2; exit 1; }
# The MPI's starter, as bsprun runs it (its first word in bsprun -v), with Open MPI's flag for root.
"$build/bin/bsprun" -v -p 1 "$build/bin/hello" >/dev/null 2>"$dir/bsprun.err" ||
  failed "bsprun -p 1" "$dir/bsprun.err"
starter=\$(sed -n 's/^bsprun: \\(\\/[^ ]*\\(mpirun\\|mpiexec\\)[^ ]*\\) .*/\\1/p' "$dir/bsprun.err" | head -1)
root=()
case "\$starter" in *mpich*) ;; *) [ "\$(id -u)" -ne 0 ] || root=(--allow-run-as-root) ;; esac
for ((r = 0; r < $reps; r++)); do
  t0=\$(now); "$build/bin/bsprun" -v -p $procs "$build/bin/hello" >/dev/null 2>"$dir/bsprun.err" ||
    failed "bsprun -p $procs" "$dir/bsprun.err"
  t1=\$(now); srun --mpi=pmix -n $procs "$dir/mpi_hello" >/dev/null 2>"$dir/other.err" ||
    failed "srun -n $procs" "$dir/other.err"
  t2=\$(now); "\$starter" "\${root[@]}" -n $procs "$dir/mpi_hello" >/dev/null 2>"$dir/other.err" ||
    failed "\$starter -n $procs" "$dir/other.err"
  t3=\$(now)
  probe=\$(sed -n 's/^bsprun: probing through srun took \([0-9.]*\) s$/\1/p' "$dir/bsprun.err")
  echo "\$t0 \$t1 \$t2 \$t3 \${probe:-nan}"
done
EOF
salloc --quiet -N "$nodes" --exclusive bash "$dir/inside.sh" >"$dir/times" ||
  { echo "slurm_startup.sh: the runs inside salloc -N $nodes failed" >&2; exit 1; }
awk -v procs="$procs" -v nodes="$nodes" '
  function median(a, n,   i, j, t) {
    for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  { n++; b[n] = $2 - $1; s[n] = $3 - $2; m[n] = $4 - $3; p[n] = $5 }
  END {
    mb = median(b, n); ms = median(s, n); mm = median(m, n); mp = median(p, n)
    printf "start-up inside salloc -N %d (2 CPUs a node), %d processes, medians of %d runs\n", nodes, procs, n
    printf "| command | median wall time | ratio to srun |\n|---|---|---|\n"
    printf "| bsprun -p %d hello (of which probing through srun: %.2f s) | %.2f s | %.2fx |\n", procs, mp, mb, mb / ms
    printf "| srun --mpi=pmix -n %d mpi_hello | %.2f s | 1.00x |\n", procs, ms
    printf "| the MPI starter -n %d mpi_hello | %.2f s | %.2fx |\n", procs, mm, mm / ms
  }' "$dir/times"
