#!/usr/bin/env bash
# shellcheck disable=SC2016,SC2317  # bash -c scripts in single quotes; functions called by traps
# debian13.sh - run bspg.sh in a Debian 13 (trixie) root made with debootstrap, with Open MPI or MPICH.
#
# NAME
#   tests/distros/debian13.sh - build and test bspg on Debian 13 from nothing
#
# SYNOPSIS
#   tests/distros/debian13.sh [--mpi openmpi|mpich] [--root DIR] [run|test|build|bench|shell|CMD...]
#
# DESCRIPTION
#   Makes a minimal Debian 13 root in DIR (debootstrap --variant=minbase trixie, from
#   http://deb.debian.org/debian) unless a complete one is there already, then runs the command in
#   it through chroot, with the source tree at /src:
#     run, test, build, bench   /src/bspg.sh COMMAND (the default is test), run in the build
#                               directory; bspg.sh installs every package itself, as on a
#                               fresh machine
#     shell                     an interactive shell in the build directory (or /src)
#     CMD [ARGS...]             any other command, run in /src
#   The build directory is /build-openmpi or /build-mpich inside the root (BUILD_DIR), so the
#   source tree and its build/ stay untouched. bspg.sh gets BSPG_MPI=openmpi|mpich.
#   Everything is mounted in a private mount and PID namespace (proc, sysfs, /dev, /dev/pts, a
#   private /dev/shm, /tmp and /run as tmpfs, the source tree at /src): nothing shows up in the
#   host's mount table, and every process and mount is gone when the script ends, on failure or
#   Ctrl-C too. Needs root, debootstrap (installed with apt-get when missing), unshare and chroot.
#
# OPTIONS
#   --mpi openmpi|mpich   the MPI to build against (default: $BSPG_MPI, else openmpi)
#   --root DIR            the Debian 13 root (default: $BSPG_DEBIAN13_ROOT, else /var/tmp/bspg-debian13)
#   -h, --help            this text
#
# ENVIRONMENT
#   JOBS, CI and BSPG_* variables are passed to the command inside; TERM too.
#   BSPG_DEBIAN13_MIRROR  the Debian mirror (default http://deb.debian.org/debian)
#
# EXIT STATUS
#   that of the command run inside; 2 for bad arguments; 1 when the root cannot be made or entered.
set -euo pipefail

say() { printf '[debian13] %s\n' "$*" >&2; }
die() { printf 'debian13.sh: %s\n' "$*" >&2; exit 1; }
usage_error() {
  printf 'debian13.sh: %s\n' "$*" >&2
  echo "usage: tests/distros/debian13.sh [--mpi openmpi|mpich] [--root DIR] [run|test|build|bench|shell|CMD...] (--help for more)" >&2
  exit 2
}
help() { sed -n '/^# NAME/,/^set -euo/p' "$self" | sed -e '$d' -e 's/^# \{0,1\}//'; }

self=$(readlink -f "${BASH_SOURCE[0]}")
src=$(cd "$(dirname "$self")/../.." && pwd)
marker=.bspg-bootstrap-complete
suite=trixie
mirror=${BSPG_DEBIAN13_MIRROR:-http://deb.debian.org/debian}

# Waits for PID (a child of this shell) to end and sets wait_rc to its exit status. A trap that
# fires meanwhile interrupts `wait` (status 128 + the signal); the loop then waits again. Where the
# child ended meanwhile, bash may have lost its status (127 or -1): wait_rc then stays the one of
# the interrupted wait, and the caller knows better (the namespace's status file).
got_signal=0
wait_for() {
  local pid=$1 r
  wait_rc=
  while :; do
    got_signal=0
    r=0
    wait "$pid" 2>/dev/null || r=$? # (no "Killed" line from bash: the status says it)
    if { [ "$r" -ge 0 ] && [ "$r" != 127 ]; } || [ -z "$wait_rc" ]; then wait_rc=$r; fi
    if [ "$got_signal" = 0 ] || [ "$r" -le 128 ]; then break; fi
  done
}

# ---------------------------------------------------------------------------------------------
# Inside the private mount and PID namespace (PID 1 there): mount, chroot, run, exit with its status.
if [ "${1:-}" = __inside ]; then
  shift
  root=$_BSPG_D13_ROOT
  mpi=$_BSPG_D13_MPI
  # unshare --propagation private made every mount private already; this only makes sure.
  mount --make-rprivate /
  # The root a mount point of its own: inside, / is then a mount, as on a real system, and
  # `unshare --mount --propagation private` (emulated hosts, tests) can change its propagation
  # (on a plain directory that fails with EINVAL).
  mount --bind "$root" "$root"
  mount -t proc -o nosuid,nodev,noexec proc "$root/proc"
  mount -t sysfs -o nosuid,nodev,noexec sysfs "$root/sys"
  mount --bind /dev "$root/dev"
  if mountpoint -q /dev/pts; then mount --bind /dev/pts "$root/dev/pts"; fi
  mount -t tmpfs -o nosuid,nodev,mode=1777 bspg-d13-shm "$root/dev/shm"
  mount -t tmpfs -o nosuid,nodev,mode=1777 bspg-d13-tmp "$root/tmp"
  mount -t tmpfs -o nosuid,nodev,mode=0755 bspg-d13-run "$root/run"
  mkdir -m 1777 "$root/run/lock"
  mount --bind "$src" "$root/src"

  envv=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root USER=root
    LOGNAME=root SHELL=/bin/bash LANG=C.UTF-8 TERM="${TERM:-dumb}" debian_chroot="debian13-$mpi"
    BSPG_MPI="$mpi" BUILD_DIR="/build-$mpi")
  [ -z "${JOBS+x}" ] || envv+=(JOBS="$JOBS")
  [ -z "${CI+x}" ] || envv+=(CI="$CI")
  while IFS='=' read -r name _; do
    case "$name" in BSPG_MPI | BSPG_DEBIAN13_*) ;; BSPG_*) envv+=("$name=${!name}") ;; esac
  done < <(env | grep -E '^BSPG_[A-Za-z0-9_]*=' || true)

  case "${1:-test}" in
    # From the build directory: what the programs write (bspbench.dat, .gp, .png) lands there,
    # not in the source tree.
    run | test | build | bench)
      inner=('mkdir -p "$BUILD_DIR" && cd "$BUILD_DIR" && exec /src/bspg.sh "$1"' "${1:-test}") ;;
    shell) inner=('cd "$BUILD_DIR" 2>/dev/null || cd /src; exec bash -i') ;;
    *) inner=('cd /src && exec "$@"' "$@") ;;
  esac
  # This shell is PID 1 here and stays, to reap what is orphaned inside and to hand the status
  # on; it has no traps, so its wait is never interrupted (the script outside signals the
  # command itself). The command keeps stdin and gets every signal's default handling back
  # (a background job of a script starts with SIGINT and SIGQUIT ignored).
  env -i "${envv[@]}" env --default-signal chroot "$root" /bin/bash -c "${inner[0]}" bspg-debian13 \
    "${inner[@]:1}" <&0 9>&- &
  rc=0
  wait "$!" || rc=$?
  echo "$rc" >"$_BSPG_D13_STATUS"
  exit "$rc"
fi

# ---------------------------------------------------------------------------------------------
# On the host: arguments.
mpi=${BSPG_MPI:-openmpi}
root=${BSPG_DEBIAN13_ROOT:-/var/tmp/bspg-debian13}
while [ $# -gt 0 ]; do
  case "$1" in
    -h | --help) help; exit 0 ;;
    --mpi) [ $# -ge 2 ] || usage_error "--mpi needs a value (openmpi or mpich)"; mpi=$2; shift 2 ;;
    --mpi=*) mpi=${1#--mpi=}; shift ;;
    --root) [ $# -ge 2 ] || usage_error "--root needs a directory"; root=$2; shift 2 ;;
    --root=*) root=${1#--root=}; shift ;;
    --) shift; break ;;
    -*) usage_error "unknown option '$1'" ;;
    *) break ;;
  esac
done
case "$mpi" in openmpi | mpich) ;; *) usage_error "--mpi must be openmpi or mpich, not '$mpi'" ;; esac
[ -n "$root" ] || usage_error "--root must not be empty"
[[ $root != *$'\n'* ]] || usage_error "--root must not contain a newline"
root=$(realpath -m -- "$root")
[ "$root" != / ] || usage_error "--root must not be /"
case "$src/" in "$root"/*) usage_error "--root must not contain the source tree ($src)" ;; esac
case "$root/" in "$src"/*) usage_error "--root must not be inside the source tree ($src)" ;; esac
[ $# -gt 0 ] || set -- test
case "$1" in shell) [ $# -eq 1 ] || usage_error "shell takes no arguments" ;; esac

[ "$(id -u)" -eq 0 ] || die "needs root (debootstrap, mount, chroot): run it with sudo"
for tool in unshare chroot mountpoint flock realpath; do
  command -v "$tool" >/dev/null || die "$tool is missing on this machine"
done
start=$SECONDS

# What runs in the background of this shell (flock, debootstrap, the namespace of the command) is
# waited for with wait_for, so that a signal is handled at once; cleanup ends it, however the
# script ends. Namespaces are started with --kill-child: when unshare ends, however it ends, PID 1
# inside gets SIGKILL, and with it every process of the namespace; the mounts go with the last.
child=
gentle=0 # 1 while the command runs: a signal first asks it to stop
stopped_by=
watchdog=
status_file=
cleanup() {
  if [ -n "$child" ]; then kill -KILL "$child" 2>/dev/null || true; fi
  if [ -n "$watchdog" ]; then kill "$watchdog" 2>/dev/null || true; fi
  if [ -n "$status_file" ]; then rm -f "$status_file"; fi
}
trap cleanup EXIT
# A signal (NAME NUMBER): while the command runs, ask it to stop (through PID 1 of its namespace),
# and kill the namespace 10 s later or at a second signal. Otherwise stop at once.
on_signal() {
  got_signal=1
  stopped_by=$((128 + $2))
  if [ -z "$child" ]; then
    say "stopped (signal $1)"
    exit "$stopped_by"
  fi
  if [ "$gentle" = 0 ] || [ -n "$watchdog" ]; then
    kill -KILL "$child" 2>/dev/null || true
    return 0 # (a bare return would give the trap the status of the interrupted wait, and set -e)
  fi
  say "stopping (signal $1)"
  # SIGTERM to the processes at the top of the namespace: the command (and what was orphaned).
  local pid1='' top=()
  read -r pid1 _ <"/proc/$child/task/$child/children" 2>/dev/null || true
  [ -z "$pid1" ] || read -r -a top <"/proc/$pid1/task/$pid1/children" 2>/dev/null || true
  [ ${#top[@]} -eq 0 ] || kill -TERM "${top[@]}" 2>/dev/null || true
  bash -c 'trap "kill \$s 2>/dev/null; exit 0" TERM; sleep 10 & s=$!; wait "$s" && kill -KILL "$1"' \
    watchdog "$child" </dev/null >/dev/null 2>&1 &
  watchdog=$!
}
trap 'on_signal INT 2 || true' INT
trap 'on_signal TERM 15 || true' TERM
trap 'on_signal HUP 1 || true' HUP

# One run per root at a time: apt and dpkg inside cannot run twice at once. (A flock lock belongs
# to the open file, so the background flock takes it for this shell too.)
exec 9>"$root.lock"
if ! flock -n 9; then
  say "waiting for another run on $root to finish"
  flock 9 &
  child=$!
  wait_for "$child"
  child=
  [ -z "$stopped_by" ] || exit "$stopped_by"
  [ "$wait_rc" = 0 ] || die "could not lock $root.lock"
fi

# Mounts under ROOT in this (the host's) mount namespace: there should be none.
host_mounts_under() {
  awk -v r="$1/" 'substr($5, 1, length(r)) == r { print $5 }' /proc/self/mountinfo
}

ensure_debootstrap() {
  command -v debootstrap >/dev/null && [ -e "/usr/share/debootstrap/scripts/$suite" ] && return 0
  say "installing debootstrap on this machine (apt-get)"
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-get install -y -qq --no-install-recommends debootstrap debian-archive-keyring >/dev/null 2>&1; then
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends debootstrap debian-archive-keyring >/dev/null
  fi
  [ -e "/usr/share/debootstrap/scripts/$suite" ] ||
    die "this debootstrap ($(dpkg-query -W -f='${Version}' debootstrap)) does not know $suite"
}

bootstrap() {
  [ -f "$root/$marker" ] && return 0
  ensure_debootstrap
  if [ -e "$root" ]; then
    [ -z "$(host_mounts_under "$root")" ] ||
      die "$root is half made and has mounts under it; unmount them first: $(host_mounts_under "$root" | tr '\n' ' ')"
    say "removing $root: an earlier debootstrap did not complete"
    rm -rf --one-file-system -- "$root"
  fi
  mkdir -p "$root"
  say "debootstrap --variant=minbase $suite $root $mirror (this downloads; a minute or more)"
  local t0=$SECONDS log="$root.debootstrap.log"
  # In namespaces of its own too: debootstrap's mounts (proc, sys) never reach the host, and
  # nothing it started outlives it.
  unshare --mount --propagation private --pid --fork --kill-child -- \
    debootstrap --variant=minbase "$suite" "$root" "$mirror" </dev/null >"$log" 2>&1 &
  child=$!
  wait_for "$child"
  child=
  if [ -n "$stopped_by" ]; then
    say "debootstrap stopped; the next run starts over"
    exit "$stopped_by"
  fi
  if [ "$wait_rc" != 0 ]; then
    tail -n 30 "$log" >&2
    die "debootstrap failed with status $wait_rc (log: $log); the next run starts over"
  fi
  # The rest of a Debian 13 system's sources: updates and security fixes, from the same archive.
  local base=${mirror%/}
  cat >"$root/etc/apt/sources.list" <<EOF
deb $base $suite main
deb $base $suite-updates main
deb ${base}-security $suite-security main
EOF
  mkdir -p "$root/src"
  printf 'suite=%s\nmirror=%s\ndate=%s\nseconds=%s\n' "$suite" "$mirror" "$(date -u +%FT%TZ)" \
    "$((SECONDS - t0))" >"$root/$marker"
  say "debootstrap done in $((SECONDS - t0)) s"
}

bootstrap
for d in proc sys dev tmp run src; do mkdir -p "$root/$d"; done
# apt inside needs a resolver: the host's, as a plain file. debootstrap writes no /etc/hosts,
# which every installed system has; without it a lookup of localhost would go out to the resolver.
# The host's fits, as the chroot shares its host name.
for f in resolv.conf hosts; do
  rm -f "$root/etc/$f"
  cp -L "/etc/$f" "$root/etc/$f"
done

what=$(printf '%q ' "$@")
what=${what% }
say "$mpi: running '$what' in $root (source tree at /src, build in /build-$mpi)"
status_file=$(mktemp /tmp/bspg-debian13-status.XXXXXX)
export _BSPG_D13_ROOT=$root _BSPG_D13_MPI=$mpi _BSPG_D13_STATUS=$status_file
unshare --mount --propagation private --pid --fork --kill-child -- bash "$self" __inside "$@" <&0 &
child=$!
gentle=1
wait_for "$child"
child=
# The command's own status, as PID 1 inside saw it; none when the namespace was killed.
if [ -s "$status_file" ]; then read -r wait_rc <"$status_file"; fi
say "$mpi: '$what' exited with status $wait_rc after $((SECONDS - start)) s"
exit "$wait_rc"
