// restart.cpp - the restart loop (see restart.h); each path's JobPlace lives with its path.
#include "restart.h"

#include <glob.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "in_place.h"
#include "job_lock.h"
#include "profile_run.h"
#include "say.h"

namespace bspg::launcher {
namespace {

using Clock = std::chrono::steady_clock;

std::string plural(std::size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
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
  } else if (r.no_recovery && (r.exit_status == kExitNoRecoveryInPlace || r.mpirun_signal != 0)) {
    // The library ended the job itself once it could not recover in place (the starter may crash
    // as that job ends: Open MPI 5.0.7's did, under load, after a shrink that never ended).
    const LostProcess& lost = r.no_recovery->lost;
    e.kind = Ending::kLost;
    e.what = (lost.pid < 0 ? std::string("a process")
                           : "process " + std::to_string(lost.pid) + " on " + lost.host +
                                 (lost.process_id > 0
                                      ? " (process id " + std::to_string(lost.process_id) + ")"
                                      : "")) +
             ": no recovery in place (" + r.no_recovery->why + "), said the library";
    e.host = watched_host;
    e.no_recovery_host = lost.host;
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
  } else if (r.mpirun_signal != 0 && r.crash_pid < 0 && r.death.rank < 0 &&
             r.start_failure.exit_status == 0) {
    // The starter crashed by itself: no process of the job said it failed, nor did the starter.
    e.kind = Ending::kLost;
    e.what = "the job's starter: mpirun crashed (signal " + std::to_string(r.mpirun_signal) + ", " +
             strsignal(r.mpirun_signal) + ") while no process of the job had failed";
  } else {
    e.kind = Ending::kProgramFailed;
  }
  return e;
}

MpiSettings run_settings(const MpiSettings& settings, const std::string& dir, std::uint64_t resume,
                         const std::string& run_id, const Options& opt, int recoveries) {
  MpiSettings run = settings;
  run.exports.push_back("BSPG_CHECKPOINT_DIR=" + dir);
  run.exports.push_back("BSPG_RESUME=" + std::to_string(resume));
  run.exports.push_back("BSPG_JOB_ID=" + opt.job_id);
  run.exports.push_back("BSPG_RUN=" + run_id);
  run.exports.push_back("BSPG_PROGRAM_ID=" + program_id(opt.program, opt.program_args));
  if (opt.copies_given) run.exports.push_back("BSPG_COPIES=" + std::to_string(opt.copies));
  if (settings.spares > 0) {
    run.exports.push_back("BSPG_SPARES=" + std::to_string(settings.spares));
    run.exports.push_back("BSPG_RECOVERIES=" + std::to_string(std::max(recoveries, 0)));
  }
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
    place.allow_recoveries(opt.restarts - restarts_used);
    const RunResult result = place.run(from, run_id, time_left);
    RunEnding ending = classify(result, place.watched_lost_host(), place.moving_off());
    first = false;
    lost_what.clear();
    // Each recovery in place was one of the restarts (the library said it; its line went out).
    for (const InPlaceRecovery& recovery : result.recoveries) {
      restarts_used = std::min(restarts_used + 1, opt.restarts);
      if (opt.verbose) say(in_place_text(recovery, restarts_used, opt.restarts));
    }
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
        // With restarts, Open MPI's notice of a death was held back: say it. Where mpirun ended
        // before its notice (Open MPI 4.1's can crash while it ends the job), the library's
        // crash line says which process, and the signal is the job's status.
        if (opt.restarts > 0) {
          ProcessDeath death = result.death;
          if (death.rank < 0 && result.crash_pid >= 0 && result.exit_status > 128) {
            const std::vector<std::string> hosts = place.host_of_pid();
            const auto pid = static_cast<std::size_t>(result.crash_pid);
            death.rank = result.crash_pid;
            death.host = pid < hosts.size() ? hosts[pid] : "its host";
            death.signal = result.exit_status - 128;
            death.signal_name = strsignal(death.signal);
          }
          if (death.rank >= 0)
            say("process " + std::to_string(death.rank) + " on " + death.host +
                " ended by signal " + std::to_string(death.signal) +
                (death.signal_name.empty() ? "" : " (" + death.signal_name + ")") +
                ": the program failed; not restarted");
        }
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
    // The library named the lost process's host: gone when it does not answer either (a frozen
    // or lost host), else the process alone was lost there.
    if (const std::string host = place.host_calling_itself(ending.no_recovery_host);
        ending.host.empty() && !host.empty() &&
        std::find(silent.begin(), silent.end(), host) != silent.end())
      gone.push_back(host);
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

}  // namespace bspg::launcher
