// restart.h - running a job to its end across lost processes and hosts (bsprun --restarts N,
// --resume, --migrate-load X, --checkpoint-dir DIR).
//
// Every process of a job gets BSPG_CHECKPOINT_DIR (and BSPG_RESUME), so that the library writes
// its checkpoints there (checkpoints.h). When a run ends because the job lost a process or a host
// (not because the program failed), bsprun stops what is left of it on every host, probes the
// candidates again without the lost hosts, places the processes by load as at the start, finds
// the newest checkpoint that the reachable hosts hold whole, brings each process's shard to its
// new host, and starts the job again from there, at most --restarts times.
#ifndef BSPG_LAUNCHER_RESTART_H
#define BSPG_LAUNCHER_RESTART_H

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "checkpoints.h"
#include "mpistart.h"
#include "options.h"
#include "runner.h"

namespace bspg::launcher {

// How a run of the job ended, as far as restarting goes.
enum class Ending {
  kFinished,                // exit status 0
  kProgramFailed,           // the program's own failure (exit status, bsp_abort, misuse, a crash)
  kStoppedByUser,           // a signal to bsprun
  kTimeLimit,               // --time-limit
  kStoppedAfterCheckpoint,  // a stop file (not bsprun's) stopped it after a checkpoint
  kMoved,                   // bsprun's stop file stopped it, to move it off a busy host
  kCheckpointNotWritten,    // a host could not write a checkpoint (full, read-only): the job
                            // stopped with the checkpoint before kept
  kLost,                    // a process or a host was lost
};

struct RunEnding {
  Ending kind = Ending::kProgramFailed;
  std::string what;  // kLost: what was lost and how it was noticed, e.g. "emu2: ..."
  std::string host;  // kLost: the host that is gone ("" when only a process was lost);
                     // kCheckpointNotWritten: the host that could not write, as it calls itself
  // kLost after the library's word that it could not recover in place (exit status 76): the
  // host of the lost process as it calls itself; it is left out when it does not answer once
  // the job is stopped (else it is a process lost on a healthy host).
  std::string no_recovery_host;
};

// Signals with which a process ends by its own doing (a crash: SIGSEGV, SIGBUS, SIGILL, SIGFPE,
// SIGABRT, SIGSYS, SIGTRAP): restarting would only repeat it. Any other signal came from outside
// (SIGKILL from an owner or the OOM killer, SIGTERM, SIGHUP, ...).
bool is_crash_signal(int signal);

// Classifies a run. A run that ended with kExitNoRecoveryInPlace after the library said it could
// not recover a lost process in place is kLost (that process, on its host). watched_host: the host
// bsprun's monitor declared lost (if it stopped the run); moving_off: the host whose stop file
// bsprun wrote ("" when none).
RunEnding classify(const RunResult& result, const std::string& watched_host,
                   const std::string& moving_off);

// Where the job runs: this machine, or hosts chosen among candidates. The restart loop asks it
// to plan a run, to say what the hosts hold, to bring shards over and to run.
class JobPlace {
 public:
  virtual ~JobPlace() = default;
  // Chooses where the next run goes, leaving out the hosts in left_out (host -> why). `first`:
  // the job's first run (as bsprun has always said it). 0 or bsprun's exit status (said).
  virtual int plan(const std::map<std::string, std::string>& left_out, bool first) = 0;
  // What each reachable host holds in the checkpoint directory (removing stop files first).
  virtual std::vector<Holdings> survey() = 0;
  // The host each process of the planned run goes to, and the hosts for messages ("emu1 emu3").
  virtual std::vector<std::string> host_of_pid() const = 0;
  virtual std::string hosts_text() const = 0;
  // Copies shards between hosts: "" or the problem, with the host it happened on in failed_host.
  virtual std::string bring(const std::vector<Transfer>& transfers, std::string& failed_host) = 0;
  // Whether a host can be left out and the job planned on others (false: this machine alone).
  virtual bool can_lose_hosts() const { return true; }
  // Runs the planned job from checkpoint `resume` (0: from the beginning) as run `run_id`.
  virtual RunResult run(std::uint64_t resume, const std::string& run_id, double time_limit_s) = 0;
  // After run(): the host the monitor declared lost, and the one the job was moved off.
  virtual std::string watched_lost_host() const { return ""; }
  virtual std::string moving_off() const { return ""; }
  // Stops whatever of the last run is left on its hosts; says which hosts it could not reach.
  // Returns the hosts that ssh could not reach at all (names).
  virtual std::vector<std::string> sweep() { return {}; }
  // `host` is lost: not asked about checkpoints any more.
  virtual void lose(const std::string& host) { (void)host; }
  // The host of the last run that calls itself `name` (its host name, or the short form of one):
  // its name here, or "".
  virtual std::string host_calling_itself(const std::string& name) const {
    (void)name;
    return "";
  }
  // After a run that did not finish: "" while the place lives, else why it ended under the job
  // ("Slurm job 12 reached its time limit"), with the exit status for a job that leaves no whole
  // checkpoint in `status`. Its hosts cannot be asked any more.
  virtual std::string ended(int& status) {
    (void)status;
    return "";
  }
  // The job is over: removes stop files, and the whole directory when remove_directory.
  virtual void clean_up(bool remove_directory) = 0;

  // Recovery in place: the recoveries the next run may make (the restarts left), set by the
  // restart loop before run(); the place gives them to the processes (run_settings).
  void allow_recoveries(int n) { recoveries_ = n; }
  int recoveries_allowed() const { return recoveries_; }

 private:
  int recoveries_ = 0;
};

// Runs the job in `place` to its end as opt says: bsprun's exit status.
int run_restartable(const Options& opt, JobPlace& place);

// The command that continues the job from its last checkpoint: bsprun --resume with every option
// the run was given (opt.given) and its job id.
std::string resume_command(const Options& opt);

// The checkpoint directory of this run (opt.checkpoint_dir, or the job id's default).
std::string checkpoint_directory(const Options& opt);
// `settings` for one run: every process gets the checkpoint directory, where to resume from
// (BSPG_CHECKPOINT_DIR, BSPG_RESUME; 0: the start), and the run's identity: BSPG_JOB_ID,
// BSPG_RUN (run_id) and BSPG_PROGRAM_ID (see checkpoints.h). With spares (settings.spares > 0)
// also BSPG_SPARES and BSPG_RECOVERIES=recoveries (in_place.h).
MpiSettings run_settings(const MpiSettings& settings, const std::string& dir, std::uint64_t resume,
                         const std::string& run_id, const Options& opt, int recoveries = 0);

}  // namespace bspg::launcher

#endif
