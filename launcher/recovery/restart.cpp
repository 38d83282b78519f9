// restart.cpp - the restart loop, and where it runs: this machine or hosts (see restart.h).
#include "restart.h"

#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <future>
#include <iostream>
#include <memory>
#include <optional>
#include <set>

#include "exit_notes.h"
#include "frozen.h"
#include "grid.h"
#include "job_lock.h"
#include "localhost.h"
#include "monitor.h"
#include "profile_run.h"
#include "remote_stop.h"
#include "say.h"
#include "slurm.h"
#include "untrusted.h"

namespace bspg::launcher {
namespace {

using Clock = std::chrono::steady_clock;

// The survey reads every shard it lists (a few hundred MB/s at least): it gets this long beyond
// the probe timeout.
constexpr double kSurveySeconds = 30;

std::string plural(std::size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// bspg-hostinfo next to this bsprun (as installed, and in the build tree); hosts that share the
// file system find it there, others on their PATH.
std::string sibling_hostinfo() {
  char path[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return "bspg-hostinfo";
  path[n] = '\0';
  std::string self = path;
  return self.substr(0, self.rfind('/') + 1) + "bspg-hostinfo";
}

}  // namespace

// How to continue the job by hand: every option the run was started with (but --resume's own),
// the job's id when bsprun made it up, and the program with its arguments.
std::string resume_command(const Options& opt) {
  std::vector<std::string> argv{"bsprun", "--resume"};
  if (opt.checkpoint_dir.empty() && !opt.job_id_given)
    argv.insert(argv.end(), {"--job-id", opt.job_id});
  bool hostfile_given = false, ended = false;
  for (const std::string& arg : opt.given) {
    if (arg == "--resume" || arg == "--allow-new-args") continue;
    hostfile_given = hostfile_given || arg == "--hostfile" || arg.rfind("--hostfile=", 0) == 0;
    ended = ended || arg == "--";
    if (arg != "--") argv.push_back(arg);
  }
  if (!hostfile_given && !opt.hostfile.empty())  // from BSPG_HOSTFILE
    argv.insert(argv.end(), {"--hostfile", opt.hostfile});
  if (ended || opt.program.rfind('-', 0) == 0) argv.push_back("--");
  argv.push_back(opt.program);
  argv.insert(argv.end(), opt.program_args.begin(), opt.program_args.end());
  return shell_quote_command(argv);
}

// "" or why the job cannot start: another bsprun (or bspg job) holds its job id or checkpoint
// directory. A lock that cannot be made at all (no home, a read-only file system) does not stop
// a job: it may never checkpoint, and the library says what stops its checkpoints.
std::string take_job_locks(const Options& opt, JobLocks& locks) {
  const std::string holder = lock_holder_text(opt.job_id);
  bool busy = false;
  std::string why =
      locks.take(lock_directory() + "/job-" + opt.job_id + ".lock", holder, true, busy);
  if (busy) return "job " + opt.job_id + " cannot start: its job id is " + why;
  if (!why.empty() && opt.verbose) say("job " + opt.job_id + " is not locked: " + why);
  if (opt.checkpoint_dir.empty()) return "";  // the job id's own directory: locked with it
  const bool here = opt.hostfile.empty() && opt.rsl_in.empty();
  const std::string path = here
                               ? local_path(opt.checkpoint_dir) + "/lock"
                               : lock_directory() + "/dir-" + text_id(opt.checkpoint_dir) + ".lock";
  why = locks.take(path, holder, !here, busy);
  if (busy)
    return "job " + opt.job_id + " cannot start: checkpoint directory " + opt.checkpoint_dir +
           (here ? "" : " (on the hosts)") + " is " + why;
  if (!why.empty() && opt.verbose)
    say("checkpoint directory " + opt.checkpoint_dir + " is not locked: " + why);
  return "";
}

namespace {

// After a job that did not finish: how to continue it. A user who asked for checkpoints is told
// the command. Otherwise the job's id was made up here, and is said only when this machine's
// directory shows that the program checkpointed: most programs never do, and asking hosts would
// hold up a stop the user is waiting for.
void say_how_to_continue(const Options& opt, const std::string& dir) {
  if (uses_checkpoints(opt)) {
    say("to continue the job from its last checkpoint: " + resume_command(opt));
    return;
  }
  if (!opt.hostfile.empty()) return;
  // The library makes the directory when it first opens it; only a complete marker there says
  // that a checkpoint was written.
  glob_t found{};
  const std::string pattern = local_path(dir) + "/c[0-9]*/complete-[0-9]*";
  const bool written = glob(pattern.c_str(), GLOB_NOSORT, nullptr, &found) == 0;
  globfree(&found);
  if (!written) return;
  say("the job's checkpoints are in " + dir + "; to continue it: " + resume_command(opt));
}

// The newest whole checkpoint of run `run` ("": of any run) the place's hosts hold now (0: none).
CheckpointChoice whole_checkpoint(const Options& opt, JobPlace& place, const std::string& run) {
  return choose_checkpoint(place.survey(), opt.nprocs, run);
}

// The lines of a host's listing that were skipped, each named once.
void say_skipped(const Holdings& h, const std::string& dir) {
  for (const std::string& line : h.skipped)
    say(h.host + ": skipped in the listing of " + dir + ": " + line);
}

// Where the time between a loss and the restarted job went (bsprun -v).
struct RestartTimes {
  double stopping_s = 0;
  Clock::time_point planning, surveying, bringing, starting;
  std::string text() const {
    const auto s = [](Clock::time_point a, Clock::time_point b) {
      return std::chrono::duration<double>(b - a).count();
    };
    char line[256];
    std::snprintf(
        line, sizeof line,
        "restart timing: stopping the job %.2f s, probing %.2f s, finding the checkpoint %.2f s, "
        "copying shards %.2f s",
        stopping_s, s(planning, surveying), s(surveying, bringing), s(bringing, starting));
    return line;
  }
};

}  // namespace

bool is_crash_signal(int signal) {
  return signal == SIGSEGV || signal == SIGBUS || signal == SIGILL || signal == SIGFPE ||
         signal == SIGABRT || signal == SIGSYS || signal == SIGTRAP;
}

RunEnding classify(const RunResult& r, const std::string& watched_host,
                   const std::string& moving_off) {
  RunEnding e;
  if (r.forwarded_signal) {
    e.kind = Ending::kStoppedByUser;
  } else if (r.timed_out) {
    e.kind = Ending::kTimeLimit;
  } else if (!r.lost.empty()) {
    e.kind = Ending::kLost;
    e.what = r.lost;
    e.host = watched_host;
  } else if (r.checkpoint_not_written > 0) {
    e.kind = Ending::kCheckpointNotWritten;
    e.host = r.checkpoint_not_written_on;
  } else if (r.started && r.exit_status == 0) {
    e.kind = Ending::kFinished;
  } else if (r.exit_status == kExitResumable &&
             (r.stopped_after_checkpoint > 0 || !moving_off.empty())) {
    e.kind = moving_off.empty() ? Ending::kStoppedAfterCheckpoint : Ending::kMoved;
  } else if (r.start_failure.host_lost) {
    e.kind = Ending::kLost;
    e.host = r.start_failure.host;
    e.what =
        r.start_failure.message.rfind("lost contact", 0) == 0
            ? e.host +
                  ": mpirun lost contact with it while the job ran (the host or its network failed)"
        : e.host.empty() ? "a host: " + r.start_failure.message
                         : r.start_failure.message;
  } else if (r.death.rank >= 0 && !r.death.described.empty()) {
    e.kind = Ending::kLost;
    e.what = r.death.described;
  } else if (r.death.rank >= 0 && !is_crash_signal(r.death.signal)) {
    e.kind = Ending::kLost;
    e.what = "process " + std::to_string(r.death.rank) + " on " + r.death.host +
             ": killed by signal " + std::to_string(r.death.signal) +
             (r.death.signal_name.empty() ? "" : " (" + r.death.signal_name + ")") +
             ", said mpirun";
  } else if (r.mpirun_signal != 0 && !is_crash_signal(r.mpirun_signal)) {
    e.kind = Ending::kLost;
    e.what = "mpirun: killed by signal " + std::to_string(r.mpirun_signal);
  } else {
    e.kind = Ending::kProgramFailed;
  }
  return e;
}

MpiSettings run_settings(const MpiSettings& settings, const std::string& dir, std::uint64_t resume,
                         const std::string& run_id, const Options& opt) {
  MpiSettings run = settings;
  run.exports.push_back("BSPG_CHECKPOINT_DIR=" + dir);
  run.exports.push_back("BSPG_RESUME=" + std::to_string(resume));
  run.exports.push_back("BSPG_JOB_ID=" + opt.job_id);
  run.exports.push_back("BSPG_RUN=" + run_id);
  run.exports.push_back("BSPG_PROGRAM_ID=" + program_id(opt.program, opt.program_args));
  // bsprun's default directory is the job's alone: the processes remove it at bsp_end, so that
  // bsprun need not log in to every host after a job that ended well (clean_up).
  if (opt.checkpoint_dir.empty()) run.exports.push_back("BSPG_CHECKPOINT_CLEANUP=end");
  // (Also under --show, which profiles nothing but shows the variables.)
  if (const std::string attempt = next_profile_attempt(); !attempt.empty())
    run.exports.push_back(attempt);
  return run;
}

std::string checkpoint_directory(const Options& opt) {
  if (!opt.checkpoint_dir.empty()) return opt.checkpoint_dir;
  return opt.slurm_checkpoint_dir.empty() ? default_checkpoint_dir(opt.job_id)
                                          : opt.slurm_checkpoint_dir;
}

int run_restartable(const Options& opt, JobPlace& place) {
  const std::string dir = checkpoint_directory(opt);
  JobLocks locks;
  if (const std::string why = take_job_locks(opt, locks); !why.empty()) {
    say(why + "; wait for that job to end (or stop it), or give this one another " +
        (opt.checkpoint_dir.empty() ? "--job-id" : "--checkpoint-dir"));
    return kExitLaunchFailed;
  }
  if (uses_checkpoints(opt))
    say("job " + opt.job_id + ": checkpoints in " + dir +
        (opt.hostfile.empty() ? "" : " on each host") +
        (opt.restarts > 0
             ? "; up to " + plural(static_cast<std::size_t>(opt.restarts), "restart", "restarts") +
                   " after a lost process or host"
             : ""));
  const auto began = Clock::now();
  std::map<std::string, std::string> left_out;  // lost hosts, for the rest of this run
  std::string moved_off;                        // left out of the next placement only
  bool resuming = opt.resume, first = true;
  int restarts_used = 0;
  std::string run_id = new_run_id();  // a resume adopts the run id of its checkpoint
  std::string lost_what;              // the loss that this run restarts after
  RestartTimes timings;
  for (;;) {
    timings.planning = Clock::now();
    std::map<std::string, std::string> excluded = left_out;
    if (!moved_off.empty())
      excluded.emplace(moved_off, "left out: the job moved off it (--migrate-load)");
    if (const int status = place.plan(excluded, first); status != 0) {
      if (first) return status;
      // No room left for the job: a whole checkpoint is still worth a --resume later.
      const CheckpointChoice choice = whole_checkpoint(opt, place, run_id);
      if (choice.checkpoint > 0) {
        say("could not restart the job; checkpoint " + std::to_string(choice.checkpoint) +
            " is whole: continue it later with: " + resume_command(opt));
        return kExitResumable;
      }
      say("could not restart the job, and no whole checkpoint remains" +
          (choice.why_none.empty() ? "" : ": " + choice.why_none));
      return status;
    }

    // Where to start from.
    std::uint64_t from = 0;
    std::string copied;
    timings.surveying = timings.bringing = Clock::now();
    if (resuming) {
      // --resume continues the newest run that left a whole checkpoint; a restart, only its own.
      const bool any_run = first && opt.resume;
      const CheckpointChoice choice = whole_checkpoint(opt, place, any_run ? "" : run_id);
      timings.bringing = Clock::now();
      if (choice.checkpoint == 0) {
        if (!choice.other_nprocs.empty() && !choice.any_marked) {
          say("the checkpoints in " + dir + " are of another job size (" + choice.other_nprocs +
              "); this run has -p " + std::to_string(opt.nprocs));
          return kExitUsage;
        }
        if (choice.any_marked) {
          say("no whole checkpoint to " + std::string(first ? "resume" : "restart") +
              " from: " + choice.why_none);
          return kExitLaunchFailed;
        }
        if (first) {
          say("nothing to resume: no reachable host holds a checkpoint of this job in " + dir);
          return kExitLaunchFailed;
        }
      } else {
        if (any_run) {
          if (const std::string mine = program_id(opt.program, opt.program_args);
              choice.program != kUnknownProgram && choice.program != mine && !opt.allow_new_args) {
            say("checkpoint " + std::to_string(choice.checkpoint) + " in " + dir +
                " was written by a run of " + opt.program +
                " with other arguments than these; resume with the arguments the job was started "
                "with (bsprun printed the command), or add --allow-new-args to resume with these");
            return kExitUsage;
          }
          run_id = choice.run;  // the resumed run goes on as the run it continues
        }
        from = choice.checkpoint;
        const std::vector<Transfer> transfers = plan_transfers(choice, place.host_of_pid());
        std::string failed_host;
        if (const std::string problem = place.bring(transfers, failed_host); !problem.empty()) {
          // The host that could not take (or give) a shard is treated as lost: plan again
          // without it, while hosts remain.
          if (failed_host.empty() || !place.can_lose_hosts()) {
            say("could not bring the shards of checkpoint " + std::to_string(from) +
                " over: " + problem + "; continue the job later with: " + resume_command(opt));
            return kExitResumable;
          }
          say("could not bring the shards of checkpoint " + std::to_string(from) +
              " over: " + problem + "; leaving out " + failed_host + " and planning again");
          left_out[failed_host] = "left out: a shard could not be copied there";
          place.lose(failed_host);
          continue;
        }
        if (!transfers.empty())
          copied = " (" + plural(transfers.size(), "shard", "shards") + " brought over)";
      }
    }
    // A stop asked for while bsprun probed, looked or copied: no restart to announce.
    if (const int sig = pending_stop_signal(); sig != 0 && !first) {
      say_how_to_continue(opt, dir);
      return 128 + sig;
    }
    timings.starting = Clock::now();
    const std::string start =
        from > 0 ? "from checkpoint " + std::to_string(from) + " on " + place.hosts_text() + copied
                 : "from the beginning on " + place.hosts_text() +
                       " (the job wrote no checkpoint that the reachable hosts hold)";
    if (!lost_what.empty())
      say("restart " + std::to_string(restarts_used) + " of " + std::to_string(opt.restarts) +
          ": " + start);
    else if (!moved_off.empty())
      say("moving the job off " + moved_off + ": " + start);
    else if (opt.resume && first)
      say("resuming job " + opt.job_id + ": " + start);
    if (opt.verbose && (!lost_what.empty() || !moved_off.empty())) say(timings.text());

    double time_left = 0;
    if (opt.time_limit_s > 0) {
      time_left = opt.time_limit_s - std::chrono::duration<double>(Clock::now() - began).count();
      if (time_left <= 0.01) time_left = 0.01;
    }
    const RunResult result = place.run(from, run_id, time_left);
    RunEnding ending = classify(result, place.watched_lost_host(), place.moving_off());
    first = false;
    lost_what.clear();
    // The place itself may have ended (a Slurm allocation's time limit, scancel), taking the
    // job with it: no host is to blame, none can be asked, and no restart can run there. The
    // checkpoint the library last said was whole is on the hosts' storage.
    // (Open MPI 5's starter may even end 0 when Slurm killed the job's processes; a batch job's
    // bsprun gets SIGTERM at the time limit or scancel.)
    if (ending.kind == Ending::kLost || ending.kind == Ending::kProgramFailed ||
        ending.kind == Ending::kCheckpointNotWritten || ending.kind == Ending::kFinished ||
        (ending.kind == Ending::kStoppedByUser && result.forwarded_signal == SIGTERM)) {
      int status = kExitLaunchFailed;
      if (const std::string gone = place.ended(status); !gone.empty()) {
        const std::uint64_t whole = std::max<std::uint64_t>(result.whole_checkpoint, from);
        if (whole == 0) {
          say(gone + ", and the job with it, before it wrote a whole checkpoint");
          return status;
        }
        say(gone + ", and the job with it; checkpoint " + std::to_string(whole) +
            " is whole on the hosts' own storage");
        say("to continue the job from its last checkpoint: " + resume_command(opt));
        return kExitResumable;
      }
    }
    switch (ending.kind) {
      case Ending::kFinished:
        place.clean_up(opt.checkpoint_dir.empty());
        return exit_status_of(result, opt.time_limit_s);
      case Ending::kMoved:
        moved_off = place.moving_off();
        resuming = true;
        continue;
      case Ending::kStoppedAfterCheckpoint:
        say("the job stopped after checkpoint " + std::to_string(result.stopped_after_checkpoint) +
            ", as a stop file in its checkpoint directory asked; continue it with: " +
            resume_command(opt));
        place.clean_up(false);
        return kExitResumable;
      case Ending::kCheckpointNotWritten: {
        // The library said which host and why. The host's fault (a full or read-only disk) is
        // the host's: with restarts left and other hosts, the job goes on without it.
        const std::string host = place.host_calling_itself(ending.host);
        if (!host.empty() && restarts_used < opt.restarts) {
          say("leaving out " + host + ": checkpoint " +
              std::to_string(result.checkpoint_not_written) + " could not be written there");
          left_out[host] = "left out: it could not write a checkpoint";
          place.lose(host);
          ++restarts_used;
          lost_what = host + ": could not write a checkpoint";
          resuming = true;
          continue;
        }
        const CheckpointChoice choice = whole_checkpoint(opt, place, run_id);
        if (choice.checkpoint > 0) {
          say("checkpoint " + std::to_string(choice.checkpoint) + " is whole: once " + ending.host +
              " can write again, continue the job with: " + resume_command(opt));
          return kExitResumable;
        }
        return exit_status_of(result, opt.time_limit_s);
      }
      case Ending::kStoppedByUser:
      case Ending::kTimeLimit:
        say_how_to_continue(opt, dir);
        return exit_status_of(result, opt.time_limit_s);
      case Ending::kProgramFailed:
        // What the other processes said, held while the run might have been a loss.
        std::cerr << result.held_consequences;
        // With restarts, Open MPI's notice of a death was held back: say it.
        if (opt.restarts > 0 && result.death.rank >= 0)
          say("process " + std::to_string(result.death.rank) + " on " + result.death.host +
              " ended by signal " + std::to_string(result.death.signal) +
              (result.death.signal_name.empty() ? "" : " (" + result.death.signal_name + ")") +
              ": the program failed; not restarted");
        if (!result.remote_stop_ran) place.sweep();
        return exit_status_of(result, opt.time_limit_s);
      case Ending::kLost:
        break;
    }
    // Lost a process or a host.
    if (opt.restarts == 0) {
      if (!result.remote_stop_ran) place.sweep();
      const int status = exit_status_of(result, opt.time_limit_s);
      say_how_to_continue(opt, dir);
      return status;
    }
    // mpirun may not say which host failed (a daemon that did not start, and ssh said nothing
    // bsprun could place): the hosts that do not answer when the job is stopped are the ones.
    const bool host_unnamed =
        ending.host.empty() && result.lost.empty() && result.start_failure.host_lost;
    // The watch said it when it noticed.
    if (result.lost.empty() && !host_unnamed) say("lost " + ending.what);
    const auto sweep_began = Clock::now();
    std::vector<std::string> silent = result.silent_hosts;
    if (!result.remote_stop_ran) silent = place.sweep();
    timings.stopping_s =
        result.stopping_s + std::chrono::duration<double>(Clock::now() - sweep_began).count();
    std::vector<std::string> gone;
    if (!ending.host.empty()) gone.push_back(ending.host);
    if (host_unnamed && !silent.empty()) {
      gone = silent;
      std::string names;
      for (const auto& h : gone) names += (names.empty() ? "" : " ") + h;
      ending.what = names + ": could not start the job there: " + result.start_failure.cause +
                    "; " + (gone.size() == 1 ? "it does" : "they do") + " not answer ssh";
    }
    if (host_unnamed) say("lost " + ending.what);
    for (const auto& host : gone) {
      left_out[host] = "left out: lost earlier in this run";
      place.lose(host);
    }
    moved_off.clear();
    if (restarts_used >= opt.restarts) {
      const CheckpointChoice choice = whole_checkpoint(opt, place, run_id);
      if (choice.checkpoint > 0) {
        say("no restarts left (" + std::to_string(restarts_used) + " of " +
            std::to_string(opt.restarts) + " used); checkpoint " +
            std::to_string(choice.checkpoint) +
            " is whole: continue the job with: " + resume_command(opt));
        return kExitResumable;
      }
      say("no restarts left (" + std::to_string(restarts_used) + " of " +
          std::to_string(opt.restarts) + " used), and no whole checkpoint to continue from" +
          (choice.why_none.empty() ? "" : ": " + choice.why_none));
      return kExitLaunchFailed;
    }
    ++restarts_used;
    lost_what = ending.what;
    resuming = true;
  }
}

// ---- This machine ------------------------------------------------------------------------------

namespace {

// "a", "a and b", "a, b and c".
std::string and_list(const std::vector<std::string>& items) {
  std::string text;
  for (std::size_t i = 0; i < items.size(); ++i)
    text += (i == 0 ? "" : i + 1 == items.size() ? " and " : ", ") + items[i];
  return text;
}

std::string rank_list(const std::vector<int>& ranks) {
  std::vector<std::string> items;
  for (int rank : ranks) items.push_back(std::to_string(rank));
  return and_list(items);
}

// The loss of processes that left no exit note (exit_notes.h), on `where` ("emu1 and emu2").
std::string lost_processes_text(const std::vector<int>& lost, const std::string& where,
                                const std::string& mpi_name) {
  return lost.size() == 1
             ? "process " + rank_list(lost) + " on " + where +
                   ": it did not end by itself (killed by a signal), found by bsprun"
             : "processes " + rank_list(lost) + " on " + where +
                   ": they did not end by themselves (one was killed by a signal, and " + mpi_name +
                   " ended the others), found by bsprun";
}

class LocalPlace : public JobPlace {
 public:
  LocalPlace(const Options& opt, const MpiSettings& settings, std::string program)
      : opt_(opt),
        settings_(settings),
        program_(std::move(program)),
        dir_(checkpoint_directory(opt)) {}

  int plan(const std::map<std::string, std::string>&, bool) override { return 0; }

  std::vector<Holdings> survey() override {
    std::string error;
    const std::string listing =
        run_sh_here(survey_script(dir_, sibling_hostinfo(), true), kSurveySeconds, error);
    Holdings here;
    here.host = kHere;
    if (const std::string problem = error.empty() ? read_survey(listing, here) : error;
        !problem.empty()) {
      say("cannot look at the checkpoints in " + dir_ + ": " + problem);
      return {};
    }
    say_skipped(here, dir_);
    return {here};
  }

  std::vector<std::string> host_of_pid() const override {
    return std::vector<std::string>(static_cast<std::size_t>(opt_.nprocs), kHere);
  }
  std::string hosts_text() const override { return kHere; }
  std::string bring(const std::vector<Transfer>&, std::string&) override { return ""; }
  bool can_lose_hosts() const override { return false; }

  RunResult run(std::uint64_t resume, const std::string& run_id, double time_limit_s) override {
    MpiSettings run = run_settings(settings_, dir_, resume, run_id, opt_);
    std::optional<ExitNotes> notes;
    if (!run.mpi->reports_every_death() || opt_.restarts > 0) {
      notes.emplace();
      if (!notes->path().empty()) run.exports.push_back(notes->variable());
    }
    JobWatch watch;
    watch.quiet_losses = opt_.restarts > 0;
    // A process of the run stopped (SIGSTOP) for --host-timeout is lost (frozen.h); only when
    // asked for, so that a process held in a debugger does not stop a plain run.
    std::optional<FrozenWatch> frozen;
    if (opt_.restarts > 0 || opt_.host_timeout_given) {
      frozen.emplace(opt_.job_id, run_id, opt_.host_timeout_s);
      watch.lost = [&frozen] { return frozen->lost(); };
    }
    RunResult result =
        run_mpirun(local_mpirun_argv(run, opt_.nprocs, opt_.nprocs > local_core_count(), program_,
                                     opt_.program_args),
                   opt_.verbose, time_limit_s, {}, watch);
    // A process that crashed said so itself (the job's status is then 128 + its signal).
    const bool crashed = result.exit_status > 128 && is_crash_signal(result.exit_status - 128);
    const bool ran_out = result.started && !result.forwarded_signal && !result.timed_out;
    const ExitNoteSet read = notes && ran_out ? notes->read() : ExitNoteSet{};
    const std::vector<int> lost = read.not_ended();
    if (lost.empty()) return result;
    if (!crashed && result.death.rank < 0 && opt_.restarts > 0 && !read.ended_with_failure()) {
      // With restarts to spare, a process that did not end by itself is lost, whatever status
      // the starter gave (MPICH 4.0's mpiexec: the signal's number; 4.2's: 0 in most runs).
      result.death.rank = lost.front();
      result.death.host = kHere;
      result.death.described = lost_processes_text(lost, kHere, run.mpi->name());
      if (result.exit_status == 0) result.exit_status = 1;
    } else if (result.exit_status == 0) {
      say("process" + std::string(lost.size() > 1 ? "es " : " ") + rank_list(lost) +
          " of the job did not end by itself (killed by a signal?), although " + run.mpi->name() +
          "'s starter reported success; the job failed");
      result.exit_status = 1;
    }
    return result;
  }

  void clean_up(bool remove_directory) override {
    if (!remove_directory) return;  // bsprun writes no stop file here
    std::string error;
    run_sh_here(remove_script(dir_, true), 30, error);
  }

 private:
  static constexpr const char* kHere = "this machine";
  const Options& opt_;
  const MpiSettings& settings_;
  std::string program_;
  std::string dir_;
};

// ---- Hosts -------------------------------------------------------------------------------------

// What GridPlace and SlurmPlace share: their plan is a GridPlan, and they read what the hosts
// say (checkpoint listings, exit notes) each its own way, then the same way.

// Each process's host under the plan, in pid order.
std::vector<std::string> hosts_of_pids(const GridPlan& plan) {
  std::vector<std::string> hosts;
  for (const auto& sj : plan.subjobs)
    for (const auto& h : rsl::placement(sj))
      hosts.insert(hosts.end(), static_cast<std::size_t>(h.count), h.host);
  return hosts;
}

// The plan's hosts, for messages: "emu1 emu3".
std::string chosen_text(const GridPlan& plan) {
  std::string text;
  for (const auto& h : plan.chosen) text += (text.empty() ? "" : " ") + h.name;
  return text;
}

// The plan's host that calls itself `name` (its host name, or the short form of one), or "".
std::string chosen_calling_itself(const GridPlan& plan, const std::string& name) {
  for (const auto& h : plan.chosen)
    if (h.name == name) return h.name;
  // "node1" for "node1.example.org", or the other way round.
  const auto short_name = [](const std::string& n) { return n.substr(0, n.find('.')); };
  if (name.find_first_not_of("0123456789.") == std::string::npos) return "";  // an address
  for (const auto& h : plan.chosen)
    if (short_name(h.name) == short_name(name) && !short_name(name).empty()) return h.name;
  return "";
}

// One host's checkpoint listing: kept, or (problem) left out and, with -v, said why.
void keep_listing(const std::string& host, const std::string& problem, Holdings&& h,
                  const Options& opt, const std::string& dir, std::vector<Holdings>& holdings) {
  if (!problem.empty()) {
    if (opt.verbose) say(host + ": cannot look at the checkpoints in " + dir + ": " + problem);
    return;
  }
  say_skipped(h, dir);
  holdings.push_back(std::move(h));
}

// A process of the run killed by a signal, from the exit notes of the run's hosts (`complete`:
// every host's were read): the job's loss, unless a process failed by exit (the program's
// failure) or the run ended otherwise (a crash said so itself, a lost host (other_loss: one the
// place noticed itself), a stop).
void take_killed_process(RunResult& result, const ExitNoteSet& notes, bool complete,
                         bool other_loss, const std::vector<std::string>& host_of_pid,
                         const std::string& mpi_name) {
  const bool crashed = result.exit_status > 128 && is_crash_signal(result.exit_status - 128);
  if (!complete || !result.started || result.forwarded_signal || result.timed_out || crashed ||
      result.death.rank >= 0 || !result.lost.empty() || result.start_failure.host_lost ||
      other_loss || notes.ended_with_failure())
    return;
  const std::vector<int> lost = notes.not_ended();
  if (lost.empty()) return;
  std::set<std::string> where;
  for (int rank : lost)
    if (static_cast<std::size_t>(rank) < host_of_pid.size())
      where.insert(host_of_pid[static_cast<std::size_t>(rank)]);
  result.death.rank = lost.front();
  result.death.host = where.size() == 1 ? *where.begin() : "";
  result.death.described = lost_processes_text(
      lost, and_list(std::vector<std::string>(where.begin(), where.end())), mpi_name);
  if (result.exit_status == 0) result.exit_status = 1;
}

class GridPlace : public JobPlace {
 public:
  explicit GridPlace(const GridJob& job) : job_(job), dir_(checkpoint_directory(job.opt)) {}

  int plan(const std::map<std::string, std::string>& left_out, bool first) override {
    left_out_ = left_out;
    if (const int status = plan_grid(job_, left_out, first || job_.opt.verbose, plan_); status != 0)
      return status;
    reachable_.clear();
    for (const auto& c : plan_.allocation.candidates)
      if (c.probe.ok) reachable_.push_back(c.probe.host);
    host_of_pid_ = hosts_of_pids(plan_);
    for (const auto& h : plan_.chosen) used_.insert(h.name);
    return 0;
  }

  std::vector<Holdings> survey() override {
    hosts::ProbeOptions opt = job_.probe;
    opt.timeout_ms = static_cast<int>((job_.opt.probe_timeout_s + kSurveySeconds) * 1000);
    const auto runs = hosts::run_on_hosts(
        reachable_,
        hosts::guarded_command(survey_script(dir_, sibling_hostinfo(), true), opt.timeout_ms), opt);
    std::vector<Holdings> holdings;
    for (const auto& run : runs) {
      Holdings h;
      h.host = run.host.name;
      const std::string problem = !run.ok ? run.error
                                  : run.exit_status != 0
                                      ? "exit status " + std::to_string(run.exit_status)
                                      : read_survey(run.out, h);
      keep_listing(run.host.name, problem, std::move(h), job_.opt, dir_, holdings);
    }
    return holdings;
  }

  std::vector<std::string> host_of_pid() const override { return host_of_pid_; }

  std::string hosts_text() const override { return chosen_text(plan_); }

  std::string bring(const std::vector<Transfer>& transfers, std::string& failed_host) override {
    hosts::ProbeOptions opt = job_.probe;
    std::vector<std::future<hosts::RelayResult>> copies;
    for (const Transfer& t : transfers) {
      const hosts::HostSpec from = hosts::host_named(job_.candidates, t.from_host),
                            to = hosts::host_named(job_.candidates, t.to_host);
      const std::string from_path = sftp_path(dir_) + "/" + t.from_name,
                        to_path = sftp_path(dir_) + "/" + t.to_name;
      if (job_.opt.verbose)
        say("copying " + t.from_host + ":" + t.from_name + " to " + t.to_host + ":" + t.to_name);
      copies.push_back(std::async(std::launch::async, [=] {
        return hosts::relay_file(from, from_path, to, to_path, opt);
      }));
    }
    std::string problem;
    for (auto& copy : copies) {
      const hosts::RelayResult r = copy.get();
      if (!r.ok && problem.empty()) {
        problem = r.error;
        failed_host = r.host;
      }
    }
    return problem;
  }

  RunResult run(std::uint64_t resume, const std::string& run_id, double time_limit_s) override {
    if (const int status = write_allocation(job_.opt, plan_.subjobs, runs_++ == 0); status != 0) {
      RunResult unwritten;
      unwritten.started = false;
      unwritten.error = "the allocation could not be written";
      return unwritten;
    }
    remote_ = remote_job(plan_.subjobs, plan_.chosen, job_.ssh_config);
    MonitorOptions watching;
    watching.host_timeout_s = job_.opt.host_timeout_s;
    watching.migrate_load = job_.opt.migrate_load;
    watching.probe = job_.probe;
    watching.checkpoint_dir = dir_;
    watching.run_id = run_id;
    watching.room_elsewhere = [this](const std::string& host) { return room_without(host); };
    MonitorVerdict verdict;
    MpiSettings settings = run_settings(job_.settings, dir_, resume, run_id, job_.opt);
    // The processes' exit notes on each host say which process was killed where the starter does
    // not (Hydra), or says another process's end first: under Open MPI 5 a peer that loses its
    // connection to the killed process aborts at once (MPI_ERRORS_ARE_FATAL, "Socket closed"),
    // and PRRTE may report that abort rather than the death. Only with restarts to spare, where
    // a lost process matters.
    const bool notes = job_.opt.restarts > 0;
    if (notes)
      settings.exports.push_back("BSPG_EXIT_NOTES=" + exit_notes_directory(remote_.marker));
    RunResult result = run_subjobs(plan_.subjobs, plan_.chosen, settings, remote_, watching,
                                   job_.opt.restarts > 0, time_limit_s, &verdict);
    lost_host_ = verdict.lost_host;
    moving_off_ = verdict.moving_off;
    wrote_stop_ = wrote_stop_ || !moving_off_.empty();
    if (notes) find_killed_process(result, settings);
    return result;
  }

  // A process of the run killed by a signal, from the exit notes on the hosts (which are then
  // removed): the job's loss, unless a process failed by exit (the program's failure) or the run
  // ended otherwise (a crash said so itself, a lost host, a stop).
  void find_killed_process(RunResult& result, const MpiSettings& settings) const {
    ExitNoteSet notes;
    bool complete = true;
    for (const auto& listed : hosts::run_on_hosts(
             plan_.chosen,
             hosts::guarded_command(exit_notes_script(remote_.marker), job_.probe.timeout_ms),
             job_.probe))
      complete = listed.ok && read_exit_notes(listed.out, notes) && complete;
    take_killed_process(result, notes, complete, !lost_host_.empty(), host_of_pid_,
                        settings.mpi->name());
  }

  std::string host_calling_itself(const std::string& name) const override {
    return chosen_calling_itself(plan_, name);
  }

  void lose(const std::string& host) override {
    reachable_.erase(std::remove_if(reachable_.begin(), reachable_.end(),
                                    [&](const hosts::HostSpec& h) { return h.name == host; }),
                     reachable_.end());
  }

  std::string watched_lost_host() const override { return lost_host_; }
  std::string moving_off() const override { return moving_off_; }

  std::vector<std::string> sweep() override {
    RemoteStop stop(remote_, 5);
    stop.start();
    stop.finish();
    if (!stop.unreachable().empty()) say(not_stopped_line(stop.unreachable()));
    return stop.silent();
  }

  void clean_up(bool remove_directory) override {
    if (!remove_directory && !wrote_stop_) return;
    // A job that ended well: the last run's processes removed the directory on their hosts
    // themselves (BSPG_CHECKPOINT_CLEANUP), so only hosts of earlier runs need a login.
    std::set<std::string> done;
    if (remove_directory)
      for (const auto& h : plan_.chosen) done.insert(h.name);
    std::vector<hosts::HostSpec> hosts;
    for (const auto& h : job_.candidates)
      if (used_.count(h.name) && !left_out_.count(h.name) && !done.count(h.name))
        hosts.push_back(h);
    if (hosts.empty()) return;
    hosts::run_on_hosts(
        hosts, hosts::guarded_command(remove_script(dir_, remove_directory), job_.probe.timeout_ms),
        job_.probe);
  }

 private:
  // Whether the job could run on the candidates without `host` (asked before moving off it).
  bool room_without(const std::string& host) const {
    std::vector<hosts::HostSpec> others;
    for (const auto& h : job_.candidates)
      if (h.name != host && !left_out_.count(h.name)) others.push_back(h);
    std::vector<hosts::ProbeResult> probes = hosts::probe_hosts(others, job_.probe);
    for (auto& p : probes)  // hosts as busy as the one the job leaves are no better
      if (p.ok && job_.opt.migrate_load > 0 && p.load1 > job_.opt.migrate_load) p.ok = false;
    try {
      allocate(probes, job_.opt.nprocs);
      return true;
    } catch (const AllocationError&) {
      return false;
    }
  }

  const GridJob& job_;
  std::string dir_;
  GridPlan plan_;
  std::map<std::string, std::string> left_out_;
  std::vector<hosts::HostSpec> reachable_;
  std::vector<std::string> host_of_pid_;
  std::set<std::string> used_;  // hosts that ran the job
  RemoteJob remote_;
  std::string lost_host_, moving_off_;
  int runs_ = 0;
  bool wrote_stop_ = false;  // a stop file of bsprun's may be left on a host
};

// ---- The nodes of a Slurm allocation -------------------------------------------------------------

// As GridPlace, with srun steps where GridPlace logs in over ssh. Slurm itself notices a node
// that dies (the starter's daemon there is lost, and the job with it): no monitor of bsprun's.
class SlurmPlace : public JobPlace {
 public:
  explicit SlurmPlace(const SlurmJob& job) : job_(job), dir_(checkpoint_directory(job.opt)) {}

  int plan(const std::map<std::string, std::string>& left_out, bool first) override {
    left_out_ = left_out;
    if (const int status = plan_slurm(job_, left_out, first || job_.opt.verbose, plan_);
        status != 0)
      return status;
    reachable_.clear();
    for (const auto& c : plan_.allocation.candidates)
      if (c.probe.ok) reachable_.push_back(c.probe.host.name);
    host_of_pid_ = hosts_of_pids(plan_);
    for (const auto& h : plan_.chosen) used_.insert(h.name);
    return 0;
  }

  std::vector<Holdings> survey() override {
    const NodeOutputs outputs =
        run_on_nodes(reachable_, survey_script(dir_, sibling_hostinfo(), true),
                     job_.opt.probe_timeout_s + kSurveySeconds, "bsprun-survey");
    std::vector<Holdings> holdings;
    for (const auto& node : reachable_) {
      Holdings h;
      h.host = node;
      auto it = outputs.by_node.find(node);
      const std::string problem =
          it == outputs.by_node.end() ? "no answer through srun" : read_survey(it->second, h);
      keep_listing(node, problem, std::move(h), job_.opt, dir_, holdings);
    }
    return holdings;
  }

  std::vector<std::string> host_of_pid() const override { return host_of_pid_; }

  std::string hosts_text() const override { return chosen_text(plan_); }

  std::string bring(const std::vector<Transfer>& transfers, std::string& failed_host) override {
    // One after another: a lost node's shards are few, and each copy is two short srun steps.
    for (const Transfer& t : transfers) {
      if (job_.opt.verbose)
        say("copying " + t.from_host + ":" + t.from_name + " to " + t.to_host + ":" + t.to_name);
      const std::string problem =
          copy_between_nodes(t.from_host, local_dir(t.from_name), t.to_host, local_dir(t.to_name),
                             job_.opt.probe_timeout_s + kSurveySeconds);
      if (!problem.empty()) {
        failed_host = t.to_host;
        return problem;
      }
    }
    return "";
  }

  RunResult run(std::uint64_t resume, const std::string& run_id, double time_limit_s) override {
    if (const int status = write_allocation(job_.opt, plan_.subjobs, runs_++ == 0); status != 0) {
      RunResult unwritten;
      unwritten.started = false;
      unwritten.error = "the allocation could not be written";
      return unwritten;
    }
    MpiSettings settings = run_settings(job_.settings, dir_, resume, run_id, job_.opt);
    settings.job_marker = new_job_marker();
    // The notes go into the job's directory on each node, which an allocation that ends under
    // the job leaves with its checkpoints, where the next run or the job's end removes them.
    const bool notes = job_.opt.restarts > 0;
    if (notes)
      settings.exports.push_back("BSPG_EXIT_NOTES=" +
                                 exit_notes_directory(settings.job_marker, dir_));
    // The library says which checkpoints are whole: after the allocation ends, no node can say.
    settings.exports.push_back("BSPG_SAY_WHOLE=1");
    RunResult result =
        run_slurm_subjobs(job_, plan_, settings, job_.opt.restarts > 0, time_limit_s);
    name_lost_node(result);
    if (notes) find_killed_process(result, settings);
    return result;
  }

  // MPICH's Hydra says only that a proxy hung up (a start failure of no host), also when a node
  // died under a running job; on the SSH path the host that no longer answers ssh is the lost
  // one (RemoteStop), here the node that no longer answers through srun.
  void name_lost_node(RunResult& result) const {
    if (result.exit_status == 0 || result.forwarded_signal || result.timed_out ||
        !result.lost.empty() || result.start_failure.host_lost ||
        result.start_failure.exit_status == 0)
      return;
    std::vector<std::string> nodes;
    for (const auto& h : plan_.chosen) nodes.push_back(h.name);
    const std::vector<std::string> silent = silent_nodes(nodes, job_.opt.probe_timeout_s);
    if (silent.empty()) return;
    result.start_failure.host_lost = true;
    result.start_failure.host = silent.front();
    result.start_failure.message = "lost contact with " + silent.front() + " while the job ran";
  }

  // As GridPlace's: a process killed by a signal, from the exit notes on the nodes.
  void find_killed_process(RunResult& result, const MpiSettings& settings) const {
    std::vector<std::string> nodes;
    for (const auto& h : plan_.chosen) nodes.push_back(h.name);
    if (allocation_end(job_.job_id).kind != AllocationEnd::kRunning) return;
    const NodeOutputs outputs = run_on_nodes(nodes, exit_notes_script(settings.job_marker, dir_),
                                             job_.opt.probe_timeout_s, "bsprun-notes");
    ExitNoteSet notes;
    bool complete = true;
    for (const auto& node : nodes) {
      auto it = outputs.by_node.find(node);
      complete = it != outputs.by_node.end() && read_exit_notes(it->second, notes) && complete;
    }
    take_killed_process(result, notes, complete, false, host_of_pid_, settings.mpi->name());
  }

  std::string host_calling_itself(const std::string& name) const override {
    return chosen_calling_itself(plan_, name);
  }

  void lose(const std::string& host) override {
    reachable_.erase(std::remove(reachable_.begin(), reachable_.end(), host), reachable_.end());
  }

  std::string ended(int& status) override {
    const AllocationEnd end = allocation_end(job_.job_id);
    if (end.kind == AllocationEnd::kRunning) return "";
    status = end.kind == AllocationEnd::kTimeLimit   ? kExitTimeLimit
             : end.kind == AllocationEnd::kCancelled ? 128 + SIGTERM
                                                     : kExitLaunchFailed;
    return "Slurm job " + job_.job_id + " " + end.why;
  }

  void clean_up(bool remove_directory) override {
    if (!remove_directory) return;
    // The last run's processes removed the directory on their nodes (BSPG_CHECKPOINT_CLEANUP).
    std::set<std::string> done;
    for (const auto& h : plan_.chosen) done.insert(h.name);
    std::vector<std::string> nodes;
    for (const auto& name : used_)
      if (!left_out_.count(name) && !done.count(name)) nodes.push_back(name);
    if (nodes.empty()) return;
    run_on_nodes(nodes, remove_script(dir_, remove_directory), job_.opt.probe_timeout_s,
                 "bsprun-clean-up");
  }

 private:
  std::string local_dir(const std::string& name) const {
    return local_path(dir_) + "/" + name;
  }

  const SlurmJob& job_;
  std::string dir_;
  GridPlan plan_;
  std::map<std::string, std::string> left_out_;
  std::vector<std::string> reachable_;
  std::vector<std::string> host_of_pid_;
  std::set<std::string> used_;
  int runs_ = 0;
};

}  // namespace

int run_slurm_restartable(const SlurmJob& job) {
  SlurmPlace place(job);
  return run_restartable(job.opt, place);
}

int run_local_restartable(const Options& opt, const MpiSettings& settings,
                          const std::string& program) {
  LocalPlace place(opt, settings, program);
  return run_restartable(opt, place);
}

int run_grid_restartable(const GridJob& job) {
  GridPlace place(job);
  return run_restartable(job.opt, place);
}

}  // namespace bspg::launcher
