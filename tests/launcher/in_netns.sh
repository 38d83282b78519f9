#!/usr/bin/env bash
# in_netns.sh COMMAND [ARGS...] - runs COMMAND in a network namespace of its own in which only
# the loopback interface exists (and is up): nothing it starts can reach another machine, and
# its listeners are invisible outside. Exits 77 (ctest's skip status) when that is not possible
# here (not root, or no unshare/ip, or no permission to make namespaces).
set -u
if [ "$(id -u)" -ne 0 ] || ! command -v unshare >/dev/null || ! command -v ip >/dev/null ||
  ! unshare --net true 2>/dev/null; then
  echo "SKIP: needs root, unshare and ip to make a network namespace"
  exit 77
fi
exec unshare --net -- sh -c 'ip link set lo up && exec "$@"' in_netns.sh "$@"
