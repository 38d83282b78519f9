#!/usr/bin/env bash
# ctrl_c_test.sh BSPRUN PROG - Ctrl-C typed on a terminal stops the whole job; typed input
# reaches rank 0; bsprun ends by SIGINT, so the shell script that ran it stops too (status 130,
# the command after bsprun never runs). The terminal is a pseudo-terminal made by script(1).
#
# The script is run by bash whatever $SHELL is: script(1) starts $SHELL (or /bin/sh), and a
# non-interactive dash dies of the Ctrl-C at once, which would hide what bsprun did.
set -u
. "$(dirname "$0")/job_helpers.sh"
bsprun=$1 prog=$2
command -v script >/dev/null || { echo "SKIP: script(1) not installed"; exit 77; }
marker=ctrlc-$$-$RANDOM pid=
out=$(mktemp) keys=$(mktemp -u)
mkfifo "$keys"
trap 'cleanup_job; rm -f "$keys"' EXIT

# The keyboard is a fifo held open until script(1) has finished, so the terminal never sees
# end-of-input early. timeout bounds everything: 4 s of typing, then 40 s to stop.
SHELL=/bin/bash timeout 44 script -qfec \
  "$bsprun -p 2 $prog --stdin-line --sleep 60 $marker; echo after-bsprun=\$?" /dev/null \
  <"$keys" >"$out" 2>&1 &
pid=$!
trap '' PIPE  # if the job ended early, typing fails and the checks below say why
exec 3>"$keys"
sleep 2; printf 'typed line\n' >&3
sleep 2; printf '\003' >&3
wait "$pid"
status=$?
exec 3>&-

grep -q '^stdin: typed line' "$out" || fail "rank 0 did not receive the typed line"
[ "$status" -ne 124 ] || fail "bsprun still running 40 s after Ctrl-C"
grep -q 'after-bsprun=' "$out" &&
  fail "the script went on after Ctrl-C: bsprun exited normally instead of ending by SIGINT"
[ "$status" -eq 130 ] || fail "the script's status was $status after Ctrl-C, not 130 (SIGINT)"
sleep 0.5
expect_no_ranks_left
echo "ok: Ctrl-C stopped the job and the script (status 130), typed input reached rank 0"
