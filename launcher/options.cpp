// options.cpp - hand-written parser: options stop at the program name, so the
// program's own options are never touched.
#include "options.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>

#include "checkpoints.h"
#include "mpi.h"
#include "untrusted.h"

namespace bspg::launcher {
namespace {

// The whole number that all of `text` spells, if it is within [lowest, highest].
std::optional<long> whole_number(const std::string& text, long lowest, long highest) {
  errno = 0;
  char* end = nullptr;
  const long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE || value < lowest || value > highest)
    return std::nullopt;
  return value;
}

// The finite number above 0 that all of `text` spells, if it does.
std::optional<double> positive_number(const std::string& text) {
  errno = 0;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(value) || value <= 0)
    return std::nullopt;
  return value;
}

int parse_positive_int(const std::string& text, const std::string& option,
                       const char* what = "processes") {
  const auto value = whole_number(text, 1, 1000000);
  if (!value)
    throw UsageError(option + " needs a positive whole number of " + what + ", not '" + text + "'");
  return static_cast<int>(*value);
}

int parse_count(const std::string& text, const std::string& option, int most) {
  const auto value = whole_number(text, 0, most);
  if (!value)
    throw UsageError(option + " needs a whole number from 0 to " + std::to_string(most) +
                     ", not '" + text + "'");
  return static_cast<int>(*value);
}

double parse_seconds(const std::string& text, const std::string& option, double most) {
  const auto value = positive_number(text);
  if (!value) throw UsageError(option + " needs a positive number of seconds, not '" + text + "'");
  if (*value > most) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", most);
    throw UsageError(option + " is at most " + buf + " seconds, not '" + text + "'");
  }
  return *value;
}

// What --restarts, --resume, --migrate-load and --host-timeout need (after the other checks).
void check_checkpoint_options(const Options& opt) {
  const char* restarting = opt.resume             ? "--resume"
                           : opt.restarts > 0     ? "--restarts"
                           : opt.migrate_load > 0 ? "--migrate-load"
                                                  : nullptr;
  if (restarting && !opt.rsl_in.empty())
    throw UsageError(std::string(restarting) +
                     " cannot be combined with --rsl: a restarted job is placed anew on the " +
                     "candidates of a host file (--hostfile and -p)");
  if (restarting && opt.nprocs == 0)
    throw UsageError(std::string(restarting) +
                     " needs -p N: a restarted job starts all its processes at once " +
                     "(master mode spawns them from the master)");
  if (opt.resume && opt.checkpoint_dir.empty() && opt.job_id.empty())
    throw UsageError(
        "--resume needs the job's --job-id ID or --checkpoint-dir DIR (bsprun printed them when "
        "the job started)");
  if (opt.migrate_load > 0 && opt.hostfile.empty())
    throw UsageError(
        "--migrate-load needs a host file (--hostfile or BSPG_HOSTFILE): it moves the job between "
        "hosts");
}

}  // namespace

bool uses_checkpoints(const Options& opt) {
  return opt.restarts > 0 || opt.resume || !opt.checkpoint_dir.empty() || opt.job_id_given ||
         opt.migrate_load > 0;
}

Options parse_options(int argc, char** argv) {
  Options opt;
  using Setter = std::function<void(const std::string& name, const std::string& value)>;
  // Options that take one value.
  const Setter procs = [&](auto& n, auto& v) { opt.nprocs = parse_positive_int(v, n); };
  const std::map<std::string, Setter> with_value = {
      {"-p", procs},
      {"--procs", procs},
      // The spellings of other BSPlibs' bsprun (BSPonMPI, Oxford BSPlib) and of mpirun.
      {"-n", procs},
      {"-np", procs},
      {"-npes", procs},
      {"--max-procs", [&](auto& n, auto& v) { opt.max_procs = parse_positive_int(v, n); }},
      {"--hostfile", [&](auto&, auto& v) { opt.hostfile = v; }},
      {"--rsl", [&](auto&, auto& v) { opt.rsl_in = v; }},
      {"--rsl-out", [&](auto&, auto& v) { opt.rsl_out = v; }},
      {"--probe-timeout",
       [&](auto& n, auto& v) { opt.probe_timeout_s = parse_seconds(v, n, 600); }},
      {"--fanout", [&](auto& n, auto& v) { opt.fanout = parse_positive_int(v, n, "hosts"); }},
      {"--time-limit", [&](auto& n, auto& v) { opt.time_limit_s = parse_seconds(v, n, 1e8); }},
      {"-x",
       [&](auto& n, auto& v) {
         const std::string name = v.substr(0, v.find('='));
         if (!untrusted::is_environment_name(name))
           throw UsageError(n + " needs NAME or NAME=VALUE with a valid variable name, not '" + v +
                            "'");
         if (name == "BSPG_RUN" || name == "BSPG_JOB_ID" || name == "BSPG_PROGRAM_ID")
           throw UsageError("bsprun sets " + name +
                            " for every process itself (it names the run "
                            "whose checkpoints the process writes); it cannot be given with -x");
         if (name == "BSPG_CHECKPOINT_DIR" || name == "BSPG_RESUME")
           throw UsageError("bsprun sets " + name + " for every process itself: use " +
                            (name == "BSPG_RESUME" ? "--resume" : "--checkpoint-dir DIR") +
                            " instead of -x");
         opt.exports.push_back(v);
       }},
      {"--restarts", [&](auto& n, auto& v) { opt.restarts = parse_count(v, n, 1000); }},
      {"--host-timeout",
       [&](auto& n, auto& v) { opt.host_timeout_s = parse_seconds(v, n, 86400); }},
      {"--checkpoint-dir",
       [&](auto& n, auto& v) {
         if (const std::string problem = checkpoint_dir_problem(v); !problem.empty())
           throw UsageError(n + " '" + untrusted::printable(v) + "': " + problem);
         opt.checkpoint_dir = v;
       }},
      {"--job-id",
       [&](auto& n, auto& v) {
         if (const std::string problem = job_id_problem(v); !problem.empty())
           throw UsageError(n + " '" + untrusted::printable(v) + "': " + problem);
         opt.job_id = v;
         opt.job_id_given = true;
       }},
      {"--migrate-load",
       [&](auto& n, auto& v) {
         const auto load = positive_number(v);
         if (!load || *load > 1e6)
           throw UsageError(n + " needs a positive load average (e.g. 2.5), not '" + v + "'");
         opt.migrate_load = *load;
       }},
  };
  const std::map<std::string, bool*> flags = {
      {"--dry-run", &opt.dry_run},
      {"--resume", &opt.resume},
      {"--allow-new-args", &opt.allow_new_args},
      {"--clean-up", &opt.clean_up},
      {"--stage", &opt.stage},
      {"--tag-output", &opt.tag_output},
      {"--accept-unknown-host-keys", &opt.accept_unknown_host_keys},
      {"-v", &opt.verbose},
      {"--verbose", &opt.verbose},
      {"-h", &opt.help},
      {"--help", &opt.help},
      {"-V", &opt.version},
      {"--version", &opt.version},
  };

  int i = 1;
  for (; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg.size() < 2 || arg[0] != '-') break;  // the program (or a lone "-")

    if (auto flag = flags.find(arg); flag != flags.end()) {
      *flag->second = true;
      continue;
    }

    if (arg == "--mca") {
      if (i + 2 >= argc) throw UsageError("--mca needs two values: KEY VALUE");
      opt.mca.emplace_back(argv[i + 1], argv[i + 2]);
      i += 2;
      continue;
    }

    // "--name=value", "--name value", "-p8", "-p 8"; single-dash long names ("-npes 4") whole.
    std::string name = arg, value;
    bool have_value = false;
    if (with_value.count(arg)) {
      // the whole argument names the option; its value follows
    } else if (arg.rfind("--", 0) == 0) {
      if (auto eq = arg.find('='); eq != std::string::npos) {
        name = arg.substr(0, eq);
        value = arg.substr(eq + 1);
        have_value = true;
      }
    } else if (arg.size() > 2) {
      name = arg.substr(0, 2);
      value = arg.substr(2);
      have_value = true;
    }
    auto setter = with_value.find(name);
    if (setter == with_value.end()) {
      if (flags.count(name)) throw UsageError("option " + name + " takes no value");
      throw UsageError("unknown option '" + arg + "'");
    }
    if (!have_value) {
      if (i + 1 >= argc) throw UsageError("option " + name + " needs a value");
      value = argv[++i];
    }
    setter->second(name, value);
    opt.host_timeout_given = opt.host_timeout_given || name == "--host-timeout";
  }

  opt.given.assign(argv + 1, argv + i);
  if (opt.help || opt.version) return opt;
  if (i < argc) {
    opt.program = argv[i++];
    opt.program_args.assign(argv + i, argv + argc);
  }
  for (const auto& a : opt.program_args)
    if (a == ":")
      throw UsageError(
          "the program argument ':' cannot be passed on (mpirun reads it as a separator)");
  if (opt.hostfile.empty()) {
    if (const char* env = std::getenv("BSPG_HOSTFILE"); env && *env) opt.hostfile = env;
  }
  if (opt.nprocs != 0 && opt.max_procs != 0)
    throw UsageError(
        "--max-procs is for master mode (no -p): with -p N, N processes start at once");
  if (opt.clean_up) {
    if (!opt.job_id_given)
      throw UsageError(
          "--clean-up needs the job's --job-id ID (bsprun printed it when the job started)");
    if (!opt.program.empty())
      throw UsageError("--clean-up takes no program: it ends what job " + opt.job_id +
                       " left behind; '" + opt.program + "' is not expected");
    if (opt.nprocs != 0 || !opt.rsl_in.empty() || opt.resume || opt.restarts > 0)
      throw UsageError("--clean-up takes only --job-id, --hostfile and the ssh options");
    return opt;
  }
  if (opt.allow_new_args && !opt.resume)
    throw UsageError("--allow-new-args goes with --resume (a fresh run takes any arguments)");
  if (opt.rsl_in.empty()) {
    if (opt.program.empty()) throw UsageError("missing program: say what to run after the options");
  } else {
    if (opt.max_procs != 0)
      throw UsageError("--max-procs cannot be combined with --rsl (the RSL file gives the slots)");
    if (opt.nprocs != 0)
      throw UsageError("--rsl takes the process counts from the RSL file; leave out -p");
    if (!opt.program.empty())
      throw UsageError("--rsl takes the program and its arguments from the RSL file; '" +
                       opt.program + "' is not expected");
    if (opt.stage)
      throw UsageError("--stage cannot be combined with --rsl (the RSL names the paths to run)");
  }
  if (!opt.rsl_in.empty() && !opt.rsl_out.empty())
    throw UsageError("--rsl-out cannot be combined with --rsl (the allocation is already a file)");
  check_checkpoint_options(opt);
  if (opt.hostfile.empty() && opt.rsl_in.empty()) {
    if (opt.dry_run) throw UsageError("--dry-run needs a host file (--hostfile or BSPG_HOSTFILE)");
    if (!opt.rsl_out.empty())
      throw UsageError("--rsl-out needs a host file (--hostfile or BSPG_HOSTFILE)");
    if (opt.stage) throw UsageError("--stage needs a host file (--hostfile or BSPG_HOSTFILE)");
  }
  return opt;
}

std::string usage_text() {
  return "Usage: bsprun -p N [--hostfile FILE] [OPTIONS] PROGRAM [ARGS...]\n"
         "       bsprun [--max-procs N] [--hostfile FILE] [OPTIONS] PROGRAM [ARGS...]"
         "  (master mode)\n"
         "       bsprun --rsl FILE [--hostfile FILE] [OPTIONS]\n"
         "       bsprun --clean-up --job-id ID [--hostfile FILE]\n"
         "Try 'bsprun --help' for more information.\n";
}

std::string help_text() {
  std::string text = R"(NAME
    bsprun - start a bspg (BSPlib) program on this machine or on a grid of hosts

SYNOPSIS
    bsprun -p N [OPTIONS] PROGRAM [ARGS...]
    bsprun -p N --hostfile FILE [OPTIONS] PROGRAM [ARGS...]
    bsprun -p N [--hostfile FILE] [--restarts N] [--resume] [--job-id ID | --checkpoint-dir DIR]
           [--host-timeout S] [--migrate-load X] [OPTIONS] PROGRAM [ARGS...]
    bsprun [--max-procs N] [--hostfile FILE] [OPTIONS] PROGRAM [ARGS...]
    bsprun --rsl FILE [--hostfile FILE] [OPTIONS]
    bsprun --clean-up --job-id ID [--hostfile FILE]

DESCRIPTION
    bsprun starts N processes of PROGRAM as one BSP job, through the starter of the MPI
    bspg was built with (Open MPI's mpirun, or MPICH's mpiexec; see MPI below).
    Options are read up to the first argument that is not an option (or up to "--");
    everything after PROGRAM is passed to it unchanged.

    Local path. Without a host file the N processes run on this machine: bsprun runs
    the starter with the settings the library needs (Open MPI 4: one-sided MPI through
    osc sm,pt2pt; Open MPI: --oversubscribe, or PRRTE's --map-by :OVERSUBSCRIBE, when N
    exceeds the cores, and --allow-run-as-root when run as root; MPICH's Hydra needs none).

    Grid path. With --hostfile (or BSPG_HOSTFILE) the hosts listed are candidates, not
    execution hosts. bsprun asks the candidates over SSH, up to --fanout of them at once,
    for their cores, load and free memory (each probe bounded by --probe-timeout), prints
    a table on stderr with the count chosen for each host or the reason it was left out,
    and fills the N processes from the least loaded host on:
      1. hosts are ranked by free capacity, cores minus 1-minute load, then by free
         memory, then by host file order;
      2. each process in turn goes to the host with the most free capacity left
         (free capacity minus the processes already placed there; ties to the better
         ranked host), never more than the host's slots (default: its core count).
    An idle host takes processes until it is as busy as the next one, then they take
    turns: a lightly loaded host gets more processes than a busy one. If the slots of
    the reachable hosts add up to less than N, bsprun says what it found and starts
    nothing. Hosts of one site form one subjob; any other host is a subjob of its own.
    Processes learn their subjob from BSPG_SUBJOB (see bspg_subjob()).

    The allocation is written as an RSL multi-request: one &-clause per subjob with
    resourceManagerContact, count, executable, arguments, directory, label and
    environment (BSPG_SUBJOB). The job is then started as ONE mpirun with one app
    context per subjob, using Open MPI's ssh launcher with an ssh configuration
    generated from the host file (user, port, identity, known_hosts per host).
    Output of every process comes back to this terminal. If a process fails or calls
    bsp_abort the whole job stops and bsprun exits non-zero.

    Probing. A few threads drive all probes through non-blocking SSH sessions: a probe
    that waits costs a socket and a few kB, not a thread, and bsprun idles while it
    waits. A probe that times out is ended on the host too: bsprun asks sshd to kill its
    command (an SSH signal request), and the command kills itself when its SSH channel
    closes and, where `timeout` exists, once the probe timeout (rounded up) plus 1 s has
    passed. sshd refuses signal requests for root logins, so there a login shell that
    hangs in its start-up files, before the command runs, stays until it ends by itself.
    Answers no machine can give are refused, naming the host and the value: a load
    average that is negative, not a number, infinite or above 4194304 (a load counts
    tasks, and Linux has at most 2^22), a core count outside 1..65536, free memory
    outside 0..4 PiB, or a host name longer than 64 characters or with control
    characters. Problems of this machine (the open-file limit, memory, threads) are
    said once, on one line, and never blamed on a host: bsprun probes fewer hosts at a
    time instead.

    Master mode. Without -p (BSP-G's "nonpure SPMD" mode) bsprun starts PROGRAM once:
    the master, pid 0. Its main runs alone until it calls bsp_begin(P); then the other
    P-1 processes start, run PROGRAM with the same arguments and working directory from
    the start of main, and join the master at their bsp_begin (under bsp_init they go
    straight to the SPMD function, as the standard says). This is how programs that
    choose P themselves run, e.g. BSPedupack's "bsprun ./inprod < input", where the
    master reads P from its standard input, which only the master gets. Before bsp_begin,
    bsp_nprocs() in the master reports the processes available: on this machine its
    cores, or --max-procs N (more than the cores oversubscribes them); on the grid path
    all slots of the reachable hosts, or the first --max-procs N of them. bsp_begin(P)
    with P above that starts what is available. On the grid path the slots are ranked as
    for -p: the master starts on the least loaded host, and bsp_begin(P) places the
    others exactly where "bsprun -p P" would; bsprun prints that order. The written RSL
    names the master alone, with the slots in its environment (BSPG_MASTER_*), and
    --rsl runs it again in master mode. The others are started with MPI_Comm_spawn from
    the master's executable path, so --stage is refused unless every chosen host staged
    the program at the same path. Output, exit status, bsp_abort, misuse, Ctrl-C and
    --time-limit work as with -p. A program that ends before bsp_begin (say, after a
    usage message) ends with its own exit status, in every mode.

    Output. The starter forwards each process's output in pieces (Open MPI reads 4 KiB
    at a time), so on its own a long line of one process can be cut by a piece of
    another's. bsprun has the starter write each process's stdout and stderr to files
    of their own (MPICH: -outfile-pattern; Open MPI 4 on this machine:
    --output-filename), in a directory of bsprun's ($TMPDIR or /tmp, bsprun-output-*;
    each file is unlinked once open, so it takes no room once bsprun ends; the
    directory is removed at the end, or by the next bsprun on this host if bsprun was
    killed), and passes a process's output on only in whole
    lines: a line goes out once its newline came, and unfinished, as it is, once no
    byte of it came for 1 s (a prompt), it holds 4 MiB, or the job ended. A line
    printed by one process is then never split by another's, whatever its length or
    the number of writes it took, and its bytes (anything but newline) pass unchanged.
    stdout stays stdout and stderr stays stderr; each process's lines keep their order
    (the lines of different processes, and a process's stdout against its stderr, do
    not keep the order they were printed in). The starter's own messages pass as they
    come. Open MPI 4 on the grid path and Open MPI 5 pass the output as the starter
    forwards it: Open MPI 4's tags drop output (a 4 KiB piece of lines shorter than
    about 15 bytes outgrows its 8 KiB buffer), and its files stay on each host. In
    master mode with Open MPI 4 the master's lines are whole, but the files hold
    mpirun's own job only: the processes bsp_begin starts print as the starter
    forwards it, and --tag-output is refused.

    Stopping. Ctrl-C, SIGTERM, SIGHUP and SIGQUIT stop the whole job: the signal goes
    to mpirun (once), which stops every process. Processes of the job that are
    stopped (SIGSTOP) are continued first, so that they can act on it, and on the grid
    path bsprun also goes to every host over ssh and ends the job's processes there
    itself (found by a marker in their environment), so that a frozen mpirun or Open
    MPI daemon does not keep them alive. Should the job still run 5 s later, bsprun
    sends SIGTERM to every process of it on this machine, and SIGKILL 15 s after the
    signal (1 s after that SIGTERM when a host did not answer). A host that cannot be
    reached (down, frozen) is named in one line: its processes may still run there.
    Open MPI's own notices about the stop are not shown. Local processes that outlive
    mpirun (if mpirun crashes or is killed) are stopped by bsprun too, which says so;
    nothing of the job is left running on this machine. Once the job is down, bsprun
    ends by the same signal (SIGQUIT: exit status 131), so a shell script or loop
    that runs bsprun stops there too instead of going on.

    Checkpoints and restarts. A program that calls bspg_checkpoint() (bspg.h) saves its
    state at the end of a superstep: each process writes its shard to its host's
    checkpoint directory and a copy to a process on another host, so that losing one
    host loses nothing. bsprun gives every job an id and a checkpoint directory,
    ~/.cache/bspg/checkpoints/ID on each host (--job-id, --checkpoint-dir), and tells
    every process (BSPG_CHECKPOINT_DIR, BSPG_RESUME). With --restarts, --resume,
    --job-id, --checkpoint-dir or --migrate-load, bsprun says the id and directory at
    the start and, should the job stop unfinished, the command that continues it;
    without them it says nothing of this, unless a job on this machine stops
    unfinished after checkpointing.
    With --restarts N, when the job loses a process or a host, bsprun
      1. says what was lost and how it was noticed (mpirun's report of a process killed
         by a signal, of a host it lost contact with or could not start on; or
         bsprun's own probes, for a host silent for --host-timeout seconds);
      2. stops what is left of the job on every host it can reach;
      3. probes the candidates again, leaving out the lost hosts for the rest of the
         run, and places the processes by load as at the start;
      4. finds the newest checkpoint that is whole: some host holds its "complete"
         marker, and for every process a reachable host holds a shard or copy that
         bspg-hostinfo --check-shard finds whole (where bspg-hostinfo is missing on a
         host, its files are taken as they are and the library checks them);
      5. copies each process's shard to the host that process will run on, through
         bsprun over SFTP, unless one is there already;
      6. starts the job again from that checkpoint, saying "restart k of N", which
         checkpoint and which hosts. A job that wrote no checkpoint starts again from
         the beginning, and bsprun says so.
    Restarted: a process killed by a signal from outside (SIGKILL, SIGTERM, SIGHUP, ...:
    its owner, the OOM killer), a host gone (switched off, its sshd or Open MPI daemon
    gone, connection lost), a host that stops answering (frozen, cut off), a host that
    could not be reached while the job started. Not restarted, since a restart would
    only fail again: the program's own failures (a non-zero exit status, bsp_abort,
    misuse of BSPlib, a crash by SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGSYS or
    SIGTRAP), a program missing on a host, and a stop by Ctrl-C, a signal to bsprun
    or --time-limit (which counts for all runs together). When the restarts run out,
    bsprun's last line says whether a whole checkpoint remains and the command that
    continues the job (--resume; exit status 75), or that none does (exit status 125);
    no whole checkpoint to restart from ends bsprun the same way. --migrate-load X
    moves the job off a chosen host that gets busy, at its next checkpoint, and
    --resume continues a job that bsprun left (stopped, or restarts exhausted). Once
    a job ends well, bsprun removes its default checkpoint directory on its hosts; a
    --checkpoint-dir is left as it is. Restarts need -p N and a host file, or this
    machine alone (where only processes can be lost); not master mode or --rsl.
    A checkpoint belongs to one run of one job. Every run has an id (BSPG_RUN, kept
    across bsprun's own restarts), written into each shard and "complete" marker: a
    restart only ever continues its own run's checkpoints, a fresh run in a directory
    that holds an earlier run's checkpoints never uses them (its first checkpoint
    replaces them), and a "stop" file stops only the run it names. Only --resume
    continues an earlier run, and only with the program arguments it was started with
    (--allow-new-args to give others). While a job runs, its job id and checkpoint
    directory are locked: a second bsprun on either is refused (exit status 125),
    naming the first's pid, host and job; the lock of a bsprun that died is taken
    over. The library writes, lists and removes checkpoint files without following a
    symbolic link, refuses a checkpoint directory that is not the user's own (another
    owner, writable by others, a symlink), and checks every write and fsync: should a
    host fail to write a checkpoint (a full or read-only disk, a file in the
    directory's place), every process stops within the superstep with one line naming
    the host, the file and the error, the checkpoint before is kept, and bsprun
    restarts the job without that host (--restarts, other hosts) or ends with the
    --resume command (exit status 75).
    Without --restarts, a host that stops answering for --host-timeout seconds still
    ends the job (exit status 125) instead of hanging it, on every grid path.

    Start-up failures. Before starting, bsprun checks on the chosen hosts that PROGRAM
    is there and executable (--stage copies it where it is not). Should the start
    fail anyway (the program, or the working directory, missing on a host; a host
    that cannot be reached; a host lost while the job runs), Open MPI's message and
    its exit status are replaced by one line naming the host and the cause, and the
    status 125, 126 or 127 (see EXIT STATUS).

OPTIONS
    -p N, -n N, -np N, -npes N, --procs N
        Number of processes to start at once (a positive whole number). -n and -npes are
        the spellings of other BSPlibs' bsprun (-npes is one option: "-npes 4"), -np is
        mpirun's. Without it, and without --rsl, bsprun runs in master mode.
    --max-procs N
        Master mode: the most processes bsp_begin may start, the master included
        (default: this machine's cores, or on the grid path every slot of the reachable
        hosts). Refused with -p (all N start at once) and with --rsl (the RSL file says).
    --hostfile FILE
        Candidate hosts (YAML, or an Open MPI style "host slots=N" list). Turns on the
        grid path. Default: $BSPG_HOSTFILE.
    --probe-timeout SECONDS
        Longest wait for each host's answer while probing (default 5, at most 600),
        counted from the start of that host's probe. With no more candidates than the
        fan-out, all are probed at once and probing takes about the slowest answer.
    --fanout N
        Probe at most N hosts at once (default 4096). pdsh uses 32 and clush 64, but here
        a waiting probe costs no thread, so the default covers thousands of candidates in
        about one probe timeout; more wait for a free slot (up to ceil(candidates / N)
        timeouts in all). bsprun raises its open-file limit (ulimit -n) up to the hard
        limit when the fan-out needs it; if even that is too low it probes fewer hosts at
        a time and says so once.
    --accept-unknown-host-keys
        Accept hosts whose key is not in known_hosts (a changed key is always refused).
    --rsl-out FILE
        Write the allocation there (without it, none is written).
    --dry-run
        Probe and allocate, print the RSL on stdout, start nothing, exit 0.
    --rsl FILE
        Run exactly the allocation in FILE (as written by bsprun or by hand) without
        probing. Host connection details come from --hostfile if given, otherwise from
        your ssh configuration. The file is checked first (see UNTRUSTED INPUT): each
        executable must be an absolute path or start with ./ or ../ (relative to the
        directory), and with --hostfile every host must be in it and get at most its
        slots.
    --stage
        Copy PROGRAM to each chosen host that lacks it and run the copy there.
    --time-limit SECONDS
        Stop the whole job (exit 124) when it runs longer than this.
    --restarts N
        Restart the job from its newest whole checkpoint after a lost process or host,
        up to N times in all (0 to 1000; default 0). See "Checkpoints and restarts".
    --host-timeout SECONDS
        A chosen host that has not answered bsprun's probes (every SECONDS/3, at most
        10 s apart) for this long, or a process of the job stopped (SIGSTOP, or by a
        debugger) for this long while its host answers, is lost (default 30, at most
        86400): the job is stopped, and restarted with --restarts. On this machine
        alone only stopped processes can be lost (looked for every SECONDS/5, 0.2 to
        2 s), and only with --restarts or --host-timeout given: a process held in a
        debugger is not taken for lost otherwise.
    --checkpoint-dir DIR
        Where the job's checkpoints live on each host: an absolute path, or ~/... (in
        quotes) for each host's own home. Default: ~/.cache/bspg/checkpoints/ID. Refused:
        relative paths, "." or ".." components, control characters, more than 1024 bytes.
    --job-id ID
        Name the job (1 to 64 letters, digits, '.', '_', '-'; not starting with '.' or
        '-'), and so its default checkpoint directory. Default: a new id, date, time and
        6 hex digits, printed when checkpoint options are given.
    --resume
        Continue the job named by --job-id or --checkpoint-dir from its newest whole
        checkpoint (on the hosts the probes choose now), for example after bsprun was
        stopped or its restarts ran out. Needs the same program, arguments and -p N; a
        checkpoint of another process count or other program arguments is refused (exit
        status 2), and nothing to resume ends with exit status 125. The command bsprun
        prints repeats every option the job was started with.
    --allow-new-args
        With --resume: continue the job with other program arguments than it was
        started with (the program's restored state decides what they mean).
    --clean-up
        With --job-id ID (and --hostfile for the hosts): end every process of job ID
        that is left on this machine or the hosts, and their MPI daemons, after bsprun
        itself was killed (SIGKILL) or its machine rebooted. Stopped processes are
        continued first, then SIGTERM, SIGKILL 2 s later, then their MPI daemons (and
        mpirun here). Says per host what it ended; exit status 0 when nothing is left,
        125 naming the hosts it could not reach.
    --migrate-load X
        When a chosen host's load, besides the job's own processes there, stays above X
        for 3 probes in a row (its owner is back), and the other candidates have room
        for the job, write a "stop" file into its checkpoint directory: the job ends
        right after its next checkpoint and bsprun continues it without that host (not
        counted as a restart). Needs a host file and -p N.
    -x NAME[=VALUE]
        Export this environment variable to every process (repeatable). Not
        BSPG_CHECKPOINT_DIR, BSPG_RESUME, BSPG_JOB_ID, BSPG_RUN or BSPG_PROGRAM_ID:
        bsprun sets those itself.
    --mca KEY VALUE
        Pass an MCA parameter to Open MPI's mpirun (repeatable). Refused when bspg
        was built with MPICH, whose settings are MPIR_CVAR_* environment variables.
    --tag-output
        Start every line a process prints, on stdout and on stderr, with "[PID] ", its
        BSP pid (bsp_pid(); in master mode the master is 0 and the processes bsp_begin
        starts 1, 2, ...), as Open MPI's mpirun --tag-output does with ranks. Lines of
        the starter itself are not prefixed. Only where bsprun gets each process's
        output apart (see "Output"); refused elsewhere (exit status 2).
    -v, --verbose
        Print the starter's command line (and the ssh configuration used) on stderr.
    -h, --help
        Print this manual.
    -V, --version
        Print the version.

MPI
    This bsprun was built with @MPI@, whose starter is @STARTER@.
    A program built with another MPI is refused by the library in one line.

ENVIRONMENT
    BSPG_HOSTFILE   Host file to use when --hostfile is not given.
    BSPG_MPIRUN     The starter to use (default: that of the MPI bspg was built with,
                    by its full name, whatever mpirun comes first in PATH).
    OMPI_MCA_*      Passed on to mpirun and, on the grid path, exported to every
                    process (Open MPI 5: PRTE_MCA_* and PMIX_MCA_* too). OMPI_MCA_osc
                    overrides bspg's choice of one-sided components.
    TMPDIR          Where the ssh configuration is written (removed when bsprun ends).
    Set for every process: BSPG_SUBJOB (subjob index), BSPG_NSUBJOBS (number of
    subjobs), BSPG_SUBJOB_SIZES (comma list of process counts per subjob),
    BSPG_CHECKPOINT_DIR (the checkpoint directory; ~/ is each host's home) and
    BSPG_RESUME (0, or the checkpoint a restarted or resumed job continues from),
    BSPG_JOB_ID (the job id), BSPG_RUN (the run's id, 16 hex digits) and
    BSPG_PROGRAM_ID (a hash of the program's arguments, checked by --resume).
    Set for the master in master mode (and validated by the library): BSPG_MASTER_PROCS
    (processes available), BSPG_MASTER_SLOTS (grid path: the slots in order, as
    HOST/SUBJOB), BSPG_MASTER_ENV (the variables the spawned processes get as well: the
    -x names and OMPI_MCA_*). bsprun clears them from its own environment first, so a
    job started from within a master's job does not inherit them.

FILES
    hosts.yaml      Host file, e.g.
                        defaults: { user: alice, identity: ~/.ssh/id_ed25519 }
                        hosts:
                          - { name: node1, address: 10.1.2.3, slots: 4, site: lab-a }
                          - { name: node2 }
    ~/.cache/bspg/checkpoints/ID
                    A job's checkpoints on each host (c<N>/shard-<pid>, copy-<pid>,
                    complete-<pid>; a file "stop" there naming the run stops it after
                    its next checkpoint; "lock" while a job uses a --checkpoint-dir on
                    this machine). Removed once the job ends well; remove it yourself
                    when you no longer want to resume a job that did not.
    ~/.cache/bspg/locks (or $XDG_RUNTIME_DIR/bspg-locks)
                    The locks of running jobs' ids and (grid path) directories.

UNTRUSTED INPUT
    Host files and RSL files may come from someone else, and their values reach the
    ssh configuration bsprun writes, mpirun's command line, RSL files and this
    terminal. So bsprun refuses, before anything starts and naming the file and line
    (in an RSL file: line and column):
      - a file that is not a regular file (a FIFO, device, socket or directory) or is
        larger than 16 MiB: it is not read at all;
      - a control character (newline, carriage return, tab, NUL, escape, ...) in any
        value: in an address, a newline would start a new ssh setting;
      - host and site names of anything but letters, digits, '-', '_' and dots (a name
        of numbers must be an IPv4 address), addresses other than host names, IPv4 or
        IPv6 addresses, user names of anything but letters, digits, '.', '_' and '-',
        relative or unexpandable key paths, and any value starting with '-', which ssh
        or mpirun would read as an option;
      - in a plain host file "host:N" (write "host slots=N") and a setting given twice;
        in a YAML host file a second document, or nesting deeper than a host file has;
      - in an RSL file: counts that add up to more than 1000000 processes, or to more
        than the host file's slots for a host; an executable that is neither an
        absolute path nor starts with ./ or ../; a directory that is not absolute; an
        argument ":" (mpirun's separator); an environment name that is not a variable
        name; a host the host file does not list.
    What hosts answer (errors, output of the probe) is shown with control characters
    escaped (\n, \x1b, ...), and the ssh configuration quotes every value the way
    OpenSSH reads it.

EXIT STATUS
    The exit status of the program (as reported by mpirun: non-zero when any process
    fails, aborts or is killed), or:
    2       command line error (and --resume of checkpoints of another -p)
    75      the job stopped before its end but can be continued with --resume: its
            restarts ran out with a whole checkpoint left, or a "stop" file in its
            checkpoint directory stopped it after a checkpoint
    124     --time-limit expired; the job was stopped
    125     bsprun could not start the job (host file, probing, not enough capacity,
            RSL file, mpirun not found, a host that could not be reached or lacks the
            working directory), or lost a host while the job ran and could not
            restart it (no restarts, or no whole checkpoint)
    126     PROGRAM is not executable, here or on a chosen host
    127     PROGRAM not found, here or on a chosen host
    128+S   the job was stopped by signal S, and bsprun ended by S itself (a shell
            shows 130 after Ctrl-C, 143 after SIGTERM)

EXAMPLES
    bsprun -p 4 ./inprod 1000
        Four processes on this machine.
    bsprun -p 8 --hostfile hosts.yaml ./inprod 1000
        Eight processes on the least loaded of the hosts in hosts.yaml.
    bsprun -p 8 --hostfile hosts.yaml --dry-run ./inprod > job.rsl
        Show the allocation without starting anything.
    bsprun --rsl job.rsl --hostfile hosts.yaml
        Run that allocation again.
    bsprun ./inprod < input
        Master mode: inprod reads P from its input and calls bsp_begin(P); the other
        P-1 processes start then, on this machine.
    bsprun -npes 4 ./inprod
        The same as -p 4 (the Oxford BSPlib spelling).
    bsprun -p 8 --hostfile hosts.yaml --restarts 3 --job-id sim1 ./sim
        Restart sim (which calls bspg_checkpoint) up to three times on other hosts
        when it loses one; its checkpoints are in ~/.cache/bspg/checkpoints/sim1.
    bsprun -p 8 --hostfile hosts.yaml --restarts 3 --resume --job-id sim1 ./sim
        Continue sim1 from its last checkpoint after bsprun was stopped.
    bsprun --hostfile hosts.yaml ./inprod 1000
        Master mode on the grid: the master starts on the least loaded host, and
        bsp_begin(P) places the other processes on the least loaded slots.
)";
  for (const auto& [mark, value] :
       {std::pair<std::string, std::string>{"@MPI@", configured_mpi().name()},
        {"@STARTER@", configured_mpi().starter()}})
    text.replace(text.find(mark), mark.size(), value);
  return text;
}

}  // namespace bspg::launcher
