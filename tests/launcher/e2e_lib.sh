# e2e_lib.sh - sourced by the end-to-end scripts that run bsprun against emulated hosts
# (grid_e2e.sh, restart_e2e.sh). It makes the script run sealed (a network namespace of its own
# with only loopback, tests/sealed.sh, re-running it through that if started otherwise), skips it
# (exit 77) without root, unshare or sshd, makes a scratch directory $dir (the working directory,
# and TMPDIR for bsprun) that is removed with the emulated hosts on exit, and keeps Open MPI on
# loopback. Needs BSPRUN and EMUHOSTS. Then:
#   start_hosts LOAD...         emulated hosts in $dir (emuhosts.sh start)
#   run_bsprun ARGS...          bsprun, bounded by `timeout`: stdout in $out, stderr in $err,
#                               exit status in $status (under the command prefix in array wrap)
#   fail MESSAGE                counts a failed check; finish reports them
#   job_processes I, expect_nothing_left N [SECONDS]   the job's processes ($tag) on host I, none left
#   process_on I                the pid of the job's $CKPT_JOB process on host I
#   expect_status N|nonzero     expect_count FILE REGEX N     expect_match FILE REGEX
#   finish                      the scenario's verdict: exit 1 after failed checks, else "ok: ..."
: "${BSPRUN:?}" "${EMUHOSTS:?}"
SEALED=${SEALED:-$(dirname "$0")/../sealed.sh}
"$SEALED" --check || exec "$SEALED" --or-skip "$0" "$@"

if [ "$(id -u)" -ne 0 ] || ! command -v unshare >/dev/null || [ ! -x /usr/sbin/sshd ]; then
  echo "SKIP: needs root, unshare and /usr/sbin/sshd"
  exit 77
fi

dir=$(mktemp -d /tmp/bsprun-e2e-XXXXXX)
export TMPDIR=$dir  # bsprun's default RSL file and ssh configuration go here, and are removed
cleanup() {
  "$EMUHOSTS" stop "$dir" >/dev/null 2>&1
  rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Keep Open MPI on loopback, the emulated hosts' network, unless each host has a network of its
# own (EMU_NETNS=1), where loopback is each host's alone.
if [ "${EMU_NETNS:-0}" != 1 ]; then
  export OMPI_MCA_oob_tcp_if_include=lo OMPI_MCA_btl_tcp_if_include=lo
fi
# The emulated hosts share this machine's few cores: a process that waits busily would hold a core
# another host's process needs (each collective then costs several scheduler time slices, tens of
# milliseconds). Real hosts have cores of their own; here every waiting process yields. (bsprun
# passes OMPI_MCA_ variables on to every host.)
export OMPI_MCA_mpi_yield_when_idle=1
cd "$dir" || exit 1

failures=0
out=$dir/out err=$dir/err status=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# run_bsprun ARGS...: stdout to $out, stderr to $err, exit status in $status. If the array
# wrap is set, bsprun runs under that command prefix.
run_bsprun() {
  echo "---- ${wrap[*]+${wrap[*]} }bsprun $*"
  timeout --kill-after=5 90 ${wrap[@]+"${wrap[@]}"} "$BSPRUN" "$@" >"$out" 2>"$err" </dev/null
  status=$?
  cat "$err" "$out" | sed 's/^/    | /'
}
expect_status() {
  if [ "$1" = nonzero ]; then
    [ "$status" -ne 0 ] && [ "$status" -ne 124 ] || fail "expected a non-zero exit (not a timeout), got $status"
  else
    [ "$status" -eq "$1" ] || fail "expected exit $1, got $status"
  fi
}
# expect_count FILE REGEX N
expect_count() {
  local n
  n=$(grep -Ec -- "$2" "$1")
  [ "$n" -eq "$3" ] || fail "expected $3 line(s) matching '$2' in $(basename "$1"), found $n"
}
expect_match() { grep -Eq -- "$2" "$1" || fail "no line matching '$2' in $(basename "$1")"; }
# guide_examples KIND PROGRAM: the user guide's examples of KIND (grid, slurm; tests/docs/
# examples.sh) run here, bsprun given --show (a --dry-run example as it is): each probes and
# places, prints the starter's command line (or the RSL) naming the program and starts nothing;
# a --resume finds nothing to resume. The examples' ./prog and ./sim are PROGRAM, their
# job.rsl the allocation of the first --dry-run example.
guide_examples() {
  local kind=$1 example words i n=0
  : "${DOC_EXAMPLES:?}" "${SOURCE_DIR:?}"
  cp "$2" prog && cp "$2" sim
  while IFS= read -r example; do
    n=$((n + 1))
    read -ra words <<<"$example"
    for ((i = 0; i < ${#words[@]}; ++i)); do
      [ "${words[i]}" = build/bin/bsprun ] && break
    done
    wrap=("${words[@]:0:i}")
    case " $example " in
      *" --dry-run "*) run_bsprun "${words[@]:i+1}" ;;
      *) run_bsprun --show "${words[@]:i+1}" ;;
    esac
    expect_count "$out" "^rank " 0
    case " $example " in
      *" --resume "*)
        expect_match "$err" "nothing to resume: no reachable (host|node) holds a checkpoint of this job" ;;
      *" --dry-run "*)
        expect_status 0
        expect_match "$out" '\(executable="?[^)]*/(prog|sim)"?\)'
        [ -s job.rsl ] || cp "$out" job.rsl ;;
      *)
        expect_status 0
        expect_match "$out" "(/prog|/sim|$WHERE)( |\$)" ;;
    esac
  done < <("$DOC_EXAMPLES" list "$kind" "$SOURCE_DIR")
  [ "$n" -gt 0 ] || fail "no $kind example in the guide"
  wrap=()
}
# expect_refused STATUS REGEX ARGS...: bsprun ARGS refuses with that exit status and a line of
# stderr matching REGEX, and no process of the job starts (no "rank"/"pid" line on stdout).
expect_refused() {
  local want=$1 pattern=$2
  shift 2
  run_bsprun "$@"
  expect_status "$want"
  expect_match "$err" "$pattern"
  expect_count "$out" "^(rank|pid) " 0
}

# Processes of the job (the script's $tag on their command line) on emulated host I (its private
# namespaces), or here with I = here.
job_processes() {
  local p n=0
  if [ "$1" = here ]; then
    pgrep -f "$tag" | grep -vx "$$" | wc -l
    return
  fi
  for p in $("$EMUHOSTS" pids "$dir" "$1"); do
    grep -q "$tag" "/proc/$p/cmdline" 2>/dev/null && n=$((n + 1))
  done
  echo "$n"
}

# process_on I: the first process of the job running $CKPT_JOB (with $tag on its command line)
# on host I, or nothing: the job's process there, or a spare.
process_on() {
  local p
  for p in $("$EMUHOSTS" pids "$dir" "$1"); do
    if tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -q "^${CKPT_JOB:-} .*$tag"; then
      echo "$p"
      return
    fi
  done
}

# expect_nothing_left N [SECONDS]: no process of the job left anywhere (hosts 1..N and here),
# allowing SECONDS (default 10) for them to go.
expect_nothing_left() {
  local t where left
  for ((t = 0; t < ${2:-10} * 10; t++)); do
    left=
    for where in here $(seq 1 "$1"); do
      [ "$(job_processes "$where")" -eq 0 ] || left="$left $where"
    done
    [ -z "$left" ] && return 0
    sleep 0.1
  done
  fail "processes of the job still running on:$left"
}

start_hosts() { "$EMUHOSTS" start "$dir" "$@" >/dev/null || { echo "FAIL: emuhosts.sh start failed"; exit 1; }; }

# Jobs run in the background (restart_e2e.sh, outlive_e2e.sh): the scenario sets steps, every,
# out and err; pid is bsprun's.
# reference P [ARGS...]: the answer of an uninterrupted run of P processes of CKPT_JOB on this
# machine (ARGS: more of ckpt_job's options, as the scenario's job has them).
reference() {
  "$BSPRUN" -p "$1" --checkpoint-dir "$dir/reference" "$CKPT_JOB" "$steps" "$every" "${@:2}" 2>&1 | grep '^RESULT'
}

start_job() {
  echo "---- bsprun $* (in the background)"
  "$BSPRUN" "$@" >"$out" 2>"$err" </dev/null &
  pid=$!
}

# wait_for FILE REGEX SECONDS: until a line matches, polling every 20 ms (fails if none does).
wait_for() {
  local t
  for ((t = 0; t < $3 * 50; t++)); do
    grep -Eq -- "$2" "$1" && return 0
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.02
  done
  grep -Eq -- "$2" "$1" && return 0
  fail "no line matching '$2' in $(basename "$1") within $3 s"
  return 1
}

# wait_job SECONDS: bsprun's exit status in $status, reaped the moment it exits (failed and
# killed after SECONDS).
wait_job() {
  local t
  for ((t = 0; t < $1 * 100; t++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.01
  done
  if kill -0 "$pid" 2>/dev/null; then
    fail "bsprun still running after $1 s"
    kill -KILL "$pid"
  fi
  wait "$pid"
  status=$?
  pid=
}
# show: bsprun's output so far, indented.
show() { cat "$err" "$out" | sed 's/^/    | /'; }

finish() {
  if [ "$failures" -ne 0 ]; then
    echo "$scenario: $failures check(s) failed"
    exit 1
  fi
  echo "ok: $scenario"
}
