#!/usr/bin/env bash
# wan_sites.sh - bspwan across two emulated sites with a wide-area delay between them, at several
# delays: bspg's supersteps against plain MPI on the same hosts (issue: grid-grade supersteps).
#
#   benchmarks/wan_sites.sh [--build DIR] [--delays "0 5 25"] [--reps N] [--words H] [--procs P]
#                           [--transport one-sided|two-sided] [--bspbench] [--startup]
#                           [--sites "1 1 2 2 3 3"] [--cases LIST]
#
# Starts 2P emulated hosts (tests/launcher/emuhosts.sh: an sshd each, in namespaces of its own),
# P at site 1 and P at site 2, one slot each, the sites' packets held D ms one way by
# tests/launcher's netdelay (iptables NFQUEUE), bsprun at site 1; runs
#   bsprun -p 2P --hostfile hosts.yaml bspwan --reps N --words H
# for each delay D, stops the hosts, and prints one table: case x delay, bspg and MPI medians and
# their ratio. Needs root, unshare, sshd and iptables-legacy; runs sealed (tests/sealed.sh), so no
# packet leaves the machine. Defaults: build/, delays 0 5 25 ms, 11 repetitions, h = 1000, P = 2;
# --transport passes BSPG_TRANSPORT (bsp(3)) to the job, to compare bspg's two ways of moving data.
# --bspbench runs bspbench --hmax H --reps N --no-plot instead, and prints its g and l inside the
# sites and across them for each delay. --startup times start-up instead (Open MPI): N runs of
# `bsprun -p 2P --hostfile hosts.yaml hello` interleaved with plain `mpirun -np 2P` of the same
# hello and of benchmarks/mpi_hello.c (no bspg) on the same hosts over the same ssh
# configuration; medians, and bsprun's ratio to mpirun of the same program.
# --sites gives each host's site instead (one process a host; e.g. "1 1 2 2 3 3": three sites of
# two), --procs is then ignored; --cases passes bspwan's --cases (rows to run).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$here/build delays="0 5 25" reps=11 words=1000 procs=2 transport= program=bspwan sites= cases=
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$(cd "$2" && pwd); shift 2 ;;
    --delays) delays=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --words) words=$2; shift 2 ;;
    --procs) procs=$2; shift 2 ;;
    --transport) transport=$2; shift 2 ;;
    --sites) sites=$2; shift 2 ;;
    --cases) cases=$2; shift 2 ;;
    --bspbench) program=bspbench; shift ;;
    --startup) program=startup; shift ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "wan_sites.sh: unknown argument '$1' (--help)" >&2; exit 2 ;;
  esac
done
[[ $delays =~ ^[0-9]+( [0-9]+)*$ ]] || { echo "wan_sites.sh: --delays takes whole milliseconds, e.g. \"0 5 25\"" >&2; exit 2; }
[[ $procs =~ ^[1-4]$ ]] || { echo "wan_sites.sh: --procs must be 1 to 4" >&2; exit 2; }
[[ -z $sites || $sites =~ ^[1-9]( [1-9]){1,7}$ ]] || { echo "wan_sites.sh: --sites takes 2 to 8 site numbers 1-9, e.g. \"1 1 2 2 3 3\"" >&2; exit 2; }
[[ $cases =~ ^[a-z0-9,]*$ ]] || { echo "wan_sites.sh: --cases takes names separated by commas" >&2; exit 2; }
case "$transport" in ""|one-sided|two-sided) ;; *) echo "wan_sites.sh: --transport must be one-sided or two-sided" >&2; exit 2 ;; esac
for f in "$build/bin/bsprun" "$build/bin/bspwan" "$build/tests/launcher/netdelay"; do
  [ -x "$f" ] || { echo "wan_sites.sh: $f is missing: build first (./bspg.sh build; netdelay needs libnetfilter-queue-dev)" >&2; exit 1; }
done
if ! "$here/tests/sealed.sh" --check; then exec "$here/tests/sealed.sh" "$0" --build "$build" --delays "$delays" --reps "$reps" --words "$words" --procs "$procs" ${transport:+--transport "$transport"} ${sites:+--sites "$sites"} ${cases:+--cases "$cases"} $([ "$program" = bspbench ] && echo --bspbench) $([ "$program" = startup ] && echo --startup); fi

work=$(mktemp -d "${TMPDIR:-/tmp}/bspg-wan-XXXXXX")
cleanup() { "$here/tests/launcher/emuhosts.sh" stop "$work/hosts" >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT
site_list=$(for ((i = 0; i < procs; i++)); do printf '1 '; done; for ((i = 0; i < procs; i++)); do printf '2 '; done)
[ -z "$sites" ] || site_list=$sites
nhosts=$(wc -w <<<"$site_list")
nsites=$(tr " " "\n" <<<"${site_list% }" | sort -u | wc -l)
loads=$(for ((i = 0; i < nhosts; i++)); do printf '0.1 '; done)
export OMPI_MCA_mpi_yield_when_idle=1
for d in $delays; do
  echo "== $d ms one way between the sites" >&2
  # shellcheck disable=SC2086  # lists of words
  EMU_NETNS=1 EMU_SITES="${site_list% }" EMU_DELAY_MS=$d EMU_SLOTS=1 EMU_NO_RC=1 \
    EMU_NETDELAY="$build/tests/launcher/netdelay" \
    "$here/tests/launcher/emuhosts.sh" start "$work/hosts" $loads >&2
  # MPICH's proxies connect back to mpiexec by this machine's host name, which the hosts cannot
  # reach in their own networks: Hydra's interface setting names site 1's bridge instead.
  export HYDRA_IFACE="bspgbr$(cat "$work/hosts/net")s1"
  if [ "$program" = startup ]; then
    [ -x "$work/mpi_hello" ] || "$(sed -n 's/^MPI_C_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")" -O2 \
      -o "$work/mpi_hello" "$here/benchmarks/mpi_hello.c"
    hostlist=$(for ((i = 1; i <= nhosts; i++)); do printf 'emu%d:1,' "$i"; done)
    root=(); [ "$(id -u)" -ne 0 ] || root=(--allow-run-as-root)
    for ((r = 0; r < reps; r++)); do
      t0=$(date +%s.%N)
      timeout 300 "$build/bin/bsprun" -p $nhosts --hostfile "$work/hosts/hosts.yaml" "$build/bin/hello" >/dev/null 2>&1
      t1=$(date +%s.%N)
      timeout 300 mpirun "${root[@]}" --mca plm_rsh_agent "ssh -F $work/hosts/ssh_config" --mca plm_rsh_no_tree_spawn 1 \
        -host "${hostlist%,}" -np $nhosts "$work/mpi_hello" >/dev/null 2>&1
      t2=$(date +%s.%N)
      timeout 300 mpirun "${root[@]}" --mca plm_rsh_agent "ssh -F $work/hosts/ssh_config" --mca plm_rsh_no_tree_spawn 1 \
        --mca osc sm,pt2pt -host "${hostlist%,}" -np $nhosts "$build/bin/hello" >/dev/null 2>&1
      t3=$(date +%s.%N)
      echo "$t0 $t1 $t2 $t3"
    done >"$work/startup-$d"
  elif [ "$program" = bspbench ]; then
    timeout 1800 "$build/bin/bsprun" -p $nhosts --hostfile "$work/hosts/hosts.yaml" ${transport:+-x BSPG_TRANSPORT="$transport"} ${UCX_TLS:+-x UCX_TLS} \
      "$build/bin/bspbench" --hmax "$words" --reps "$reps" --no-plot --out "$work/bench-$d" | tee "$work/bench-$d.out" >&2
  else
    timeout 900 "$build/bin/bsprun" -p "$nhosts" --hostfile "$work/hosts/hosts.yaml" ${transport:+-x BSPG_TRANSPORT="$transport"} ${UCX_TLS:+-x UCX_TLS} \
      "$build/bin/bspwan" --reps "$reps" --words "$words" ${cases:+--cases "$cases"} --csv "$work/wan-$d.csv" >&2
  fi
  "$here/tests/launcher/emuhosts.sh" stop "$work/hosts" >&2
done
if [ "$program" = startup ]; then
  echo
  echo "start-up across $nsites emulated sites (hosts' sites: ${site_list% }), bsprun at site 1, medians of $reps runs:"
  echo "| delay | bsprun -p $nhosts hello | mpirun -np $nhosts hello | ratio | mpirun of plain MPI mpi_hello |"
  echo "|---|---|---|---|---|"
  for d in $delays; do
    awk -v d="$d" '
      function median(a, n,   i, j, t) {
        for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
        return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
      }
      { n++; b[n] = $2 - $1; m[n] = $3 - $2; h[n] = $4 - $3 }
      END { mb = median(b, n); mm = median(m, n); mh = median(h, n)
            printf "| %s ms | %.2f s | %.2f s | %.2fx | %.2f s |\n", d, mb, mh, mb / mh, mm }' "$work/startup-$d"
  done
  exit 0
fi
if [ "$program" = bspbench ]; then
  echo
  echo "bspbench across $nsites emulated sites (hosts' sites: ${site_list% }), one process per host, hmax = $words, $reps repetitions (g in us per word, l in us):"
  printf '%-9s | %-34s | %-34s | %s\n' delay "all processes (bspg / raw MPI)" "inside sites" "across sites"
  for d in $delays; do
    # g and l in us of: bspg, raw MPI, inside subjobs, across subjobs (bspbench's order).
    sed -n -E 's/^ *(bspg|raw MPI|inside subjobs|across subjobs): *g = *[-0-9.]+ flop \( *([-0-9.]+) us\) per word *l = *[-0-9.]+ flop \( *([-0-9.]+) us\)$/\2 \3/p' \
      "$work/bench-$d.out" | tr '\n' ' ' |
      awk -v d="$d ms" '{ printf "%-9s | g %7.2f / %7.2f  l %9.1f / %9.1f | g %8.3f  l %10.1f | g %8.3f  l %10.1f\n", d, $1, $3, $2, $4, $5, $6, $7, $8 }'
  done
  exit 0
fi
echo
echo "bspwan across $nsites emulated sites (hosts' sites: ${site_list% }), one process per host, h = $words, $reps repetitions${transport:+, BSPG_TRANSPORT=$transport} (medians, ms):"
printf '%-7s' case
for d in $delays; do printf ' | %22s' "$d ms: bspg / MPI (x)"; done
echo
for c in sync put get get8k get64k get1m bulk group; do
  grep -q "^$c," "$work/wan-${delays%% *}.csv" || continue
  printf '%-7s' "$c"
  for d in $delays; do
    awk -F, -v c="$c" '$1 == c { printf " | %8.2f / %7.2f (%4.2f)", $2, $3, $4 }' "$work/wan-$d.csv"
  done
  echo
done
