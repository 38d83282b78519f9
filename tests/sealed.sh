#!/usr/bin/env bash
# sealed.sh [--or-skip | --or-unsealed] COMMAND [ARGS...] - run COMMAND sealed off from the network.
#
# COMMAND runs in a network namespace of its own in which only loopback (lo) is up: no packet or
# name lookup can leave the machine (a name like emu1 fails at once instead of reaching the
# machine's resolver), and the test does not depend on the machine's network setup. Tests that
# start emulated hosts, bsprun's grid path or MPI over TCP run through this wrapper.
#   --or-skip      (default) where no namespace can be made (not root, no unshare or ip), say why
#                  and exit 77, which ctest reports as skipped (SKIP_RETURN_CODE 77)
#   --or-unsealed  where no namespace can be made, run COMMAND as it is (tests that only run
#                  processes on this machine, which work either way)
# Inside, BSPG_SEALED_NET names the namespace; a nested call runs COMMAND directly.
#   sealed.sh --check  exits 0 when the caller runs sealed, 1 otherwise.
set -u
mode=skip
case "${1:-}" in
  --or-skip) shift ;;
  --or-unsealed) mode=unsealed; shift ;;
  --check)
    [ -n "${BSPG_SEALED_NET:-}" ] && [ "$(readlink /proc/self/ns/net)" = "$BSPG_SEALED_NET" ] &&
      [ "$BSPG_SEALED_NET" != "$(readlink /proc/1/ns/net 2>/dev/null)" ]
    exit ;;
esac
[ $# -gt 0 ] || { echo "usage: sealed.sh [--or-skip | --or-unsealed] COMMAND [ARGS...]" >&2; exit 2; }

if "$0" --check; then exec "$@"; fi

why=
if ! command -v unshare >/dev/null; then
  why="unshare (util-linux) is not installed"
elif ! command -v ip >/dev/null; then
  why="ip (iproute2) is not installed"
elif ! err=$(unshare --net true 2>&1); then
  why="unshare --net does not work here (needs root or CAP_SYS_ADMIN): $err"
fi
if [ -n "$why" ]; then
  if [ "$mode" = unsealed ]; then
    echo "sealed.sh: running unsealed: $why" >&2
    exec "$@"
  fi
  echo "SKIP: this test only runs in a network namespace of its own, and $why"
  exit 77
fi

# shellcheck disable=SC2016
exec unshare --net -- bash -c '
  ip link set lo up || { echo "sealed.sh: cannot bring up lo in the new network namespace" >&2; exit 1; }
  BSPG_SEALED_NET=$(readlink /proc/self/ns/net) && export BSPG_SEALED_NET
  exec "$@"' sealed "$@"
