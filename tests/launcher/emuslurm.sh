#!/usr/bin/env bash
# emuslurm.sh - an emulated Slurm cluster on this machine, for tests (needs root, emuhosts.sh, munge
# and Slurm: Debian's slurmctld slurmd slurm-client munge; Slurm 22.05 (Debian 12) to 24.11 (13)).
#
#   emuslurm.sh start DIR LOAD1 [LOAD2 ...]   nodes emu1..emuN (node i reports load LOADi), idle in Slurm
#   emuslurm.sh stop DIR                      stop everything started for DIR (by pid); idempotent
#   emuslurm.sh down DIR I                    node i dies (emuhosts.sh crash: its slurmd and tasks too);
#                                             Slurm marks it DOWN after SlurmdTimeout (EMU_SLURMD_TIMEOUT)
#   emuslurm.sh setload DIR I LOAD            change node i's reported load (emuhosts.sh setload)
#   emuslurm.sh freeze|thaw|pids DIR I        as emuhosts.sh (SIGSTOP/SIGCONT node i, its processes)
#   emuslurm.sh wait-idle DIR [SECONDS]       wait (default 30 s) until every node that lives is idle
#   emuslurm.sh wait-state DIR I REGEX [SECONDS]  wait until node i's state (sinfo %T) matches REGEX
#
# The nodes are emulated hosts (emuhosts.sh start with EMU_NETNS=1; EMU_SLOTS, EMU_SITES,
# EMU_DELAY_MS, EMU_PATH, EMU_PRIVATE_DIRS... are passed on): node i is host i, with its own
# hostname emu<i>, /proc/loadavg, /run, /dev/shm and network namespace (10.200.NET.i; the caller,
# where the client commands and the controller run, is 10.200.NET.254 on the bridge). The caller must
# run in a network namespace of its own (tests/sealed.sh). On top of the hosts:
#   - one munged for the whole cluster, socket, key, pid, log and seed under DIR/munge (the hosts
#     have a private /run, so every Slurm part is told the socket: AuthInfo=socket=...);
#   - slurmctld in the caller's network namespace and a UTS namespace of its own whose hostname is
#     the controller's (bspgctl), at 10.200.NET.254 (with EMU_SITES: 10.201.NET.254), port 17000+NET;
#   - one slurmd per node inside that host's mount, UTS and network namespaces (nsenter), so the
#     tasks of a job on node i see host i's hostname, load and network, as ssh sessions there do.
# Node i has CPUs=EMU_SLOTS (default 2), RealMemory=EMU_SLURM_MEMORY (default 1000 MB), partition
# emu (the default) has every node, select/cons_tres with CR_CPU, proctrack/linuxproc, no cgroups.
# EMU_SLURM_FEATURES="site1 site1 site2 site2": node i gets feature word i (Features=site1); with
# EMU_SITES and no EMU_SLURM_FEATURES, node i gets feature site<K> of its site K.
# EMU_SLURM_ACCOUNTING=1: job accounting as on a real cluster, so that sacct works: a MariaDB server
# (its data, socket and log under DIR/db, on 127.0.0.1 only) and slurmdbd (slurmdbd.conf,
# slurmdbd.log) in the caller's namespaces, the cluster registered with sacctmgr (Debian's
# mariadb-server and slurmdbd).
# EMU_SLURMD_TIMEOUT=S (default 10): how long a node may be silent before it is marked DOWN.
# EMU_SLURM_TIMEOUT=S (default 30): how long start waits for each part (munged, slurmctld, nodes).
# DIR's path must be short (munge's socket path is at most 107 bytes).
#
# start writes into DIR (besides what emuhosts.sh writes):
#   slurm.env          `. DIR/slurm.env` and the client commands (sinfo, salloc, srun, sbatch, scancel,
#                      squeue, scontrol) use this cluster: exports SLURM_CONF (and EMUSLURM_DIR)
#   slurm.conf         the cluster's configuration (cgroup.conf beside it for Slurm 23 and later)
#   slurm_pids         one line per daemon: "<part> <pid> <start time>" (munged, slurmctld, slurmd<i>)
#   munge/             munged's key, socket, pid, log (in the foreground it logs to stderr: munged.log
#                      holds that) and seed
#   slurmctld/         slurmctld's state; slurmctld.log its log
#   slurmd/emu<i>/     node i's spool directory; slurmd/emu<i>.log its log (.out: its stdout/stderr)
#   nodetmp/           TmpFS: on each node a private, empty tmpfs (EMU_PRIVATE_DIRS), where Slurm's
#                      PMIx plugin puts its per-step directories (the same names on every node)
set -euo pipefail

die() { echo "emuslurm.sh: $*" >&2; exit 1; }
usage() { sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
emuhosts=${EMUHOSTS:-$here/emuhosts.sh}
ctl_name=bspgctl
start_done=0
timeout_s=${EMU_SLURM_TIMEOUT:-30}
slurmd_timeout=${EMU_SLURMD_TIMEOUT:-10}
memory=${EMU_SLURM_MEMORY:-1000}
slots=${EMU_SLOTS:-2}
[[ $timeout_s =~ ^[1-9][0-9]{0,3}$ ]] || die "EMU_SLURM_TIMEOUT must be seconds (1-9999), not '$timeout_s'"
[[ $slurmd_timeout =~ ^[1-9][0-9]{0,3}$ ]] || die "EMU_SLURMD_TIMEOUT must be seconds (1-9999), not '$slurmd_timeout'"
[[ $memory =~ ^[1-9][0-9]{0,6}$ ]] || die "EMU_SLURM_MEMORY must be megabytes, not '$memory'"
[[ $slots =~ ^[1-9][0-9]{0,3}$ ]] || die "EMU_SLOTS must be 1-9999, not '$slots'"

abs_dir() { mkdir -p "$1" && (cd "$1" && pwd); }
is_number() { [[ $1 =~ ^[0-9]+([.][0-9]+)?$ ]]; }

# The start time of process PID (field 22 of /proc/PID/stat), in clock ticks since boot: with the
# pid, it names one process, even after pids wrap.
pid_start() {
  local s
  s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  s=${s##*) }
  # shellcheck disable=SC2086  # the fields after the command name are words
  set -- $s
  echo "${20}"
}
# True when PID is alive and started at START.
same_process() { [ -n "$1" ] && [ "$(pid_start "$1" 2>/dev/null || true)" = "$2" ]; }

record() {  # record PART PID
  local start
  start=$(pid_start "$2") || return 0  # already gone: nothing to stop later
  echo "$1 $2 $start" >>"$dir/slurm_pids"
}

# Stop the recorded daemons whose part matches the regex PATTERN: TERM, wait up to ~5 s, then KILL.
stop_parts() {
  local pattern=$1 part pid start t alive left=()
  [ -f "$dir/slurm_pids" ] || return 0
  while read -r part pid start; do
    [[ $part =~ $pattern ]] || continue
    if same_process "$pid" "$start"; then
      kill -TERM "$pid" 2>/dev/null || true
      left+=("$pid:$start")
    fi
  done <"$dir/slurm_pids"
  [ ${#left[@]} -gt 0 ] || return 0
  for ((t = 0; t < 50; t++)); do
    alive=0
    for p in "${left[@]}"; do same_process "${p%%:*}" "${p#*:}" && alive=1; done
    [ $alive -eq 0 ] && return 0
    sleep 0.1
  done
  for p in "${left[@]}"; do same_process "${p%%:*}" "${p#*:}" && kill -KILL "${p%%:*}" 2>/dev/null; done
  return 0
}

cmd_stop() {
  # The nodes' slurmd (their slurmstepd and the jobs' tasks go with the hosts), the controller,
  # munged, then the hosts and everything that still runs on them.
  stop_parts '^slurmd[0-9]+$'
  stop_parts '^slurmctld$'
  stop_parts '^slurmdbd$'
  stop_parts '^mariadbd$'
  stop_parts '^munged$'
  rm -f "$dir/slurm_pids"
  "$emuhosts" stop "$dir"
}

# The Slurm release's major number (22 for 22.05, 24 for 24.11).
slurm_major() {
  local v
  v=$(slurmctld -V 2>/dev/null | awk '{print $NF}')
  [[ $v =~ ^([0-9]+)\. ]] || die "cannot tell slurmctld's version ('$v')"
  echo "${BASH_REMATCH[1]}"
}

show_log() {  # show_log FILE: its last lines, indented, on stderr
  if [ -s "$1" ]; then
    echo "  last lines of $1:" >&2
    tail -n 15 "$1" | sed 's/^/    | /' >&2
  else
    echo "  ($1 is empty or missing)" >&2
  fi
}

client() { SLURM_CONF=$dir/slurm.conf "$@"; }

# Node states, one line per node: "emu1 idle".
node_states() { client sinfo -h -N -o '%N %T' 2>/dev/null | sort -u; }

# Hosts that live (emuhosts.sh down/crash stops them): their numbers, one a line.
live_hosts() {
  local i pid ns
  while read -r i pid ns; do
    [ "$(readlink "/proc/$pid/ns/mnt" 2>/dev/null || true)" = "$ns" ] && echo "$i"
  done <"$dir/pids"
}

# wait_idle SECONDS: until every live node is idle; false (with what is wrong on stderr) otherwise.
wait_idle() {
  local deadline=$(( $(date +%s) + $1 )) states i bad
  while :; do
    states=$(node_states)
    bad=
    for i in $(live_hosts); do
      grep -qx "emu$i idle" <<<"$states" || bad="$bad emu$i"
    done
    [ -z "$bad" ] && [ -n "$states" ] && return 0
    if [ "$(date +%s)" -ge "$deadline" ]; then
      echo "emuslurm.sh: node(s)$bad not idle within $1 s; sinfo says:" >&2
      client sinfo -N -o '%N %T %E' >&2 || true
      for i in $bad; do
        i=${i#emu}
        show_log "$dir/slurmd/emu$i.log"
        show_log "$dir/slurmd/emu$i.out"
      done
      show_log "$dir/slurmctld.log"
      return 1
    fi
    sleep 0.3
  done
}

# A part that died or did not come up in time: say so, with its log, and fail (the trap stops all).
part_failed() {  # part_failed PART WHY LOG...
  local part=$1 why=$2
  shift 2
  echo "emuslurm.sh: $part $why" >&2
  for log in "$@"; do show_log "$log"; done
  exit 1
}

cmd_start() {
  [ $# -ge 1 ] || usage
  local load
  for load in "$@"; do is_number "$load" || die "load '$load' is not a number (e.g. 0.5)"; done
  [ "$(id -u)" -eq 0 ] || die "needs root"
  local tool
  for tool in munged mungekey munge unmunge slurmctld slurmd slurmstepd sinfo scontrol nsenter unshare; do
    command -v "$tool" >/dev/null || [ -x "/usr/sbin/$tool" ] ||
      die "$tool is missing (install Debian's slurmctld slurmd slurm-client munge, util-linux)"
  done
  [ ${#dir} -le 70 ] || die "DIR '$dir' is too long for munge's socket path (at most 70 characters here)"
  local count=$#
  local features=()
  if [ -n "${EMU_SLURM_FEATURES:-}" ]; then
    read -r -a features <<<"$EMU_SLURM_FEATURES"
    [ "${#features[@]}" -eq "$count" ] || die "EMU_SLURM_FEATURES names ${#features[@]} feature(s) for $count node(s)"
    for f in "${features[@]}"; do [[ $f =~ ^[A-Za-z0-9_]+$ ]] || die "feature '$f' is not a word (letters, digits, _)"; done
  elif [ -n "${EMU_SITES:-}" ]; then
    local k
    for k in $EMU_SITES; do features+=("site$k"); done
  fi
  local major
  major=$(slurm_major)
  local accounting=${EMU_SLURM_ACCOUNTING:-0}
  [[ $accounting =~ ^[01]$ ]] || die "EMU_SLURM_ACCOUNTING must be 0 or 1, not '$accounting'"
  if [ "$accounting" = 1 ]; then
    for tool in mariadbd mariadb-install-db mariadb slurmdbd sacctmgr sacct; do
      command -v "$tool" >/dev/null || [ -x "/usr/sbin/$tool" ] ||
        die "$tool is missing (EMU_SLURM_ACCOUNTING=1 needs Debian's mariadb-server slurmdbd)"
    done
  fi

  # A cluster still running for DIR is stopped first.
  cmd_stop >/dev/null 2>&1 || true
  trap '[ "$start_done" = 1 ] || cmd_stop >/dev/null 2>&1' EXIT
  # Every node's TmpFS ($dir/nodetmp) is its own, as on real machines: the PMIx plugin makes the
  # same directory names there on every node of a step (spmix_appdir_<uid>_<job>.<step>).
  rm -rf "$dir/nodetmp"
  EMU_NETNS=1 EMU_PRIVATE_DIRS="${EMU_PRIVATE_DIRS:+$EMU_PRIVATE_DIRS }$dir/nodetmp" \
    "$emuhosts" start "$dir" "$@" || die "emuhosts.sh start failed"
  local net prefix ctl_addr
  net=$(cat "$dir/net")
  prefix=$(cat "$dir/address_prefix")
  ctl_addr=${prefix}254
  local addrs=()
  mapfile -t addrs <"$dir/addresses"
  : >"$dir/slurm_pids"

  # munged: one for the cluster. Its socket is on the shared file system, so every host reaches it.
  local m=$dir/munge
  rm -rf "$m"
  mkdir -m 0711 "$m"  # (every user may reach the socket; the key is root's alone)
  mungekey --create --bits=1024 --keyfile="$m/munge.key" 2>"$m/mungekey.err" ||
    dd if=/dev/urandom of="$m/munge.key" bs=1 count=1024 status=none
  chmod 0400 "$m/munge.key"
  local sock=$m/munge.socket.2
  munged --foreground --force --socket="$sock" --key-file="$m/munge.key" --pid-file="$m/munged.pid" \
    --log-file="$m/munged.log" --seed-file="$m/munged.seed" </dev/null >>"$m/munged.log" 2>&1 &
  local munged_pid=$!
  record munged "$munged_pid"
  local deadline=$(( $(date +%s) + timeout_s ))
  until munge -n -S "$sock" 2>/dev/null | unmunge -S "$sock" >/dev/null 2>&1; do
    kill -0 "$munged_pid" 2>/dev/null || part_failed munged "exited" "$m/munged.log"
    [ "$(date +%s)" -lt "$deadline" ] ||
      part_failed munged "does not answer on $sock within $timeout_s s" "$m/munged.log"
    sleep 0.1
  done

  # slurm.conf (and cgroup.conf: Slurm 23 and later read it, and must not touch cgroups here).
  local conf=$dir/slurm.conf i dbd_port=$((17500 + net))
  rm -rf "$dir/slurmctld" "$dir/slurmd"
  mkdir -p "$dir/slurmctld" "$dir/slurmd"
  for ((i = 1; i <= count; i++)); do mkdir -p "$dir/slurmd/emu$i"; done
  {
    cat <<EOF
# emulated Slurm cluster in $dir (generated by emuslurm.sh); stop with: emuslurm.sh stop $dir
ClusterName=bspgemu
SlurmctldHost=$ctl_name($ctl_addr)
SlurmctldPort=$((17000 + net))
SlurmdPort=6818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$sock
CredType=cred/munge
StateSaveLocation=$dir/slurmctld
SlurmdSpoolDir=$dir/slurmd/%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd/%n.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd/%n.log
TmpFS=$dir/nodetmp
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
$(if [ "$accounting" = 1 ]; then
  # (AccountingStoragePass: with munge, the socket to reach munged by on the way to slurmdbd)
  printf 'AccountingStorageType=accounting_storage/slurmdbd\nAccountingStorageHost=%s\nAccountingStoragePort=%s\nAccountingStoragePass=%s\n' \
    "$ctl_addr" "$dbd_port" "$sock"
else
  echo AccountingStorageType=accounting_storage/none
fi)
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
SlurmdTimeout=$slurmd_timeout
SlurmctldTimeout=10
MessageTimeout=5
InactiveLimit=0
KillWait=5
Waittime=0
MinJobAge=120
SlurmdParameters=config_overrides
MailProg=/bin/true
EOF
    for ((i = 1; i <= count; i++)); do
      printf 'NodeName=emu%d NodeHostname=emu%d NodeAddr=%s CPUs=%d RealMemory=%d State=UNKNOWN%s\n' \
        "$i" "$i" "${addrs[$((i - 1))]}" "$slots" "$memory" \
        "$([ ${#features[@]} -eq 0 ] || echo " Features=${features[$((i - 1))]}")"
    done
    echo "PartitionName=emu Nodes=ALL Default=YES MaxTime=INFINITE State=UP"
  } >"$conf"
  rm -f "$dir/cgroup.conf"
  if [ "$major" -ge 23 ]; then
    printf '# emulated Slurm cluster: no cgroups (generated by emuslurm.sh)\nCgroupPlugin=disabled\n' >"$dir/cgroup.conf"
  fi

  if [ "$accounting" = 1 ]; then
    start_accounting "$sock" "$ctl_addr" "$dbd_port"
    # The cluster must be known to the database before slurmctld reports to it, and a job's user
    # must have an association (account) there for its records to be kept.
    { client sacctmgr -i add cluster bspgemu &&
      client sacctmgr -i add account bspg Cluster=bspgemu Description=tests Organization=bspg &&
      client sacctmgr -i add user "$(id -un)" Account=bspg Cluster=bspgemu; } >"$dir/sacctmgr.out" 2>&1 ||
      part_failed sacctmgr "could not register the cluster, its account and user" "$dir/sacctmgr.out" "$dir/slurmdbd.log"
  fi

  # slurmctld: in a UTS namespace named like the controller (it refuses to run elsewhere).
  : >"$dir/slurmctld.log"
  # shellcheck disable=SC2016  # a script for sh, with its arguments
  unshare --uts -- /bin/sh -c 'hostname "$1" && shift && exec "$@"' slurmctld "$ctl_name" \
    slurmctld -D -c -f "$conf" </dev/null >"$dir/slurmctld.out" 2>&1 &
  local ctld_pid=$!
  sleep 0.05
  record slurmctld "$ctld_pid"
  deadline=$(( $(date +%s) + timeout_s ))
  until client scontrol ping 2>/dev/null | grep -q 'is UP'; do
    kill -0 "$ctld_pid" 2>/dev/null || part_failed slurmctld "exited" "$dir/slurmctld.out" "$dir/slurmctld.log"
    [ "$(date +%s)" -lt "$deadline" ] ||
      part_failed slurmctld "does not answer at $ctl_addr within $timeout_s s" "$dir/slurmctld.out" "$dir/slurmctld.log"
    sleep 0.2
  done

  # One slurmd per host, in its namespaces (nsenter execs: the pid is slurmd's). --root: the
  # host's root directory, which is this one's (entering a mount namespace would otherwise put
  # slurmd at the namespace's real root: outside the chroot, where this may run).
  local pid ns
  while read -r i pid ns; do
    : >"$dir/slurmd/emu$i.log"
    nsenter -t "$pid" -m -u -n --root --wd="$dir" -- slurmd -D -N "emu$i" -f "$conf" </dev/null >"$dir/slurmd/emu$i.out" 2>&1 &
    record "slurmd$i" $!
  done <"$dir/pids"
  # Every node idle (a slurmd that exited shows up there too, as a node that never answers).
  sleep 0.5
  local part start
  while read -r part pid start; do
    [[ $part =~ ^slurmd([0-9]+)$ ]] || continue
    same_process "$pid" "$start" ||
      part_failed "slurmd of emu${BASH_REMATCH[1]}" "exited" "$dir/slurmd/emu${BASH_REMATCH[1]}.out" "$dir/slurmd/emu${BASH_REMATCH[1]}.log"
  done <"$dir/slurm_pids"
  wait_idle "$timeout_s" || exit 1

  cat >"$dir/slurm.env" <<EOF
# emulated Slurm cluster in $dir (generated by emuslurm.sh): . $dir/slurm.env
export SLURM_CONF=$conf
export EMUSLURM_DIR=$dir
EOF
  start_done=1
  echo "emuslurm.sh: Slurm $(slurmctld -V | awk '{print $NF}') cluster bspgemu up: nodes emu1-$count ($slots CPUs each), partition emu, controller $ctl_name at $ctl_addr (. $dir/slurm.env)"
}

# start_accounting MUNGE_SOCKET ADDRESS PORT: MariaDB (on 127.0.0.1 of this network namespace) and
# slurmdbd, listening on ADDRESS:PORT for slurmctld and the client commands.
start_accounting() {
  local sock=$1 addr=$2 port=$3 db=$dir/db deadline
  local db_port=$((port + 1000)) password
  password=$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
  rm -rf "$db"
  mkdir -p "$db"
  # --no-defaults everywhere: the machine's own MariaDB configuration (its socket, its data) is
  # not this one's.
  mariadb-install-db --no-defaults --datadir="$db/data" --user=root --skip-test-db \
    --auth-root-authentication-method=socket >"$db/install.log" 2>&1 ||
    part_failed mariadb-install-db "failed" "$db/install.log"
  mariadbd --no-defaults --datadir="$db/data" --socket="$db/mariadb.sock" --port="$db_port" \
    --bind-address=127.0.0.1 --user=root --pid-file="$db/mariadbd.pid" --log-error="$db/mariadbd.log" \
    --skip-log-bin --innodb-buffer-pool-size=16M </dev/null >"$db/mariadbd.out" 2>&1 &
  local db_pid=$!
  record mariadbd "$db_pid"
  deadline=$(( $(date +%s) + timeout_s ))
  until mariadb --no-defaults -S "$db/mariadb.sock" -e 'SELECT 1' >/dev/null 2>&1; do
    kill -0 "$db_pid" 2>/dev/null || part_failed mariadbd "exited" "$db/mariadbd.out" "$db/mariadbd.log"
    [ "$(date +%s)" -lt "$deadline" ] ||
      part_failed mariadbd "does not answer within $timeout_s s" "$db/mariadbd.log"
    sleep 0.1
  done
  # The database is made here: slurmdbd would make it itself after a failed connection, on the
  # same connection handle, which MariaDB's client library 3.4 (Debian 13) then leaves unable to
  # read any result ("Number of columns in result set exceeds maximum allowed number (=0)").
  mariadb --no-defaults -S "$db/mariadb.sock" -e "CREATE DATABASE slurm_acct_db;
    CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY '$password';
    GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';" >"$db/grant.log" 2>&1 ||
    part_failed mariadb "could not create slurmdbd's database and user" "$db/grant.log"
  # slurmdbd reads slurmdbd.conf beside slurm.conf, and only when no one else may read it.
  (umask 077 && cat >"$dir/slurmdbd.conf" <<EOF
# emulated Slurm cluster's accounting (generated by emuslurm.sh)
AuthType=auth/munge
AuthInfo=socket=$sock
DbdHost=localhost
DbdAddr=$addr
DbdPort=$port
SlurmUser=root
LogFile=$dir/slurmdbd.log
PidFile=$dir/slurmdbd.pid
DebugLevel=info
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$db_port
StorageUser=slurm
StoragePass=$password
StorageLoc=slurm_acct_db
EOF
  )
  : >"$dir/slurmdbd.log"
  SLURM_CONF=$dir/slurm.conf slurmdbd -D </dev/null >"$dir/slurmdbd.out" 2>&1 &
  local dbd_pid=$!
  record slurmdbd "$dbd_pid"
  deadline=$(( $(date +%s) + timeout_s ))
  until grep -q "slurmdbd version .* started" "$dir/slurmdbd.log" 2>/dev/null; do
    kill -0 "$dbd_pid" 2>/dev/null || part_failed slurmdbd "exited" "$dir/slurmdbd.out" "$dir/slurmdbd.log"
    [ "$(date +%s)" -lt "$deadline" ] ||
      part_failed slurmdbd "did not start within $timeout_s s" "$dir/slurmdbd.out" "$dir/slurmdbd.log"
    sleep 0.1
  done
}

cmd_wait_state() {  # I REGEX SECONDS
  local i=$1 re=$2 secs=$3 deadline state
  deadline=$(( $(date +%s) + secs ))
  while :; do
    state=$(node_states | awk -v n="emu$i" '$1 == n {print $2}')
    if [[ $state =~ ^($re)$ ]]; then echo "emu$i $state"; return 0; fi
    [ "$(date +%s)" -lt "$deadline" ] || die "node emu$i is '$state', not '$re', after $secs s"
    sleep 0.3
  done
}

[ $# -ge 2 ] || usage
cmd=$1
if [ "$cmd" = stop ] && [ ! -d "$2" ]; then exit 0; fi  # nothing was started there
dir=$(abs_dir "$2") || die "cannot create directory '$2'"
shift 2
case "$cmd" in
  start) cmd_start "$@" ;;
  stop) [ $# -eq 0 ] || usage; cmd_stop ;;
  down) [ $# -eq 1 ] || usage; "$emuhosts" crash "$dir" "$1" ;;
  setload) [ $# -eq 2 ] || usage; "$emuhosts" setload "$dir" "$1" "$2" ;;
  freeze | thaw | pids) [ $# -eq 1 ] || usage; "$emuhosts" "$cmd" "$dir" "$1" ;;
  wait-idle)
    [ $# -le 1 ] || usage
    [[ ${1:-30} =~ ^[0-9]+$ ]] || die "SECONDS must be a number, not '$1'"
    wait_idle "${1:-30}" ;;
  wait-state)
    if [ $# -lt 2 ] || [ $# -gt 3 ]; then usage; fi
    [[ ${3:-30} =~ ^[0-9]+$ ]] || die "SECONDS must be a number, not '$3'"
    cmd_wait_state "$1" "$2" "${3:-30}" ;;
  *) usage ;;
esac
