// bsprun.cpp - the launcher's main: parse, then the local path or the grid path.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "checkpoints.h"
#include "cleanup.h"
#include "daemon_relay.h"
#include "grid.h"
#include "help.h"
#include "in_place.h"
#include "local_place.h"
#include "localhost.h"
#include "mpistart.h"
#include "options.h"
#include "profile_run.h"
#include "restart.h"
#include "runner.h"
#include "say.h"
#include "slurm.h"
#include "srun_relay.h"

#ifndef BSPG_VERSION
#define BSPG_VERSION "unknown"
#endif

using namespace bspg::launcher;

namespace {

int fail(int status, const std::string& message) {
  std::cerr << "bsprun: " << message << "\n";
  return status;
}

// More processes than this machine's cores (hwloc's, not hardware threads): said once.
void say_if_beyond_the_cores(const Options& opt) {
  const int cores = local_core_count();
  const int processes = opt.nprocs > 0 ? opt.nprocs : opt.max_procs;
  if (opt.quiet || processes <= cores) return;
  say_beyond_the_cores(std::string(opt.nprocs > 0 ? "" : "up to ") + std::to_string(processes) +
                       " processes on this machine's " + std::to_string(cores) + " core" +
                       (cores == 1 ? "" : "s"));
}

int run_local(const Options& opt, const MpiSettings& settings) {
  ResolvedProgram prog = resolve_program(opt.program);
  if (prog.problem == ResolvedProgram::kNotFound) return fail(kExitNotFound, prog.message);
  if (prog.problem != ResolvedProgram::kNone) return fail(kExitNotExecutable, prog.message);
  say_if_beyond_the_cores(opt);
  if (opt.nprocs == 0) {
    // Master mode: the master alone; its bsp_begin spawns the others here (oversubscribing
    // beyond the cores only when --max-procs asks for more).
    int available = opt.max_procs > 0 ? opt.max_procs : local_core_count();
    MpiSettings master = settings;
    for (const auto& [name, value] : master_environment(settings, available, {}))
      master.exports.push_back(name + "=" + value);
    settings.mpi->master_on_this_machine(master);
    const auto argv =
        local_mpirun_argv(master, 1, available > local_core_count(), prog.path, opt.program_args);
    return exit_status_of(run_mpirun(argv, opt.verbose, opt.time_limit_s), opt.time_limit_s);
  }
  return run_local_restartable(opt, settings, prog.path);
}

int launch(const Options& opt, const MpiSettings& settings);

// Output directories (separate_output) of bsprun processes of this host that are gone (killed by
// SIGKILL: their files were unlinked, the directories stayed).
void remove_stale_output_directories(const std::string& base, const std::string& host) {
  const std::string prefix = "bsprun-output-" + host + "-";
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(base, error)) {
    const std::string name = entry.path().filename().string();
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    const long pid = std::strtol(name.c_str() + prefix.size(), nullptr, 10);
    if (pid <= 0 || kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
    std::error_code ignored;
    std::filesystem::remove_all(entry.path(), ignored);
  }
}

// How the starter is to keep each process's output apart on this run (mpi.h), with a directory
// of bsprun's for the output files. Throws UsageError for --tag-output where the output cannot
// be kept apart.
ProcessOutput separate_output(const Options& opt, const Mpi& mpi) {
  const bool grid = !opt.hostfile.empty() || !opt.rsl_in.empty() || uses_slurm(opt);
  ProcessOutput output;
  output.how = mpi.output_separation(grid);
  if (output.how == OutputSeparation::kNone && opt.tag_output)
    throw UsageError("--tag-output is not available with " + mpi.name() +
                     (grid ? " on the grid path" : "") +
                     " (its starter does not keep each process's output apart)");
  const bool master_mode = opt.nprocs == 0 && opt.rsl_in.empty();
  if (master_mode && opt.tag_output && !mpi.separates_spawned_output())
    throw UsageError("--tag-output is not available in master mode with " + mpi.name() +
                     " (the output of the processes bsp_begin starts is not kept apart)");
  if (opt.dry_run) return output;
  if (output.how == OutputSeparation::kFiles) {
    // Open MPI reads a ':' in the path as the start of its directives, MPICH a '%' as one of
    // its pattern's; a relative TMPDIR would move with the processes' working directory.
    const char* tmp = std::getenv("TMPDIR");
    std::string base = tmp && *tmp == '/' && !std::strpbrk(tmp, ":%") ? tmp : "/tmp";
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    remove_stale_output_directories(base, host);
    std::string dir = base + "/bsprun-output-" + host + "-" + std::to_string(getpid()) + "-XXXXXX";
    if (!mkdtemp(dir.data()))
      throw std::runtime_error("cannot make a directory for the job's output in " + base + ": " +
                               std::strerror(errno));
    output.directory = dir;
  }
  return output;
}

// A program linked with bspg says when each process has started: until all have, the starter's
// own text waits, and text followed by no start within --host-timeout ends the run (runner.h).
// Not for --show and --dry-run (they start nothing), nor replays of an RSL file (whose process
// count is the file's).
void watch_the_start(const Options& opt, JobOutput& output, std::vector<std::string>& exports) {
  if (opt.show || opt.dry_run || !opt.rsl_in.empty()) return;
  const ResolvedProgram program = resolve_program(opt.program);
  if (program.problem != ResolvedProgram::kNone || !links_bspg(program.path)) return;
  output.processes_to_start = opt.nprocs > 0 ? opt.nprocs : 1;  // master mode: the master
  // Not below 10 s: a short --host-timeout is for frozen hosts, and a start over ssh can take
  // longer while the starter has said something harmless.
  output.start_bound_s = std::max(opt.host_timeout_s, 10.0);
  exports.push_back("BSPG_SAY_STARTED=1");
}

}  // namespace

int main(int argc, char** argv) {
  // Open MPI 5's daemons are started through bsprun where a grid job recovers in place.
  if (argc > 1 && std::strcmp(argv[1], kDaemonRelayOption) == 0)
    return run_daemon_relay(argc, argv);
  // ... and inside Slurm, through bsprun as their srun.
  if (argc > 1 && std::strcmp(argv[1], kSrunRelayOption) == 0) return run_srun_relay(argc, argv);
  Options opt;
  try {
    opt = parse_options(argc, argv);
  } catch (const UsageError& e) {
    std::cerr << "bsprun: " << e.what() << "\n" << usage_text();
    return kExitUsage;
  }
  if (opt.help) {
    std::cout << (opt.help_topic.empty() ? short_help_text() : *help_topic_text(opt.help_topic));
    return 0;
  }
  if (opt.version) {
    const Mpi& mpi = configured_mpi();
    std::cout << version_text(mpi.name(), find_mpirun());
    return 0;
  }

  if (opt.clean_up) return clean_up_job(opt);
  // A stop signal from now on stops the job and lets bsprun clean up, whenever it comes.
  hold_stop_signals();

  // Master mode is what this run says it is, whatever a calling master process left behind.
  for (const char* stale :
       {"BSPG_MASTER_PROCS", "BSPG_MASTER_SLOTS", "BSPG_MASTER_ENV", "BSPG_SPAWNED_BY_MASTER"})
    unsetenv(stale);

  // Every job has an id and a checkpoint directory, which every process learns (checkpoints.h);
  // the restart loop adds BSPG_RESUME to each of its runs.
  if (opt.job_id.empty()) opt.job_id = new_job_id();

  MpiSettings settings;
  settings.mpirun = find_mpirun();
  settings.run_as_root = geteuid() == 0;
  settings.environment = current_environment();
  settings.mca = opt.mca;
  settings.exports = opt.exports;
  settings.starter_args = opt.starter_args;
  // Master mode and replays run once, from the start. Their processes learn only the directory:
  // the library makes the run's id and locks the directory itself, as under a plain mpirun.
  if (opt.nprocs == 0 || !opt.rsl_in.empty()) {
    settings.exports.push_back("BSPG_CHECKPOINT_DIR=" + checkpoint_directory(opt));
    settings.exports.push_back("BSPG_RESUME=0");
  }
  settings.verbose = opt.verbose;
  // Recovery in place (--spares) where the MPI can; otherwise the restarts, said with -v.
  const InPlaceChoice in_place = choose_in_place(opt, *settings.mpi);
  if (!in_place.refused.empty()) return fail(kExitUsage, in_place.refused);
  if (!in_place.not_used.empty() && opt.verbose) say(in_place.not_used);
  settings.spares = in_place.spares;

  int status = 0;
  if (opt.show) {
    show_commands_only();
    show_profile(opt, settings.exports);
  } else if (!opt.dry_run) {
    if (const std::string why = prepare_profile(opt, settings.exports); !why.empty())
      return fail(kExitLaunchFailed, why);
  }
  try {
    settings.output = separate_output(opt, *settings.mpi);
    JobOutput output{settings.output, opt.tag_output};
    watch_the_start(opt, output, settings.exports);
    set_job_output(output);
    status = launch(opt, settings);
  } catch (const UsageError& e) {
    status = fail(kExitUsage, e.what());
  } catch (const std::exception& e) {
    status = fail(kExitLaunchFailed, e.what());
  }
  // The profile is made whatever became of the job: a failed run's supersteps are what a user
  // most wants to see.
  finish_profile();
  if (!settings.output.directory.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(settings.output.directory, ignored);
  }
  // Stopped by a signal: end by it, now that the job is stopped and bsprun's files are gone.
  if (const int sig = signal_to_end_with(); sig != 0) exit_as_killed_by(sig);
  return status;
}

namespace {

int launch(const Options& opt, const MpiSettings& settings) {
  const bool grid = !opt.hostfile.empty() || !opt.rsl_in.empty() || uses_slurm(opt);
  // A dry run starts nothing, so it does not need mpirun.
  if (settings.mpirun.empty() && !opt.dry_run) {
    if (const char* chosen = std::getenv("BSPG_MPIRUN"); chosen && *chosen)
      return fail(kExitLaunchFailed,
                  std::string("BSPG_MPIRUN=") + chosen + ": starter not found, or not executable");
    return fail(kExitLaunchFailed,
                settings.mpi->name() + "'s starter " + settings.mpi->starter() +
                    " not found (bspg was built with it: install it again, or set BSPG_MPIRUN)");
  }
  if (uses_slurm(opt)) return run_slurm(opt, settings);
  if (const std::string why = settings.mpi->grid_master_unavailable("on the grid path");
      grid && opt.nprocs == 0 && opt.rsl_in.empty() && !why.empty() && !opt.dry_run)
    return fail(kExitLaunchFailed, why);
  if (!opt.hostfile.empty() && !slurm_job_id().empty())
    say("inside Slurm job " + slurm_job_id() + ", but --hostfile was given: the hosts of " +
        opt.hostfile + " are probed and started over ssh");
  if (!grid) return run_local(opt, settings);

  return run_grid(opt, settings);
}

}  // namespace
