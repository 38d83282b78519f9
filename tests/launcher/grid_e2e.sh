#!/usr/bin/env bash
# grid_e2e.sh SCENARIO - bsprun's grid path against emulated hosts (tests/launcher/emuhosts.sh).
#
# Needs root, unshare and sshd; exits 77 (ctest SKIP_RETURN_CODE) when they are missing. Runs
# sealed, in a network namespace of its own with only loopback (e2e_lib.sh).
# Environment: BSPRUN, WHERE (mpi_where), EXCHANGE (bsp_exchange), EMUHOSTS (emuhosts.sh);
# MASTER_JOB (tests/bsplib/progs/master_job) for the master_* scenarios.
# Every scenario starts its own hosts and stops them on exit, whatever happens.
# Each bsprun run is bounded by `timeout`; the ctest TIMEOUT bounds the whole scenario.
set -u
scenario=${1:?scenario}
: "${WHERE:?}" "${EXCHANGE:?}"
# shellcheck source=e2e_lib.sh
. "$(dirname "$0")/e2e_lib.sh"

case $scenario in
least_loaded)
  # Loads 3.5, 0.2, 2.0, 0.1 at two slots each: -p 4 runs on emu4 and emu2 only.
  start_hosts 3.5 0.2 2.0 0.1
  run_bsprun -p 4 --hostfile hosts.yaml --rsl-out job.rsl "$WHERE" hello
  expect_status 0
  expect_count "$out" "^rank [0-3] of 4 on emu4 subjob 0 of 2 sizes 2,2$" 2
  expect_count "$out" "^rank [0-3] of 4 on emu2 subjob 1 of 2 sizes 2,2$" 2
  expect_count "$out" "on emu[13] " 0
  expect_match "$out" "^arg 1: hello$"
  expect_match "$err" "^emu1 +(127\.0|10\.200)\.[0-9]+\.1 +2 +3\.50 .* 0 \(not needed"
  expect_match "$err" "^emu4 +(127\.0|10\.200)\.[0-9]+\.4 +2 +0\.10 .* 2 \(subjob 0\)$"
  expect_match "$err" "allocation written to job\.rsl"
  [ -s job.rsl ] || fail "job.rsl was not written"
  ;;

host_down)
  # emu2 (the idlest) is down: it is listed with the reason, emu4 and emu3 take the job.
  start_hosts 3.5 0.2 2.0 0.1
  "$EMUHOSTS" down "$dir" 2 >/dev/null
  run_bsprun -p 4 --probe-timeout 3 --hostfile hosts.yaml "$WHERE"
  expect_status 0
  expect_match "$err" "^emu2 +(127\.0|10\.200)\.[0-9]+\.2 +- +- +- +- +not used: .*(refused|timed out)"
  expect_count "$out" "^rank [0-3] of 4 on emu4 " 2
  expect_count "$out" "^rank [0-3] of 4 on emu3 " 2
  expect_count "$out" "on emu[12] " 0
  ;;

too_few)
  # Two hosts with two slots each cannot take 5 processes: refuse, start nothing.
  start_hosts 0.1 0.1
  "$EMUHOSTS" down "$dir" 2 >/dev/null
  expect_refused 125 "not enough capacity: 3 processes requested, but the 1 reachable host of 2 have 2 slots \(emu1: 2\); 1 unreachable; nothing was started" \
    -p 3 --hostfile hosts.yaml --rsl-out job.rsl "$WHERE"
  expect_match "$err" "^emu2 .*not used: "
  expect_count "$out" "^rank " 0
  [ ! -e job.rsl ] || fail "an allocation was written although nothing may start"
  ;;

changed_key)
  # known_hosts holds another key for emu1's address: emu1 is refused, the job runs on emu2.
  start_hosts 0.1 0.5
  prefix=$(cat address_prefix)
  other_key=$(awk -v a="${prefix}2" '$1 == a {print $2, $3; exit}' known_hosts)
  [ -n "$other_key" ] || fail "no key for ${prefix}2 in known_hosts"
  awk -v a="${prefix}1" -v k="$other_key" '$1 == a {print a, k; next} {print}' known_hosts >known_hosts.new
  mv known_hosts.new known_hosts
  run_bsprun -p 2 --hostfile hosts.yaml "$WHERE"
  expect_status 0
  expect_match "$err" "^emu1 .*not used: .*(CHANGED|changed)"
  expect_count "$out" "^rank [01] of 2 on emu2 " 2
  expect_count "$out" "on emu1 " 0
  # Needing emu1 as well: a clean refusal.
  expect_refused 125 "not enough capacity" -p 4 --hostfile hosts.yaml "$WHERE"
  ;;

dry_run)
  # --dry-run prints the RSL and starts nothing; the printed RSL runs again with --rsl.
  start_hosts 3.5 0.2 2.0 0.1
  run_bsprun -p 3 --dry-run --hostfile hosts.yaml "$WHERE" "two words"
  expect_status 0
  expect_count "$out" "^rank " 0
  expect_match "$out" '^\+$'
  expect_count "$out" '&\(resourceManagerContact="?emu4"?\)' 1
  expect_count "$out" '&\(resourceManagerContact="?emu2"?\)' 1
  expect_count "$out" 'resourceManagerContact="?emu[13]"?' 0
  expect_count "$out" '\(count=2\)' 1
  expect_count "$out" '\(count=1\)' 1
  expect_match "$out" "\(executable=\"?$WHERE\"?\)"
  expect_match "$out" '\(arguments="two words"\)'
  expect_match "$out" "\(directory=\"?$dir\"?\)"
  expect_match "$out" '\(label="subjob 0"\)'
  expect_match "$out" '\(label="subjob 1"\)'
  expect_match "$out" '\(environment=\("?BSPG_SUBJOB"? "?0"?\)\)'
  expect_match "$out" '\(environment=\("?BSPG_SUBJOB"? "?1"?\)\)'
  cp "$out" printed.rsl
  # --show probes and places as a run does, prints the starter's command line, starts nothing.
  run_bsprun -p 3 --show --hostfile hosts.yaml "$WHERE" "two words"
  expect_status 0
  expect_count "$out" "^rank " 0
  expect_count "$out" "$WHERE" 1
  expect_match "$out" "emu4"
  expect_match "$out" "emu2"
  expect_count "$out" "emu[13]" 0
  run_bsprun --rsl printed.rsl --hostfile hosts.yaml
  expect_status 0
  expect_count "$out" "^rank [0-2] of 3 on emu4 subjob 0 of 2 sizes 2,1$" 2
  expect_count "$out" "^rank [0-2] of 3 on emu2 subjob 1 of 2 sizes 2,1$" 1
  expect_match "$out" "^arg 1: two words$"
  # --rsl-out never writes through a link planted where the allocation goes.
  echo keep >victim && ln -s victim planted.rsl
  run_bsprun -p 3 --dry-run --hostfile hosts.yaml --rsl-out planted.rsl "$WHERE"
  [ "$status" -ne 0 ] || fail "--rsl-out through a planted link: exit 0"
  expect_match "$err" "cannot write the allocation: it is a symbolic link; refusing to follow it"
  [ "$(cat victim)" = keep ] || fail "--rsl-out wrote through a planted link"
  ;;

guide_examples)
  # The user guide's grid examples (docs/grid.md, docs/checkpoints.md), on 4 idle hosts of 2
  # slots (-p 8 fills them): each probes, places and shows what it would start.
  start_hosts 0 0 0 0
  guide_examples grid "$WHERE"
  ;;

rsl_replay)
  # A hand-written RSL: one process on the busiest host, a site subjob over emu3 and emu4.
  start_hosts 3.5 0.2 2.0 0.1
  cat >job.rsl <<EOF
(* written by hand: placement is exactly what this file says *)
+
( &(resourceManagerContact=emu1)(count=1)(executable=$WHERE)(arguments=replayed)
   (label="subjob 0")(environment=(BSPG_SUBJOB 0)) )
( &(resource_manager_contact=lab)(count=3)(executable=$WHERE)(hosts=("emu3:2" "emu4:1"))
   (label="subjob 1")(environment=(BSPG_SUBJOB 1)) )
EOF
  run_bsprun --rsl job.rsl --hostfile hosts.yaml
  expect_status 0
  expect_match "$err" "running job\.rsl: 4 processes in 2 subjobs"
  expect_count "$out" "^rank 0 of 4 on emu1 subjob 0 of 2 sizes 1,3$" 1
  expect_count "$out" "^rank [12] of 4 on emu3 subjob 1 of 2 sizes 1,3$" 2
  expect_count "$out" "^rank 3 of 4 on emu4 subjob 1 of 2 sizes 1,3$" 1
  expect_match "$out" "^arg 1: replayed$"
  expect_count "$err" "^HOST " 0   # no probing
  # One host in two subjobs: both run there, each with its own subjob index, within its slots.
  printf '+( &(resourceManagerContact=emu2)(count=1)(executable=%s) )\n( &(resourceManagerContact=emu2)(count=2)(executable=%s) )\n' \
    "$WHERE" "$WHERE" >shared.rsl
  awk '/name: emu2$/ {emu2 = 1} emu2 && /slots: 2$/ {sub(/2$/, "3"); emu2 = 0} {print}' hosts.yaml >three.yaml
  run_bsprun --rsl shared.rsl --hostfile three.yaml
  expect_status 0
  expect_count "$out" "^rank 0 of 3 on emu2 subjob 0 of 2 sizes 1,2$" 1
  expect_count "$out" "^rank [12] of 3 on emu2 subjob 1 of 2 sizes 1,2$" 2
  # Beyond the slots the host file gives it: refused, naming both files' lines.
  expect_refused 125 "^bsprun: shared\.rsl:2:[0-9]+: 3 processes on emu2, but the host file hosts\.yaml gives it 2 slots \(line [0-9]+\)$" \
    --rsl shared.rsl --hostfile hosts.yaml
  # A host the host file does not know is refused before anything starts.
  sed 's/emu1/emu9/' job.rsl >bad.rsl
  expect_refused 125 "host 'emu9' \(subjob 0\) is not in the host file" \
    --rsl bad.rsl --hostfile hosts.yaml
  # A syntax error names the file, line and column.
  printf '+\n( &(count=1)(executable=%s\n' "$WHERE" >broken.rsl
  expect_refused 125 "broken\.rsl:[0-9]+:[0-9]+: " --rsl broken.rsl --hostfile hosts.yaml
  ;;

sites)
  # emu1 and emu2 form site lab-a: one subjob spanning both; emu3 and emu4 are subjobs of their own.
  # One slot a host, so that each takes one process (with two, lab-a would take all four).
  EMU_SLOTS=1 start_hosts 0.1 0.1 0.1 0.1
  awk '/name: emu[12]$/ {print; print "    site: lab-a"; next} {print}' hosts.yaml >sites.yaml
  run_bsprun -p 4 --hostfile sites.yaml --rsl-out job.rsl "$WHERE"
  expect_status 0
  # Equal loads: the order of the subjobs follows free memory, which varies; check the grouping.
  expect_count "$out" "^rank [0-3] of 4 on emu[1-4] subjob [0-2] of 3 sizes (2,1,1|1,2,1|1,1,2)$" 4
  subjob_of() { sed -n "s/^rank [0-3] of 4 on $1 subjob \([0-2]\) .*/\1/p" "$out"; }
  s1=$(subjob_of emu1) s2=$(subjob_of emu2) s3=$(subjob_of emu3) s4=$(subjob_of emu4)
  [ -n "$s1" ] && [ "$s1" = "$s2" ] || fail "emu1 and emu2 (site lab-a) are in subjobs '$s1' and '$s2'"
  [ -n "$s3" ] && [ -n "$s4" ] && [ "$s3" != "$s4" ] && [ "$s3" != "$s1" ] && [ "$s4" != "$s1" ] ||
    fail "emu3 and emu4 should have subjobs of their own, got '$s3' and '$s4' (site: '$s1')"
  expect_match "$out" "on emu[12] subjob $s1 of 3 sizes ([0-9],){$s1}2"
  expect_match job.rsl 'resourceManagerContact="?lab-a"?'
  expect_match job.rsl '\(hosts=\("?emu[12]:1"? "?emu[12]:1"?\)\)'
  ;;

wide_area)
  # Two sites of two hosts, 25 ms one way between them (netdelay), bsprun at site 1, one process
  # per host: the delay is in place (no connection across is quicker than a round trip), the job's
  # subjobs are the sites, a BSP program gives the right answer across them, and bspwan runs.
  : "${NETDELAY:?}" "${BSPWAN:?}"
  command -v iptables-legacy >/dev/null || { echo "SKIP: needs iptables-legacy (Debian's iptables)"; exit 77; }
  unset OMPI_MCA_oob_tcp_if_include OMPI_MCA_btl_tcp_if_include  # each host has a network of its own
  EMU_NETNS=1 EMU_SITES="1 1 2 2" EMU_DELAY_MS=25 EMU_SLOTS=1 EMU_NETDELAY=$NETDELAY start_hosts 0.1 0.1 0.1 0.1
  net=$(cat net)
  # MPICH's proxies connect back to mpiexec by this machine's host name, which the hosts in their
  # own networks cannot reach; Hydra's interface setting names site 1's bridge instead.
  export HYDRA_IFACE=bspgbr${net}s1
  connect_ms() {  # from emu1: milliseconds to connect to ADDRESS:22 and read its banner
    ssh -F ssh_config emu1 "s=\$(date +%s%N); timeout 5 bash -c 'exec 3<>/dev/tcp/$1/22; head -c 4 <&3' >/dev/null; echo \$(( (\$(date +%s%N) - s) / 1000000 ))"
  }
  across=$(connect_ms "10.202.$net.3")
  [ -n "$across" ] && [ "$across" -ge 50 ] || fail "emu1 reached emu3 (the other site) in '$across' ms, under one 50 ms round trip"
  expect_match hosts.yaml "^    site: site2$"
  # Placement by sites: two processes fit on one site (one slot a host), whichever is less loaded,
  # every time; the probe measured each site's round trip from here (bsprun is at site 1).
  for attempt in 1 2 3; do
    run_bsprun -p 2 --hostfile hosts.yaml "$EXCHANGE"
    expect_status 0
    expect_count "$err" "^emu[1-4] .* 1 \\(subjob 0, site site[12]\\)$" 2
    [ "$(grep -Eo "site site[12]\\)$" "$err" | sort -u | wc -l)" -eq 1 ] || fail "attempt $attempt: -p 2 spread across sites"
    expect_match "$err" "^site site1: 2 of 2 hosts reachable, round trip from here [0-9.]+ ms$"
    rtt2=$(sed -n 's/^site site2: 2 of 2 hosts reachable, round trip from here \([0-9.]*\) ms$/\1/p' "$err")
    awk -v r="$rtt2" 'BEGIN { exit !(r >= 45 && r < 500) }' || fail "site2's round trip '$rtt2' ms is not about 50 ms"
    # ... and between the sites, by the hosts themselves.
    between=$(sed -n 's/^sites site1 and site2: round trip \([0-9.]*\) ms (measured by their hosts)$/\1/p' "$err")
    awk -v r="$between" 'BEGIN { exit !(r >= 45 && r < 500) }' || fail "the round trip between the sites '$between' ms is not about 50 ms"
    if grep -q "^spread across" "$err"; then fail "a spread reason for a job that fits one site"; fi
  done
  # Three processes need both sites, and the table says why.
  run_bsprun -p 3 --hostfile hosts.yaml "$EXCHANGE"
  expect_status 0
  expect_match "$err" "^spread across sites: process 2 went to site site[12]: the hosts of site[12] had no slot left$"
  expect_match "$out" "^bsp_exchange: 3 processes, all correct$"
  run_bsprun -p 4 --hostfile hosts.yaml "$EXCHANGE"
  expect_status 0
  expect_count "$out" "^bsp_exchange: pid [0-3] of 4 on emu[1-4] subjob [01] of 2: ok$" 4
  expect_match "$out" "^bsp_exchange: 4 processes, all correct$"
  run_bsprun -p 4 --hostfile hosts.yaml "$BSPWAN" --quick --words 100
  expect_status 0
  expect_match "$out" "p = 4 in 2 subjob"
  expect_count "$out" "^(sync|put|get|bulk|group) .* (PASS|FAIL)$" 5
  ;;

bsp_program)
  # A BSP program (puts, gets, messages) across three hosts gives the right answer over TCP.
  start_hosts 0.1 0.1 0.1
  run_bsprun -p 5 --hostfile hosts.yaml "$EXCHANGE"
  expect_status 0
  expect_count "$out" "^bsp_exchange: pid [0-4] of 5 on emu[123] subjob [0-2] of 3: ok$" 5
  expect_match "$out" "^bsp_exchange: 5 processes, all correct$"
  ;;

failures)
  # A remote process failing, dying, or calling bsp_abort stops the job with a non-zero exit.
  start_hosts 0.1 0.1
  run_bsprun -p 4 --hostfile hosts.yaml "$WHERE" --exit 3
  expect_status 3
  case ${MPI_NAME:-} in
    "MPICH 4."[0-1].*|"MPICH 3."*|"") hydra_waits=no ;;
    MPICH*) hydra_waits=yes ;;
    *) hydra_waits=no ;;
  esac
  if [ "$hydra_waits" = yes ]; then
    # MPICH 4.2's Hydra does not always end a job one of whose processes on another host was
    # killed (docs/mpis.md): the others then wait at their barrier, and --time-limit ends the job.
    run_bsprun -p 4 --hostfile hosts.yaml --time-limit 15 "$WHERE" --die 3 --sleep 5
    [ "$status" -ne 0 ] || fail "a job with a killed process ended with 0"
  else
    run_bsprun -p 4 --hostfile hosts.yaml --time-limit 60 "$WHERE" --die 3 --sleep 30
    expect_status nonzero
  fi
  expect_match "$out" "^rank 3 dies$"
  run_bsprun -p 4 --hostfile hosts.yaml --time-limit 60 "$EXCHANGE" --abort-on 2
  expect_status nonzero
  cat "$out" "$err" >both
  expect_match both "process 2 aborts on request"
  ;;

environment)
  # The caller's MPI parameters (OMPI_MCA_*, MPICH's MPIR_CVAR_*) reach remote processes; -x
  # exports a variable; nothing else of bsprun's environment does.
  start_hosts 0.1
  if [ "${MPI_FAMILY:-openmpi}" = mpich ]; then probe=MPIR_CVAR_BSPG_TEST_PROBE; else probe=OMPI_MCA_bspg_test_probe; fi
  env BSPG_NOT_EXPORTED=1 "$probe=42" "$BSPRUN" -v -p 2 --hostfile hosts.yaml -x BSPG_TEST_X=7 \
    "$WHERE" --env "$probe" --env BSPG_TEST_X --env BSPG_NOT_EXPORTED >"$out" 2>"$err" </dev/null
  status=$?
  cat "$err" "$out" | sed 's/^/    | /'
  expect_status 0
  expect_count "$out" "^rank [01] env $probe=42$" 2
  expect_count "$out" "^rank [01] env BSPG_TEST_X=7$" 2
  expect_count "$out" "^rank [01] env BSPG_NOT_EXPORTED is not set$" 2
  if [ "${MPI_FAMILY:-openmpi}" = mpich ]; then
    # Hydra runs ssh through bsprun's launcher beside the ssh configuration, which uses it.
    expect_match "$err" " -genvnone -launcher ssh -launcher-exec [^ ]+/bspg-ssh-config-[A-Za-z0-9]+\.ssh "
    expect_match "$err" "-env $probe 42"
  else
    expect_match "$err" "plm_(rsh|ssh)_agent 'ssh -F [^']+'"
    expect_match "$err" "-x $probe"
  fi
  ;;

stage)
  # --stage copies the program to the host (SFTP) and runs the copy there.
  start_hosts 0.1
  cp "$WHERE" "$dir/where-copy"
  run_bsprun -p 2 --stage --hostfile hosts.yaml --rsl-out job.rsl "$dir/where-copy"
  expect_status 0
  expect_match "$err" "^bsprun: emu1: /.*where-copy \((copied|already there)\)$"
  expect_count "$out" "^rank [01] of 2 on emu1 " 2
  staged=$(sed -n 's/^bsprun: emu1: \(.*\) (.*$/\1/p' "$err")
  expect_match job.rsl "executable=\"?$staged\"?"
  [ "$staged" != "$dir/where-copy" ] || fail "the staged path is the local path"
  ;;

plain_ssh_config)
  # An Open MPI style plain host file naming ssh aliases only: address, user, key and known_hosts
  # come from the user's ~/.ssh/config, for the probe (libssh) and for Open MPI's ssh alike. The
  # user's ~/.ssh is replaced, in a private mount namespace of this run only, by one holding the
  # emulated hosts' client configuration.
  start_hosts 0.1 3.0
  printf '# aliases from ~/.ssh/config\nemu1 slots=2\nemu2 slots=2\n' >plain.txt
  mkdir -p fakehome/.ssh && cp ssh_config fakehome/.ssh/config
  home=$(getent passwd "$(id -un)" | cut -d: -f6)
  # Bind over ~/.ssh if there is one, else over the home directory itself.
  if [ -d "$home/.ssh" ]; then source=$dir/fakehome/.ssh target=$home/.ssh; else source=$dir/fakehome target=$home; fi
  wrap=(unshare -m --propagation private sh -c 'mount --bind "$1" "$2" && shift 2 && exec "$@"' sh "$source" "$target")
  run_bsprun -p 2 --hostfile plain.txt --rsl-out job.rsl "$WHERE"
  unset wrap
  expect_status 0
  expect_match "$err" "^emu1 +emu1 +2 +0\.10 .* 2 \(subjob 0\)$"
  expect_match "$err" "^emu2 +emu2 +2 +3\.00 .* 0 \(not needed"
  expect_count "$out" "^rank [01] of 2 on emu1 subjob 0 of 1 sizes 2$" 2
  expect_match job.rsl 'resourceManagerContact="?emu1"?'
  expect_count "$err" '^\[[0-9]{4}/' 0   # no libssh traces, whatever LogLevel the config sets
  ;;

master_least_loaded)
  # Master mode (no -p): the master starts alone on the least loaded host; bsp_begin(P) puts the
  # others on the slots -p P would use. Loads 3.5, 0.2, 2.0, 0.1 at two slots each: 8 available.
  : "${MASTER_JOB:?}"
  start_hosts 3.5 0.2 2.0 0.1
  run_bsprun --hostfile hosts.yaml --rsl-out job.rsl "$MASTER_JOB" init 4 --available 8
  expect_status 0
  expect_match "$err" "master mode: the master starts on emu4; .* first P of these 8 slots: emu4 emu2 emu4 emu2 emu3 emu3 emu1 emu1$"
  expect_count "$out" "^pid 0 of 4 on emu4 subjob 0$" 1
  expect_count "$out" "^pid [1-3] of 4 on emu4 subjob 0$" 1
  expect_count "$out" "^pid [1-3] of 4 on emu2 subjob 1$" 2
  expect_count "$out" "on emu[13] " 0
  expect_count "$out" "^used 4 of 8$" 1
  expect_count "$out" "^PASS master_job$" 1
  expect_match job.rsl '\(count=1\)'
  expect_match job.rsl '\("?BSPG_MASTER_SLOTS"? "emu4/0,emu2/1,emu4/0,emu2/1,emu3/2,emu3/2,emu1/3,emu1/3"\)'
  # P from standard input (BSPedupack's way): 3 processes, the third on emu2.
  wrap=(sh -c 'echo 3 | "$@"' sh)
  run_bsprun --hostfile hosts.yaml "$MASTER_JOB" init - --available 8
  unset wrap
  expect_status 0
  expect_count "$out" "^pid 0 of 3 on emu4 subjob 0$" 1
  expect_count "$out" "^pid [12] of 3 on emu4 subjob 0$" 1
  expect_count "$out" "^pid [12] of 3 on emu2 subjob 1$" 1
  expect_count "$out" "^used 3 of 8$" 1
  expect_count "$out" "^PASS master_job$" 1
  # More than available, bsp_begin first in main: all 8 slots, every host.
  run_bsprun --hostfile hosts.yaml "$MASTER_JOB" begin 20 --available 8
  expect_status 0
  for h in 1 2 3 4; do expect_count "$out" "^pid [0-7] of 8 on emu$h subjob [0-3]$" 2; done
  expect_count "$out" "^used 8 of 8$" 1
  ;;

master_refused)
  # Where master mode cannot run on the grid path (Open MPI 5), bsprun says so in one line before
  # it starts anything: with a host file, and replaying a master's RSL.
  : "${MASTER_JOB:?}"
  start_hosts 0.1 0.2
  run_bsprun --hostfile hosts.yaml "$MASTER_JOB" begin all
  expect_status 125
  expect_match "$err" "^bsprun: master mode on the grid path is not available with ${MPI_NAME:-} yet \("
  expect_count "$err" "^HOST " 0
  expect_count "$out" "^pid " 0
  run_bsprun --max-procs 2 --dry-run --hostfile hosts.yaml "$MASTER_JOB" begin all
  expect_status 0
  cp "$out" master.rsl
  run_bsprun --rsl master.rsl --hostfile hosts.yaml
  expect_status 125
  expect_match "$err" "^bsprun: master mode on the grid path is not available with "
  expect_count "$out" "^pid " 0
  ;;

master_replay)
  # The master's RSL (--dry-run) runs again with --rsl, in master mode, without probing.
  : "${MASTER_JOB:?}"
  start_hosts 3.5 0.2 2.0 0.1
  run_bsprun --max-procs 3 --dry-run --hostfile hosts.yaml "$MASTER_JOB" begin all
  expect_status 0
  expect_count "$out" "^pid " 0
  expect_match "$out" '&\(resourceManagerContact="?emu4"?\)'
  expect_match "$out" '\(label="?master"?\)'
  cp "$out" master.rsl
  run_bsprun --rsl master.rsl --hostfile hosts.yaml
  expect_status 0
  expect_count "$err" "^HOST " 0
  expect_match "$err" "running master\.rsl: the master, in master mode"
  expect_count "$out" "^pid 0 of 3 on emu4 subjob 0$" 1
  expect_count "$out" "^pid [12] of 3 on emu4 subjob 0$" 1
  expect_count "$out" "^pid [12] of 3 on emu2 subjob 1$" 1
  expect_count "$out" "^PASS master_job$" 1
  # A slot list that does not start on the master's host is refused before anything starts.
  sed 's|"emu4/0,|"emu2/1,emu4/0,|; s|("BSPG_MASTER_PROCS" 3)|("BSPG_MASTER_PROCS" 4)|' master.rsl >bad.rsl
  expect_refused 125 "^bsprun: the first of BSPG_MASTER_SLOTS is the master's own, on emu4, not on emu2" \
    --rsl bad.rsl --hostfile hosts.yaml
  ;;

master_stop)
  # bsp_abort in a spawned process on another host, and --time-limit, stop every process of the
  # job on every host.
  : "${MASTER_JOB:?}"
  start_hosts 0.1 0.5
  run_bsprun --hostfile hosts.yaml "$MASTER_JOB" init 4 --abort 3
  expect_status nonzero
  expect_count "$out" "^pid [0-3] of 4 on emu[12] " 4
  cat "$out" "$err" >both
  expect_count both "^master_job: process 3 aborts on request$" 1
  expect_count both "^PASS" 0
  run_bsprun --hostfile hosts.yaml --time-limit 8 "$MASTER_JOB" init 4 --sleep 60
  expect_status 124
  expect_count "$out" "^pid [0-3] of 4 on emu[12] " 4
  sleep 1
  left=$(pgrep -f "$MASTER_JOB" | wc -l)
  [ "$left" -eq 0 ] || fail "$left process(es) of the job still running after bsprun exited"
  ;;

injection)
  # Values from a host file never reach the ssh configuration unchecked: a newline in the address
  # would add a ProxyCommand that runs a program here. Refused at the host file's line, on the
  # normal path and on --rsl replay; the program never runs.
  start_hosts 0.1
  prefix=$(cat address_prefix)
  printf '#!/bin/sh\ntouch %s/proxy-command-ran\nexit 1\n' "$dir" >x.sh
  chmod +x x.sh
  hostile() {  # hostile ADDRESS-LINE: a copy of hosts.yaml with emu1's address replaced
    ADDRESS=$1 awk '/^    address: / {print "    address: " ENVIRON["ADDRESS"]; next} {print}' hosts.yaml >evil.yaml
  }
  printf '+( &(resourceManagerContact=emu1)(count=1)(executable=%s) )\n' "$WHERE" >job.rsl
  for address in "\"${prefix}1\\nProxyCommand=$dir/x.sh\"" "-oProxyCommand=$dir/x.sh"; do
    hostile "$address"
    line=$(grep -n '^    address: ' evil.yaml | cut -d: -f1)
    grep -q 'address: "[0-9][^"]*\\nProxyCommand\|address: -o' evil.yaml || fail "evil.yaml is not what this test means"
    expect_refused 125 "^bsprun: evil\.yaml:$line: invalid address " \
      -p 1 --hostfile evil.yaml "$WHERE"
    expect_refused 125 "^bsprun: evil\.yaml:$line: invalid address " \
      --rsl job.rsl --hostfile evil.yaml
  done
  [ ! -e proxy-command-ran ] || fail "the ProxyCommand smuggled in through the host file ran"
  # A plain host file's "emu1:2" is blamed on its line, with the form it should have.
  printf 'emu1:2\n' >plain.txt
  expect_refused 125 "^bsprun: plain\.txt:1: invalid host name 'emu1:2': .*write 'emu1 slots=2'" \
    -p 1 --hostfile plain.txt "$WHERE"
  ;;

start_failures)
  # What could not start comes back as 127 (not found), 126 (not executable) or 125 (could not
  # start) with one line naming the host, not as mpirun's 132, 131, 135 or 205 and its banner.
  start_hosts 0.1 0.1
  replay() {  # replay EXECUTABLE [EXTRA-RELATIONS]: one process on emu1 from an RSL file
    printf '+( &(resourceManagerContact=emu1)(count=1)(executable=%s)%s )\n' "$1" "${2:-}" >one.rsl
    run_bsprun --rsl one.rsl --hostfile hosts.yaml
  }
  one_line() {  # one_line REGEX: the failure is that line alone (after "running one.rsl: ...")
    expect_match "$err" "$1"
    expect_count "$err" "^-----" 0
    expect_count "$err" "^bsprun: " 2
  }
  replay "$dir/no-such-program"
  expect_status 127
  one_line "^bsprun: emu1: program $dir/no-such-program not found there"
  mkdir -p "$dir/a-directory"
  replay "$dir/a-directory/"
  if [[ ${MPI_NAME:-} == "Open MPI 5"* ]]; then
    # PRRTE 3.0's daemon dies of SIGPIPE as it reports that it could not execute a directory.
    expect_status nonzero
    expect_count "$err" "^-----" 0
    expect_count "$err" "^bsprun: " 2
  elif [ "${MPI_FAMILY:-openmpi}" = mpich ]; then
    # Hydra says "Permission denied" of a directory and of a missing path alike.
    expect_status 127
    one_line "^bsprun: emu1: program $dir/a-directory/ not found there, or not executable$"
  else
    expect_status 126
    one_line "^bsprun: emu1: cannot execute $dir/a-directory/: "
  fi
  replay "$WHERE" "(directory=$dir/no-such-directory)"
  expect_status 125
  if [[ ${MPI_NAME:-} == "Open MPI 5"* ]]; then
    # PRRTE 3.0 says the limit of open files was reached; bsprun says what that may mean.
    one_line "^bsprun: emu1: could not start the job there: Open MPI says the limit of open files was reached, which it also says when the working directory does not exist there"
  elif [ "${MPI_FAMILY:-openmpi}" = mpich ]; then
    # Hydra's proxy says why only now and then before it ends; the line is bsprun's either way.
    one_line "^bsprun: (emu1: cannot change to the working directory $dir/no-such-directory |could not start the job(: MPICH's proxy on one of the hosts| on emu1: MPICH's proxy there) ended before its processes started)"
  else
    one_line "^bsprun: emu1: cannot change to the working directory $dir/no-such-directory "
  fi
  # A host that went down after it was chosen.
  printf '+( &(resourceManagerContact=emu1)(count=1)(executable=%s) )( &(resourceManagerContact=emu2)(count=1)(executable=%s) )\n' \
    "$WHERE" "$WHERE" >two.rsl
  "$EMUHOSTS" down "$dir" 2 >/dev/null
  run_bsprun --rsl two.rsl --hostfile hosts.yaml
  expect_status 125
  expect_match "$err" "^bsprun: emu2: could not start the job there: ssh: connect to host (127\.0|10\.200)\.[0-9]+\.2 port 22: Connection refused$"
  expect_count "$err" "^-----" 0
  # A host that dies while the job runs.
  "$EMUHOSTS" stop "$dir" >/dev/null
  start_hosts 0.1 0.1
  printf '+( &(resourceManagerContact=emu1)(count=1)(executable=%s)(arguments=--sleep 30) )( &(resourceManagerContact=emu2)(count=1)(executable=%s)(arguments=--sleep 30) )\n' \
    "$WHERE" "$WHERE" >sleep.rsl
  timeout --kill-after=5 60 "$BSPRUN" --rsl sleep.rsl --hostfile hosts.yaml >"$out" 2>"$err" </dev/null &
  pid=$!
  for _ in $(seq 1 100); do [ "$(grep -c '^rank ' "$out")" -ge 2 ] && break; sleep 0.2; done
  kill -KILL $("$EMUHOSTS" pids "$dir" 2) 2>/dev/null
  wait "$pid"
  status=$?
  cat "$err" "$out" | sed 's/^/    | /'
  expect_status 125
  expect_match "$err" "^bsprun: lost contact with emu2 while the job ran"
  expect_count "$err" "^-----" 0
  # The program's own status and a real signal death stay as they are.
  replay "$WHERE" "(arguments=--exit 3)"
  expect_status 3
  replay "$WHERE" "(arguments=--die 0)"
  # Open MPI: 128 + SIGKILL; MPICH's mpiexec gives the signal's number itself.
  if [ "${MPI_FAMILY:-openmpi}" = mpich ]; then expect_status 9; else expect_status 137; fi
  ;;

frozen)
  # A frozen member (SIGSTOP) does not keep a stopped job alive: mpirun itself, Open MPI's daemon
  # on a host, or a whole host. bsprun's grace period is 15 s; the job ends well before it, with
  # nothing left where the hosts can be reached, one line for what could not be stopped, and no
  # Open MPI banner.
  start_hosts 0.1 0.1
  printf '+( &(resourceManagerContact=emu1)(count=2)(executable=%s)(arguments=--sleep 60 frozen-%s) )( &(resourceManagerContact=emu2)(count=2)(executable=%s)(arguments=--sleep 60 frozen-%s) )\n' \
    "$WHERE" "$$" "$WHERE" "$$" >sleep.rsl
  on_host() { "$EMUHOSTS" pids "$dir" "$1"; }
  ranks_on() { local n=0 p; for p in $(on_host "$1"); do grep -q "frozen-$$" "/proc/$p/cmdline" 2>/dev/null && n=$((n + 1)); done; echo $n; }
  stop_frozen() {  # stop_frozen WHAT FREEZE-COMMAND...: start the job, freeze, SIGTERM bsprun
    echo "---- $1"
    "$BSPRUN" --rsl sleep.rsl --hostfile hosts.yaml >"$out" 2>"$err" </dev/null &
    pid=$!
    for _ in $(seq 1 100); do [ "$(grep -c '^rank ' "$out")" -ge 4 ] && break; sleep 0.2; done
    [ "$(grep -c '^rank ' "$out")" -ge 4 ] || fail "$1: the job did not start"
    shift
    "$@"
    sleep 0.5
    local start=$SECONDS
    kill -TERM "$pid"
    for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then fail "bsprun still running 30 s after SIGTERM"; kill -KILL "$pid"; fi
    wait "$pid"
    status=$? took=$((SECONDS - start))
    cat "$err" "$out" | sed 's/^/    | /'
    expect_status 143
    [ "$took" -le 12 ] || fail "stopping took $took s, as long as the grace period"
    expect_count "$err" "Abort is in progress|hit ctrl-c again|Forwarding signal|^-----" 0
    [ "$(ranks_on 1)" -eq 0 ] || fail "processes of the job left on emu1"
  }
  freeze_mpirun() { kill -STOP "$(pgrep -P "$pid" | head -n 1)"; }
  freeze_daemon() { local p; for p in $(on_host 2); do [ "$(cat "/proc/$p/comm" 2>/dev/null)" = orted ] && kill -STOP "$p"; done; }
  stop_frozen "mpirun frozen" freeze_mpirun
  [ "$(ranks_on 2)" -eq 0 ] || fail "processes of the job left on emu2"
  stop_frozen "Open MPI's daemon on emu2 frozen" freeze_daemon
  [ "$(ranks_on 2)" -eq 0 ] || fail "processes of the job left on emu2"
  stop_frozen "emu2 frozen as a whole" "$EMUHOSTS" freeze "$dir" 2
  expect_match "$err" "^bsprun: could not reach emu2 \(.*\) to stop the job there; its processes there may still run$"
  "$EMUHOSTS" thaw "$dir" 2
  ;;

profile)
  # --profile DIR on the grid path: the processes write their records into DIR on their own
  # hosts (here a private /dev/shm per emulated host, so nothing is shared with this machine's),
  # and bsprun brings them here when the job ends; the profile is that of all 4 processes.
  : "${KNOWN:?}" "${CHECK_KNOWN:?}"
  start_hosts 0.1 0.2
  profile=/dev/shm/bspg-profile-$$
  rm -rf "$profile"
  # An earlier job's records, left in DIR on both hosts (made by a run here, without bsprun's
  # job token): the gathering must take none of them.
  BSPG_PROFILE=$dir/stale "$KNOWN" >/dev/null 2>&1 || fail "the program did not run here"
  for i in 1 2; do
    host_pid=$("$EMUHOSTS" pids "$dir" "$i" | head -n 1)
    nsenter -t "$host_pid" -m -r sh -c "mkdir -p '$profile/raw' && for p in 1 2 3; do cp '$dir/stale/raw/a0.s0.p0.bspprof' '$profile/raw/a0.s0.p'\$p'.bspprof'; done" ||
      fail "could not leave stale records on emu$i"
  done
  run_bsprun -p 4 --hostfile hosts.yaml --profile "$profile" "$KNOWN"
  expect_status 0
  expect_count "$out" "^PASS known_supersteps$" 1
  ls "$profile/raw" | sed 's/^/    raw: /'
  [ "$(ls "$profile/raw" | grep -c '^a0\.s0\.p[0-3]\.bspprof$')" -eq 4 ] ||
    fail "not the 4 processes' records in $profile/raw"
  for f in "$profile"/raw/*.bspprof; do
    [ "$(od -An -j 28 -N 4 -t u4 "$f" | tr -d ' ')" != 0 ] || fail "$f is a stale record (no job token)"
  done
  "$CHECK_KNOWN" "$profile" 4 >"$dir/check" 2>&1 || fail "$(cat "$dir/check")"
  rm -rf "$profile"
  ;;

underscore_names)
  # Host names with '_' (hosts named emu_x1 and emu_x2): they run where the MPI's starter takes
  # them; Open MPI 4's mpirun does not (it would wait for ever), so bsprun refuses them in one
  # line before it probes or starts anything.
  EMU_PREFIX=emu_x start_hosts 0.1 0.1
  if [[ ${MPI_NAME:-} == "Open MPI 4"* ]]; then
    expect_refused 125 "hosts\.yaml:[0-9]+: host emu_x1: Open MPI 4[.0-9]*'s mpirun cannot start processes on a host whose name has '_' .*; name it without '_'" \
      -p 4 --hostfile hosts.yaml "$WHERE"
    [ "$(wc -l <"$err")" -eq 1 ] || fail "more than one line: $(cat "$err")"
  else
    run_bsprun -p 4 --hostfile hosts.yaml "$WHERE"
    expect_status 0
    expect_count "$out" "^rank [0-3] of 4 on emu_x[12] " 4
  fi
  ;;

*)
  echo "unknown scenario $scenario"
  exit 2
  ;;
esac

finish
