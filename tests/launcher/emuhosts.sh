#!/usr/bin/env bash
# emuhosts.sh - emulated SSH hosts on this machine, for tests (needs root, unshare and /usr/sbin/sshd).
#
#   emuhosts.sh start DIR LOAD1 [LOAD2 ...]   host i (1-based) reports load LOADi in /proc/loadavg
#   emuhosts.sh stop DIR                      stop everything started for DIR (by pid); idempotent
#   emuhosts.sh setload DIR I LOAD            change host i's reported load
#   emuhosts.sh down DIR I                    stop host i (its sshd and what runs there): it refuses connections
#   emuhosts.sh pids DIR I                    print the pids of every process on host i
#   emuhosts.sh freeze DIR I | thaw DIR I     SIGSTOP (SIGCONT) every process on host i: a frozen host
#   emuhosts.sh crash DIR I                   SIGKILL every process on host i at once: a host that dies
#                                             (EMUHOSTS_KILLED_AT=FILE: the moment, date +%s.%N, in FILE)
#
# Host i is an sshd on 127.0.NET.i:22 in its own mount and UTS namespace: hostname <prefix><i>
# (prefix from EMU_PREFIX, default "emu"), private tmpfs on /run and /dev/shm, and a file bind-mounted
# over /proc/loadavg. Every process started through that sshd sees that hostname, load and /dev/shm;
# the file system is otherwise shared, so the same binaries work on every host.
# EMU_NETNS=1: each host also gets a network namespace of its own, with lo and one interface eth0 on
# a bridge bspgbrNET in the caller's namespace; host i is then 10.200.NET.i and this machine (the
# bridge) 10.200.NET.254, so MPI's and its daemons' connections between hosts cross a network, as
# on real machines. The caller must run in a network namespace of its own (tests/sealed.sh): the
# bridge is made there. A host that is down or crashed has its address taken by the caller's lo, so
# that connecting to it is refused, as in the loopback mode.
# EMU_SITES="1 1 2 2" (with EMU_NETNS=1): host i belongs to site Si (1-9), and each site is a network
# of its own: a bridge bspgbrNETsK, hosts 10.(200+K).NET.i, routed through the caller's namespace
# (10.(200+K).NET.254 there). hosts.yaml names each host's site (site1, site2, ...). EMU_DELAY_MS=D
# holds every packet between two sites D ms (one way; EMU_NETDELAY names tests/launcher's netdelay,
# which holds them, through iptables-legacy's NFQUEUE), and makes a round trip between the caller
# and the sites other than EMU_LAUNCHER_SITE (default 1) as long (2 D, all on the way back: see
# start_sites): the caller, where bsprun runs, sits at that site.
# NET is chosen per DIR (a hash of DIR, then the next free one) and claimed under /tmp/bspg-emuhosts,
# so two test runs at once do not collide; EMU_NET=N asks for 127.0.N.0/24 (fails if it is taken).
# EMU_PATH sets the PATH of sessions on the hosts (shell start-up files may still add to it).
# EMU_PRIVATE_DIRS="/abs/dir ..." gives every host a private, empty tmpfs at each of these paths
# (created on the shared file system if missing): what a host writes there only that host sees,
# and it is gone with the host (down, stop), as a real machine's disk is for the others.
# EMU_NO_RC=1: sessions on the hosts skip the user's shell start-up files (~/.bashrc, ~/.profile,
# ~/.bash_profile; each host sees them empty). They are shared by all hosts: one that takes a
# lock (pyenv's rehash does) would hold up every login here when a test freezes or kills a host.
#
# start writes into DIR:
#   id_ed25519[.pub]   test user key (authorized for root on every host)
#   known_hosts        every host's key, for its address (port 22)
#   hosts.yaml         bspg host file: defaults user root, identity, known_hosts; hosts emu1..emuN, slots 2
#                      (EMU_SLOTS=N: N)
#   hosts.txt          Open MPI plain host file (names; use with ssh_config)
#   ssh_config         OpenSSH client config: `ssh -F DIR/ssh_config emu1`
#   pids               one line per host: "<i> <sshd pid> <mount namespace>"
#   net                the NET number; emu<i>/ holds host i's sshd config, keys, log and loadavg file
#   address_prefix     what host i's address is made of: "127.0.NET." or "10.200.NET." (then i);
#                      with EMU_SITES, that of site 1's hosts ("10.201.NET.")
#   addresses          host i's address on line i
set -euo pipefail

die() { echo "emuhosts.sh: $*" >&2; exit 1; }
usage() { sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

claims=/tmp/bspg-emuhosts
start_done=0
prefix=${EMU_PREFIX:-emu}
netns=${EMU_NETNS:-0}
[[ $netns =~ ^[01]$ ]] || { echo "emuhosts.sh: EMU_NETNS must be 0 or 1, not '$netns'" >&2; exit 2; }
sites=${EMU_SITES:-}
delay_ms=${EMU_DELAY_MS:-0}
launcher_site=${EMU_LAUNCHER_SITE:-1}
[[ $sites =~ ^([1-9]( [1-9])*)?$ ]] || { echo "emuhosts.sh: EMU_SITES must be site numbers 1-9, one per host, not '$sites'" >&2; exit 2; }
[[ $delay_ms =~ ^[0-9]+([.][0-9]+)?$ ]] || { echo "emuhosts.sh: EMU_DELAY_MS must be a number of milliseconds, not '$delay_ms'" >&2; exit 2; }
[[ $launcher_site =~ ^[1-9]$ ]] || { echo "emuhosts.sh: EMU_LAUNCHER_SITE must be 1-9, not '$launcher_site'" >&2; exit 2; }
if [ -n "$sites" ] && [ "$netns" != 1 ]; then echo "emuhosts.sh: EMU_SITES needs EMU_NETNS=1" >&2; exit 2; fi
[[ ${EMU_SLOTS:-2} =~ ^[1-9][0-9]{0,3}$ ]] || { echo "emuhosts.sh: EMU_SLOTS must be 1-9999, not '${EMU_SLOTS:-}'" >&2; exit 2; }

abs_dir() { mkdir -p "$1" && (cd "$1" && pwd); }

is_number() { [[ $1 =~ ^[0-9]+([.][0-9]+)?$ ]]; }

loadavg_line() { printf '%s %s %s 1/100 12345\n' "$1" "$1" "$1"; }

# Is anything listening on ADDR:22 (or on a wildcard address, which would block binding ADDR:22)?
port_busy() {
  ss -Hltn 2>/dev/null | awk -v a="$1:22" '$4 == a || $4 == "0.0.0.0:22" || $4 == "*:22" || $4 == "[::]:22" {f=1} END {exit !f}'
}

pid_alive() { [ -n "$1" ] && kill -0 "$1" 2>/dev/null; }

# True when PID is still the emulated host's sshd: alive and in mount namespace NS. A recorded pid
# of a host that is gone may belong to any process by now (pids wrap quickly on a busy machine),
# and while the sshd lives, its namespace cannot be another's.
host_alive() { pid_alive "$1" && [ -n "$2" ] && [ "$(readlink "/proc/$1/ns/mnt" 2>/dev/null)" = "$2" ]; }

# Hosts are found by their mount namespace's number, and the kernel gives a gone namespace's number
# to the next new one (another test's host, say). So while looking for a host's processes and
# signalling them, hold its namespace open: pin PID NS opens a descriptor on process PID's mount
# namespace if that still is NS (false otherwise); unpin_all closes them all.
pinned=()
pin() {
  local fd
  { exec {fd}<"/proc/$1/ns/mnt"; } 2>/dev/null || return 1
  if [ "$(readlink "/proc/self/fd/$fd" 2>/dev/null)" != "$2" ]; then
    exec {fd}<&-
    return 1
  fi
  pinned+=("$fd")
}
unpin_all() {
  local fd
  for fd in "${pinned[@]+"${pinned[@]}"}"; do exec {fd}<&-; done
  pinned=()
}

# True when DIR's recorded hosts still have a live sshd.
dir_has_live_hosts() {
  local dir=$1 i pid ns
  [ -f "$dir/pids" ] || return 1
  while read -r i pid ns; do host_alive "$pid" "$ns" && return 0; done <"$dir/pids"
  return 1
}

# Claim a /24 for DIR: atomic mkdir of $claims/net-N. A claim is stale when its owner has no live host
# and it is older than a minute (an owner that is just starting has not written pids yet).
claim_net() {
  local dir=$1 count=$2 start net tries owner age i busy
  mkdir -p "$claims"
  local first=20 span=200
  start=$(( $(printf '%s' "$dir" | cksum | cut -d' ' -f1) % span + first ))
  if [ -n "${EMU_NET:-}" ]; then  # a fixed network, e.g. for hostfiles/emulated-4.yaml
    [[ $EMU_NET =~ ^[0-9]+$ ]] && [ "$EMU_NET" -ge 1 ] && [ "$EMU_NET" -le 254 ] || die "EMU_NET must be 1-254, not '$EMU_NET'"
    first=$EMU_NET span=1 start=$EMU_NET
  fi
  for ((tries = 0; tries < span; tries++)); do
    net=$(( (start - first + tries) % span + first ))
    if ! mkdir "$claims/net-$net" 2>/dev/null; then
      owner=$(cat "$claims/net-$net/owner" 2>/dev/null || true)
      age=$(( $(date +%s) - $(stat -c %Y "$claims/net-$net" 2>/dev/null || date +%s) ))
      if [ "$owner" = "$dir" ] || { [ "$age" -gt 60 ] && ! dir_has_live_hosts "${owner:-/nonexistent}"; }; then
        rm -rf "$claims/net-$net"
        mkdir "$claims/net-$net" 2>/dev/null || continue
      else
        continue
      fi
    fi
    busy=0
    for ((i = 1; i <= count; i++)); do
      if [ "$netns" = 0 ] && port_busy "127.0.$net.$i"; then busy=1; break; fi
    done
    if [ $busy -eq 1 ]; then rmdir "$claims/net-$net"; continue; fi
    echo "$dir" >"$claims/net-$net/owner"
    echo "$net"
    return 0
  done
  [ -n "${EMU_NET:-}" ] && die "network 127.0.$EMU_NET.0/24 is in use (by $(cat "$claims/net-$EMU_NET/owner" 2>/dev/null || echo 'another listener on port 22'))"
  die "no free 127.0.N.0/24 network for emulated hosts (claims in $claims)"
}

# Every pid whose mount namespace is one of the given ones (namespaces emulated hosts were started in).
# One pass over /proc with find: a readlink per process would take seconds.
pids_in_namespaces() {
  [ $# -gt 0 ] || return 0
  find /proc -mindepth 3 -maxdepth 3 -path '/proc/[0-9]*/ns/mnt' -printf '%h %l\n' 2>/dev/null \
    | awk -v list="$*" 'BEGIN { n = split(list, ns, " "); for (i = 1; i <= n; i++) want[ns[i]] = 1 }
                        ($2 in want) { split($1, part, "/"); print part[3] }'
}

# Stop the given pids: TERM, wait up to ~3 s, then KILL.
stop_pids() {
  [ $# -gt 0 ] || return 0
  local p t
  kill -TERM "$@" 2>/dev/null || true
  for ((t = 0; t < 30; t++)); do
    local alive=0
    for p in "$@"; do pid_alive "$p" && alive=1; done
    [ $alive -eq 0 ] && return 0
    sleep 0.1
  done
  kill -KILL "$@" 2>/dev/null || true
}

cmd_stop() {
  local dir=$1 i pid ns all=() namespaces=() net p q
  if [ -f "$dir/pids" ]; then
    while read -r i pid ns; do
      pin "$pid" "$ns" || continue  # stopped earlier (down): nothing of it is left
      all+=("$pid")
      namespaces+=("$ns")
    done <"$dir/pids"
    # The sshds and whatever still runs in their namespaces (sessions, ranks), all at once.
    while read -r p; do [ -n "$p" ] && all+=("$p"); done < <(pids_in_namespaces "${namespaces[@]+"${namespaces[@]}"}")
    stop_pids "${all[@]+"${all[@]}"}"
    unpin_all
    rm -f "$dir/pids"
  fi
  # The sites' delay: its packet filter rules, then the program that held the packets.
  if [ -f "$dir/delay_rules" ]; then
    while read -r rule; do
      # shellcheck disable=SC2086  # a rule is words
      iptables-legacy -D $rule 2>/dev/null || true
    done <"$dir/delay_rules"
    rm -f "$dir/delay_rules"
  fi
  for p in netdelay netdelay-in; do
    [ -f "$dir/$p.pid" ] || continue
    q=$(cat "$dir/$p.pid")
    if [ "$(cat "/proc/$q/comm" 2>/dev/null || true)" = netdelay ]; then stop_pids "$q"; fi
    rm -f "$dir/$p.pid" "$dir/$p.ready"
  done
  # The network mode's bridges, and the addresses of hosts that went down (on this namespace's lo).
  if [ -f "$dir/bridge" ]; then
    while read -r p; do ip link del "$p" 2>/dev/null || true; done <"$dir/bridge"
    rm -f "$dir/bridge"
  fi
  if [ -f "$dir/taken_addresses" ]; then
    while read -r p; do ip addr del "$p/32" dev lo 2>/dev/null || true; done <"$dir/taken_addresses"
    rm -f "$dir/taken_addresses"
  fi
  if [ -f "$dir/net" ]; then
    net=$(cat "$dir/net")
    if [ "$(cat "$claims/net-$net/owner" 2>/dev/null || true)" = "$dir" ]; then rm -rf "$claims/net-$net"; fi
    rm -f "$dir/net"
  fi
  return 0
}

# Wait until ADDR:22 answers with an SSH banner, at most until DEADLINE (epoch seconds) and only
# while the sshd (PID) lives.
wait_banner() {
  local addr=$1 deadline=$2 pid=$3
  while [ "$(date +%s)" -lt "$deadline" ] && pid_alive "$pid"; do
    if timeout 1 bash -c "exec 3<>/dev/tcp/$addr/22 && head -c 4 <&3 | grep -q SSH-" 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  return 1
}

# EMU_SITES: a bridge per site in this namespace, which routes between them; with EMU_DELAY_MS the
# packets between sites (and between this machine and the other sites) wait in netdelay.
start_sites() {
  local dir=$1 net=$2 site k j; shift 2
  local distinct=()
  for site in "$@"; do [[ " ${distinct[*]} " == *" $site "* ]] || distinct+=("$site"); done
  : >"$dir/bridge"
  for k in "${distinct[@]}"; do
    ip link del "bspgbr${net}s$k" 2>/dev/null || true
    echo "bspgbr${net}s$k" >>"$dir/bridge"
    ip link add "bspgbr${net}s$k" type bridge || die "cannot make the bridge bspgbr${net}s$k"
    ip addr add "10.$((200 + k)).$net.254/24" dev "bspgbr${net}s$k"
    ip link set "bspgbr${net}s$k" up
  done
  echo 1 >/proc/sys/net/ipv4/ip_forward || die "cannot route between the sites (ip_forward)"
  [ "$delay_ms" != 0 ] && [ "$delay_ms" != 0.0 ] || return 0
  # Two holders: D ms for packets between sites (queue NET, the network's, so that two tests at
  # once do not share a queue), 2 D for packets from another site to this namespace (queue
  # NET + 256). This namespace's own packets to another site are not held on their way out: a
  # packet its socket sent stays charged to the socket while it is held, and Linux's TCP small
  # queues then let about two packets out per hold (0.2 MB/s at 25 ms); held twice as long on the
  # way back, a round trip takes as long as between two sites.
  local t queue holder
  for holder in "$net:$delay_ms:netdelay" "$((net + 256)):$(awk -v d="$delay_ms" 'BEGIN { print 2 * d }'):netdelay-in"; do
    IFS=: read -r queue t holder <<<"$holder"
    "$EMU_NETDELAY" "$queue" "$t" "$dir/$holder.ready" </dev/null >>"$dir/netdelay.log" 2>&1 &
    echo $! >"$dir/$holder.pid"
    for ((t = 0; t < 100; t++)); do [ -f "$dir/$holder.ready" ] && break; sleep 0.05; done
    [ -f "$dir/$holder.ready" ] || die "netdelay did not start: $(cat "$dir/netdelay.log" 2>/dev/null)"
  done
  : >"$dir/delay_rules"
  add_rule() {  # QUEUE RULE...
    local queue=$1
    shift
    # shellcheck disable=SC2068  # a rule is words
    iptables-legacy -A $@ -j NFQUEUE --queue-num "$queue" || die "iptables-legacy -A $* failed"
    echo "$* -j NFQUEUE --queue-num $queue" >>"$dir/delay_rules"
  }
  for k in "${distinct[@]}"; do
    for j in "${distinct[@]}"; do
      [ "$k" = "$j" ] || add_rule "$net" FORWARD -s "10.$((200 + k)).$net.0/24" -d "10.$((200 + j)).$net.0/24"
    done
    if [ "$k" != "$launcher_site" ]; then
      add_rule "$((net + 256))" INPUT -s "10.$((200 + k)).$net.0/24"
    fi
  done
}

cmd_start() {
  local dir=$1; shift
  [ $# -ge 1 ] || usage
  local load
  for load in "$@"; do is_number "$load" || die "load '$load' is not a number (e.g. 0.5)"; done
  [ $# -le 250 ] || die "at most 250 hosts"
  local private
  for private in ${EMU_PRIVATE_DIRS:-}; do
    [[ $private == /* && $private != *..* ]] || die "EMU_PRIVATE_DIRS: '$private' is not an absolute path without '..'"
    mkdir -p "$private" || die "EMU_PRIVATE_DIRS: cannot create $private"
  done
  [ "$(id -u)" -eq 0 ] || die "needs root (sshd on port 22, mount namespaces)"
  command -v unshare >/dev/null || die "unshare (util-linux) is not installed"
  [ -x /usr/sbin/sshd ] || die "/usr/sbin/sshd is missing (install openssh-server)"
  command -v ssh-keygen >/dev/null || die "ssh-keygen is missing (install openssh-client)"
  unshare --mount --uts --propagation private true 2>/dev/null \
    || die "unshare --mount --uts does not work here (needs CAP_SYS_ADMIN)"
  if [ "$netns" = 1 ]; then
    # The bridge and the hosts' addresses must not reach the machine's own network.
    [ "$(readlink /proc/self/ns/net)" != "$(readlink /proc/1/ns/net 2>/dev/null)" ] \
      || die "EMU_NETNS=1 needs a network namespace of its own (run under tests/sealed.sh)"
    command -v ip >/dev/null || die "ip (iproute2) is missing"
  fi

  dir_has_live_hosts "$dir" && cmd_stop "$dir"
  local count=$# net i address_prefix bridge="" site_of=()
  if [ -n "$sites" ]; then
    read -r -a site_of <<<"$sites"
    [ "${#site_of[@]}" -eq "$count" ] || die "EMU_SITES names ${#site_of[@]} site(s) for $count host(s)"
    if [ "$delay_ms" != 0 ] && [ "$delay_ms" != 0.0 ]; then
      [ -x "${EMU_NETDELAY:-}" ] || die "EMU_DELAY_MS needs EMU_NETDELAY, the path of tests/launcher's netdelay"
      command -v iptables-legacy >/dev/null || die "EMU_DELAY_MS needs iptables-legacy (Debian's iptables)"
    fi
  fi
  net=$(claim_net "$dir" "$count")
  echo "$net" >"$dir/net"
  # From here on, any failure (set -e) stops what was started.
  trap '[ "$start_done" = 1 ] || cmd_stop "$dir"' EXIT
  address_prefix="127.0.$net."
  if [ "$netns" = 1 ] && [ -z "$sites" ]; then
    address_prefix="10.200.$net."
    bridge="bspgbr$net"
    ip link del "$bridge" 2>/dev/null || true
    echo "$bridge" >"$dir/bridge"
    ip link add "$bridge" type bridge || die "cannot make the bridge $bridge"
    ip addr add "${address_prefix}254/24" dev "$bridge"
    ip link set "$bridge" up
  elif [ -n "$sites" ]; then
    address_prefix="10.201.$net."
    start_sites "$dir" "$net" "${site_of[@]}"
  fi
  echo "$address_prefix" >"$dir/address_prefix"

  [ -f "$dir/id_ed25519" ] || ssh-keygen -q -t ed25519 -N '' -C "bspg-emuhosts" -f "$dir/id_ed25519"
  cp "$dir/id_ed25519.pub" "$dir/authorized_keys"
  : >"$dir/known_hosts"
  : >"$dir/pids"
  local names=() addrs=()
  for ((i = 1; i <= count; i++)); do
    names+=("$prefix$i")
    if [ -n "$sites" ]; then addrs+=("10.$((200 + site_of[i - 1])).$net.$i"); else addrs+=("$address_prefix$i"); fi
  done
  printf '%s\n' "${addrs[@]}" >"$dir/addresses"

  i=0
  for load in "$@"; do
    i=$((i + 1))
    local h=$dir/emu$i addr=${addrs[$((i - 1))]} name=${names[$((i - 1))]}
    mkdir -p "$h"
    [ -f "$h/ssh_host_ed25519_key" ] || ssh-keygen -q -t ed25519 -N '' -C "$name" -f "$h/ssh_host_ed25519_key"
    echo "$addr $(cut -d' ' -f1,2 "$h/ssh_host_ed25519_key.pub")" >>"$dir/known_hosts"
    loadavg_line "$load" >"$h/loadavg"
    cat >"$h/sshd_config" <<EOF
# emulated host $name (generated by emuhosts.sh)
ListenAddress $addr:22
HostKey $h/ssh_host_ed25519_key
AuthorizedKeysFile $dir/authorized_keys
PidFile $h/sshd.pid
StrictModes no
UsePAM no
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UseDNS no
PrintMotd no
PrintLastLog no
X11Forwarding no
MaxStartups 100:30:200
MaxSessions 50
Subsystem sftp internal-sftp
LogLevel VERBOSE
EOF
    # EMU_PATH: the PATH of sessions on the host (e.g. to put a test's tools there).
    [ -z "${EMU_PATH:-}" ] || echo "SetEnv PATH=$EMU_PATH" >>"$h/sshd_config"
    : >"$h/sshd.log"
    # One pid from unshare to sshd (exec all the way), so the recorded pid is the listening sshd.
    local net_option=()
    [ "$netns" = 0 ] || net_option=(--net)
    unshare --mount --uts "${net_option[@]}" --propagation private -- /bin/bash -c '
      set -e
      # Through the kernel, not hostname(1), which refuses names that DNS would not take ("_").
      printf %s "$1" >/proc/sys/kernel/hostname
      if [ -n "$5" ]; then  # its own network: wait for eth0, which the caller moves in
        for ((t = 0; t < 200; t++)); do ip link show eth0 >/dev/null 2>&1 && break; sleep 0.05; done
        ip link set lo up
        ip addr add "$5/24" dev eth0
        ip link set eth0 up
        # Other sites through the caller (the router), at .254 on this network.
        [ -z "$6" ] || ip route add default via "${5%.*}.254"
      fi
      mount -t tmpfs -o mode=0755 bspg-emu-run /run
      mkdir -m 0755 /run/sshd
      mount -t tmpfs -o mode=1777 bspg-emu-shm /dev/shm
      mount --bind "$2/loadavg" /proc/loadavg
      for private in $3; do mount -t tmpfs -o mode=0700 bspg-emu-private "$private"; done
      if [ -n "$4" ]; then
        for rc in "$HOME/.bashrc" "$HOME/.profile" "$HOME/.bash_profile"; do
          [ ! -f "$rc" ] || mount --bind /dev/null "$rc"
        done
      fi
      exec /usr/sbin/sshd -D -f "$2/sshd_config" -E "$2/sshd.log"
    ' emuhost "$name" "$h" "${EMU_PRIVATE_DIRS:-}" "${EMU_NO_RC:-}" "$([ "$netns" = 0 ] || echo "$addr")" "$sites" \
      </dev/null >>"$h/sshd.log" 2>&1 &
    local pid=$!
    # Wait for the namespace to be set up (the hostname is the last thing unshare changes before exec).
    local ns="" t
    for ((t = 0; t < 50; t++)); do
      pid_alive "$pid" || break
      ns=$(readlink "/proc/$pid/ns/mnt" 2>/dev/null || true)
      [ -n "$ns" ] && [ "$ns" != "$(readlink /proc/self/ns/mnt)" ] && break
      sleep 0.05
    done
    echo "$i $pid $ns" >>"$dir/pids"
    if [ -n "$bridge" ] || [ -n "$sites" ]; then  # the host's end of a veth pair goes into its namespace as eth0
      ip link add "bspge$net-$i" type veth peer name eth0 netns "$pid" \
        || die "cannot give host $name its network interface"
      ip link set "bspge$net-$i" master "$([ -z "$sites" ] && echo "$bridge" || echo "bspgbr${net}s${site_of[i - 1]}")" up
    fi
  done

  cat >"$dir/ssh_config" <<EOF
# OpenSSH client config for the emulated hosts in $dir (generated by emuhosts.sh)
EOF
  for ((i = 1; i <= count; i++)); do
    printf 'Host %s\n  HostName %s\n' "${names[$((i - 1))]}" "${addrs[$((i - 1))]}" >>"$dir/ssh_config"
  done
  cat >>"$dir/ssh_config" <<EOF
Host ${names[*]} ${addrs[*]}
  User root
  Port 22
  IdentityFile $dir/id_ed25519
  IdentitiesOnly yes
  UserKnownHostsFile $dir/known_hosts
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
  CheckHostIP no
  BatchMode yes
  ConnectTimeout 5
  LogLevel ERROR
EOF

  {
    echo "# emulated hosts in $dir (generated by emuhosts.sh); stop with: emuhosts.sh stop $dir"
    echo "defaults:"
    echo "  user: root"
    echo "  identity: $dir/id_ed25519"
    echo "  known_hosts: $dir/known_hosts"
    echo "hosts:"
    for ((i = 1; i <= count; i++)); do
      echo "  - name: ${names[$((i - 1))]}"
      echo "    address: ${addrs[$((i - 1))]}"
      echo "    slots: ${EMU_SLOTS:-2}"
      [ -z "$sites" ] || echo "    site: site${site_of[i - 1]}"
    done
  } >"$dir/hosts.yaml"
  {
    echo "# Open MPI plain host file; names resolve through: ssh -F $dir/ssh_config"
    for ((i = 1; i <= count; i++)); do echo "${names[$((i - 1))]} slots=${EMU_SLOTS:-2}"; done
  } >"$dir/hosts.txt"

  # Every sshd must accept a connection within ~10 s.
  local deadline=$(( $(date +%s) + 10 )) pid ns
  while read -r i pid ns; do
    if ! wait_banner "${addrs[$((i - 1))]}" "$deadline" "$pid"; then
      echo "emuhosts.sh: host ${names[$((i - 1))]} (sshd on ${addrs[$((i - 1))]}:22, pid $pid) did not accept a connection$(pid_alive "$pid" && echo " within 10 s" || echo "; sshd exited"); its log:" >&2
      tail -n 20 "$dir/emu$i/sshd.log" >&2 || true
      cmd_stop "$dir"
      exit 1
    fi
  done <"$dir/pids"
  start_done=1
  if [ -n "$sites" ]; then
    echo "emuhosts.sh: $count host(s) up: ${names[*]} at sites ${site_of[*]} (10.20K.$net.i; ${delay_ms} ms one way between sites; this machine at site $launcher_site) (ssh -F $dir/ssh_config ${names[0]})"
  else
    echo "emuhosts.sh: $count host(s) up: ${names[*]} on $address_prefix""1-$count$([ -z "$bridge" ] || echo " (bridge $bridge, this machine ${address_prefix}254)") (ssh -F $dir/ssh_config ${names[0]})"
  fi
}

host_line() {  # prints "<pid> <ns>" of host I in DIR
  local dir=$1 want=$2 i pid ns
  [ -f "$dir/pids" ] || die "no emulated hosts running for $dir"
  while read -r i pid ns; do [ "$i" = "$want" ] && { echo "$pid $ns"; return 0; }; done <"$dir/pids"
  die "no host $want in $dir/pids"
}

cmd_setload() {
  local dir=$1 i=$2 load=$3
  is_number "$load" || die "load '$load' is not a number (e.g. 0.5)"
  host_line "$dir" "$i" >/dev/null
  # Rewrite in place: the bind mount is on this very inode, so no rename.
  loadavg_line "$load" >"$dir/emu$i/loadavg"
}

# In the network mode, a host that is gone leaves its address unanswered (connecting would wait
# for ARP); this namespace's lo takes it, so that connecting is refused at once, as in loopback mode.
take_address() {
  local dir=$1 i=$2
  [ -f "$dir/bridge" ] || return 0
  local address
  address=$(sed -n "${i}p" "$dir/addresses")
  ip addr add "$address/32" dev lo 2>/dev/null || return 0
  echo "$address" >>"$dir/taken_addresses"
}

cmd_down() {
  local dir=$1 i=$2 pid ns all=() p
  read -r pid ns < <(host_line "$dir" "$i")
  pin "$pid" "$ns" || return 0
  # The sshd and whatever runs on the host, so that a later stop need not trust a stale pid.
  all=("$pid")
  while read -r p; do [ -n "$p" ] && all+=("$p"); done < <(pids_in_namespaces "$ns")
  stop_pids "${all[@]}"
  unpin_all
  take_address "$dir" "$i"
}

# Host I dies at once: SIGKILL to everything in its namespace, again until nothing is left (a
# session that sshd forked while the first kill went out would go on otherwise). The namespace is
# pinned meanwhile, so that its number cannot pass to another test's new host.
cmd_crash() {
  local dir=$1 i=$2 pid ns t left
  read -r pid ns < <(host_line "$dir" "$i")
  pin "$pid" "$ns" || return 0
  # A host that crashes loses every process at the same moment: all that are there now are
  # killed together (finding them takes a scan of /proc), then any that started meanwhile.
  left=$(pids_in_namespaces "$ns" || true)
  # shellcheck disable=SC2086
  kill -KILL "$pid" $left 2>/dev/null || true
  # The moment of the loss, for tests that time what follows it.
  if [ -n "${EMUHOSTS_KILLED_AT:-}" ]; then date +%s.%N >"$EMUHOSTS_KILLED_AT"; fi
  for ((t = 0; t < 50; t++)); do
    left=$(pids_in_namespaces "$ns" || true)  # find fails when processes vanish as it looks
    if [ -z "$left" ]; then
      unpin_all
      take_address "$dir" "$i"
      return 0
    fi
    # shellcheck disable=SC2086
    kill -KILL $left 2>/dev/null || true
    sleep 0.1
  done
  unpin_all
  die "host $i: processes still there after SIGKILL: $left"
}

# Every process of host I: its sshd and whatever runs in its mount namespace (nothing when the
# host is gone). The caller pins the namespace if it signals what this finds.
host_pids() {
  local dir=$1 i=$2 pid ns
  read -r pid ns < <(host_line "$dir" "$i")
  [ -n "$ns" ] || die "host $i has no recorded namespace"
  host_alive "$pid" "$ns" || return 0
  pids_in_namespaces "$ns"
}

cmd_pids() { host_pids "$@"; }

cmd_signal_host() {
  local dir=$1 i=$2 sig=$3 pid ns p
  read -r pid ns < <(host_line "$dir" "$i")
  pin "$pid" "$ns" || return 0
  for p in $(host_pids "$dir" "$i"); do kill "-$sig" "$p" 2>/dev/null || true; done
  unpin_all
}

[ $# -ge 2 ] || usage
cmd=$1
if [ "$cmd" = stop ] && [ ! -d "$2" ]; then exit 0; fi  # nothing was started there
dir=$(abs_dir "$2") || die "cannot create directory '$2'"
shift 2
case "$cmd" in
  start) cmd_start "$dir" "$@" ;;
  stop) [ $# -eq 0 ] || usage; cmd_stop "$dir" ;;
  setload) [ $# -eq 2 ] || usage; cmd_setload "$dir" "$1" "$2" ;;
  down) [ $# -eq 1 ] || usage; cmd_down "$dir" "$1" ;;
  pids) [ $# -eq 1 ] || usage; cmd_pids "$dir" "$1" ;;
  freeze) [ $# -eq 1 ] || usage; cmd_signal_host "$dir" "$1" STOP ;;
  thaw) [ $# -eq 1 ] || usage; cmd_signal_host "$dir" "$1" CONT ;;
  crash) [ $# -eq 1 ] || usage; cmd_crash "$dir" "$1" ;;
  *) usage ;;
esac
