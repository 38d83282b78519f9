#!/usr/bin/env bash
# emuhosts_test.sh EMUHOSTS MPIRUN - checks what tests rely on from emuhosts.sh: each host has its own
# name, load and /dev/shm; setload, down and stop work; the MPI (Open MPI's mpirun or MPICH's
# Hydra) starts ranks on two hosts over ssh.
# Exit 77 (skipped) when not root or without unshare/sshd.
set -u
emu=$1 mpirun=${2:-mpirun}
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root"; exit 77; }
unshare --mount --uts --propagation private true 2>/dev/null || { echo "SKIP: unshare does not work here"; exit 77; }
[ -x /usr/sbin/sshd ] || { echo "SKIP: /usr/sbin/sshd missing"; exit 77; }

dir=$(mktemp -d /tmp/bspg-emuhosts-test-XXXXXX)
failures=0
cleanup() { "$emu" stop "$dir" >/dev/null 2>&1; rm -rf "$dir"; }
trap cleanup EXIT
check() {  # check WHAT EXPECTED ACTUAL
  if [ "$2" = "$3" ]; then echo "ok: $1"; else echo "FAIL: $1: expected '$2', got '$3'"; failures=$((failures + 1)); fi
}
on() { timeout 20 ssh -F "$dir/ssh_config" "$@" 2>&1; }

"$emu" start "$dir" 0.5 3.0 || { echo "FAIL: start"; exit 1; }
for f in id_ed25519 known_hosts hosts.yaml hosts.txt ssh_config pids; do
  check "start wrote $f" yes "$([ -s "$dir/$f" ] && echo yes || echo no)"
done
check "hostname of emu1" emu1 "$(on emu1 hostname)"
check "hostname of emu2" emu2 "$(on emu2 uname -n)"
check "load of emu1" "0.5 0.5 0.5 1/100 12345" "$(on emu1 cat /proc/loadavg)"
check "load of emu2" "3.0 3.0 3.0 1/100 12345" "$(on emu2 cat /proc/loadavg)"
on emu1 'touch /dev/shm/bspg-emu-marker'
check "private /dev/shm" "no" "$(on emu2 'test -e /dev/shm/bspg-emu-marker && echo yes || echo no')"
check "host /dev/shm untouched" "no" "$(test -e /dev/shm/bspg-emu-marker && echo yes || echo no)"
check "same binaries" "$(readlink -f "$emu")" "$(on emu1 readlink -f "$emu")"

"$emu" setload "$dir" 2 7.25
check "setload" "7.25 7.25 7.25 1/100 12345" "$(on emu2 cat /proc/loadavg)"
check "setload rejects words" 1 "$("$emu" setload "$dir" 2 high >/dev/null 2>&1; echo $?)"

if "$mpirun" --version 2>&1 | grep -q HYDRA; then
  # MPICH's Hydra runs ssh through a program without arguments.
  printf '#!/bin/sh\nexec ssh -F %s "$@"\n' "$dir/ssh_config" >"$dir/ssh-launcher"
  chmod 700 "$dir/ssh-launcher"
  out=$(timeout 60 "$mpirun" -launcher ssh -launcher-exec "$dir/ssh-launcher" -hosts emu1:1,emu2:1 -n 2 hostname 2>&1)
elif "$mpirun" --version 2>&1 | grep -q '(Open MPI) [5-9]'; then
  # Open MPI 5's run-time (PRRTE) has parameters of its own; its hosts have networks of their own
  # (EMU_NETNS=1), which its daemons find by themselves.
  out=$(timeout 60 "$mpirun" --allow-run-as-root --prtemca plm_ssh_agent "ssh -F $dir/ssh_config" \
    --host emu1:1,emu2:1 -n 2 hostname 2>&1)
else
  out=$(timeout 60 "$mpirun" --allow-run-as-root --oversubscribe --mca plm_rsh_agent "ssh -F $dir/ssh_config" \
    --host emu1:1,emu2:1 -np 2 --mca oob_tcp_if_include lo --mca btl_tcp_if_include lo --mca btl tcp,self hostname 2>&1)
fi
check "mpirun across emu1 and emu2" "emu1 emu2" "$(echo "$out" | grep -x 'emu[0-9]' | sort | tr '\n' ' ' | sed 's/ $//')"

# The network mode (EMU_NETNS=1): each host on a bridge with an address of its own, and a loopback
# that is its alone; a host that is down refuses at once; stop takes the bridge away.
if command -v ip >/dev/null; then
  dir3=$(mktemp -d /tmp/bspg-emuhosts-test-XXXXXX)
  if EMU_NETNS=1 "$emu" start "$dir3" 0.1 0.2 >/dev/null; then
    prefix=$(cat "$dir3/address_prefix")
    on3() { timeout 20 ssh -F "$dir3/ssh_config" "$@" 2>&1; }
    check "netns: address prefix" yes "$([[ $prefix =~ ^10\.200\.[0-9]+\.$ ]] && echo yes || echo no)"
    check "netns: emu2's address is its own" "${prefix}2/24" "$(on3 emu2 "ip -4 -o addr show dev eth0" | awk '{print $4}')"
    check "netns: emu1 reaches emu2 across the bridge" SSH- \
      "$(on3 emu1 "timeout 5 bash -c 'exec 3<>/dev/tcp/${prefix}2/22; head -c 4 <&3'")"
    check "netns: a host's addresses are its own" "${prefix}1/24 127.0.0.1/8" \
      "$(on3 emu1 "ip -4 -o addr" | awk '{print $4}' | sort | xargs)"
    "$emu" down "$dir3" 2
    start=$(date +%s%N)
    check "netns: down host refuses" 255 "$(timeout 20 ssh -F "$dir3/ssh_config" emu2 true >/dev/null 2>&1; echo $?)"
    check "netns: refused at once" yes "$([ $(( ($(date +%s%N) - start) / 1000000 )) -lt 3000 ] && echo yes || echo no)"
    bridge=$(cat "$dir3/bridge")
    "$emu" stop "$dir3"
    check "netns: stop removes the bridge" gone "$(ip link show "$bridge" >/dev/null 2>&1 && echo there || echo gone)"
  else
    echo "FAIL: start with EMU_NETNS=1"; failures=$((failures + 1))
  fi
  rm -rf "$dir3"
fi

# A second set at the same time gets its own network.
dir2=$(mktemp -d /tmp/bspg-emuhosts-test-XXXXXX)
EMU_PREFIX=node "$emu" start "$dir2" 1.5 >/dev/null || echo "FAIL: second start"
check "second set has its own network" different "$([ "$(cat "$dir/net")" != "$(cat "$dir2/net" 2>/dev/null)" ] && echo different || echo same)"
check "EMU_PREFIX names the host" node1 "$(timeout 20 ssh -F "$dir2/ssh_config" node1 hostname 2>&1)"
"$emu" stop "$dir2"; rm -rf "$dir2"

"$emu" down "$dir" 1
check "down host refuses" 255 "$(on emu1 true >/dev/null; echo $?)"
check "other host still up" emu2 "$(on emu2 hostname)"

on emu2 'nohup sleep 611 >/dev/null 2>&1 &'
sleep 0.3
pids=$(awk '{print $2}' "$dir/pids" | tr '\n' ' ')
"$emu" stop "$dir"
left=0
for p in $pids; do kill -0 "$p" 2>/dev/null && left=$((left + 1)); done
check "stop ends the sshds" 0 "$left"
check "stop ends what ran on the hosts" 0 "$(pgrep -xc -f 'sleep 611' || true)"
check "stop is idempotent" 0 "$("$emu" stop "$dir"; echo $?)"
check "start with a bad load fails" 1 "$("$emu" start "$dir" fast >/dev/null 2>&1; echo $?)"

[ $failures -eq 0 ] && echo "all emuhosts checks passed"
exit $((failures > 0))
