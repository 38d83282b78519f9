// local_place.cpp - the restart loop's place on this machine (-p N without a host file).
#include "local_place.h"

#include <signal.h>
#include <unistd.h>

#include <optional>

#include "in_place.h"
#include "localhost.h"
#include "place_support.h"
#include "restart.h"
#include "say.h"

namespace bspg::launcher {
namespace {

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
    MpiSettings run = run_settings(settings_, dir_, resume, run_id, opt_, recoveries_allowed());
    std::optional<ExitNotes> notes;
    if (!run.mpi->reports_every_death() || opt_.restarts > 0) {
      notes.emplace();
      if (!notes->path().empty()) run.exports.push_back(notes->variable());
    }
    JobWatch watch;
    watch.quiet_losses = opt_.restarts > 0;
    // A process of the run stopped (SIGSTOP) for --host-timeout is lost (frozen.h); only when
    // asked for, so that a process held in a debugger does not stop a plain run.
    // With spares such a process is killed instead: the MPI then sees it lost, and the library
    // recovers in place.
    std::optional<FrozenWatch> frozen;
    if (opt_.restarts > 0 || opt_.host_timeout_given || run.spares > 0) {
      frozen.emplace(opt_.job_id, run_id, opt_.host_timeout_s);
      if (run.spares > 0)
        frozen->end_stopped = StoppedProcessEnder([this](const std::string&,
                                                         const JobProcess& process) {
          const bool ended = ::kill(static_cast<pid_t>(process.pid), SIGKILL) == 0;
          if (opt_.verbose)
            say("process " + std::to_string(process.rank) + " (process id " +
                std::to_string(process.pid) + ") stopped for --host-timeout: " +
                (ended ? "ended, for recovery in place" : "could not be ended"));
          return ended;
        });
      watch.lost = [&frozen] { return frozen->lost(); };
    }
    // A lost process the library recovered from may still be there, stopped: ended at once,
    // or the starter would wait for it at the end.
    const std::vector<std::string> job_lines{"BSPG_JOB_ID=" + opt_.job_id, "BSPG_RUN=" + run_id};
    if (run.spares > 0)
      watch.recovered = [&](const InPlaceRecovery& recovery) {
        for (const LostProcess& lost : recovery.lost) {
          const std::string said = end_lost_process_here(lost, job_lines, this_host());
          if (!said.empty() && (opt_.verbose || said.find(" not ") != std::string::npos)) say(said);
        }
      };
    const int processes = opt_.nprocs + run.spares;
    RunResult result =
        run_mpirun(local_mpirun_argv(run, opt_.nprocs, processes > local_core_count(), program_,
                                     opt_.program_args),
                   opt_.verbose, time_limit_s, {}, watch);
    // The library recovered from its losses, or said why it could not (or its notes say that it
    // ended the job for a restart, where its line was lost): no exit note says more.
    if (run.spares > 0 && notes && result.started)
      take_unsaid_end_for_restart(result, notes->read(), host_of_pid());
    if (run.spares > 0 && (result.exit_status == 0 || result.no_recovery)) return result;
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

  // This machine's name, as the library's lines name it.
  static std::string this_host() {
    char name[256] = "";
    if (gethostname(name, sizeof name - 1) != 0) return "";
    name[sizeof name - 1] = '\0';
    return name;
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

}  // namespace

int run_local_restartable(const Options& opt, const MpiSettings& settings,
                          const std::string& program) {
  LocalPlace place(opt, settings, program);
  return run_restartable(opt, place);
}

}  // namespace bspg::launcher
