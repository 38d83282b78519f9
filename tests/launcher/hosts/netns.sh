#!/bin/sh
# netns.sh COMMAND [ARGS...] - runs COMMAND in a network namespace of its own, where only lo exists
# (and is up): whatever the test starts or asks can reach nothing but loopback, and the test does
# not depend on this machine's network. Exits 77 (skipped) where namespaces are not allowed.
if ! unshare --net true 2>/dev/null; then
  echo "SKIP: unshare --net is not allowed here (needs root)"
  exit 77
fi
exec unshare --net sh -c 'ip link set lo up && exec "$0" "$@"' "$@"
