// frozen.h - noticing a process of the job that is stopped (SIGSTOP) while its host answers.
//
// A frozen host stops answering bsprun's probes and is declared lost after --host-timeout. A
// single frozen process (or its MPI daemon) leaves the host answering, and the job would hang:
// so each probe round also lists the job's processes on the host (found by an environment line
// every process of the job carries) with their state, and a process seen stopped (state T, or t
// under a tracer) since the last round that saw it run, for --host-timeout, is lost as a host
// would be. On the grid path the monitor does this on the hosts (job_processes_script); on this
// machine FrozenWatch reads /proc itself.
#ifndef BSPG_LAUNCHER_FROZEN_H
#define BSPG_LAUNCHER_FROZEN_H

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace bspg::launcher {

// One process of the job on a host, as a probe round saw it.
struct JobProcess {
  long pid = 0;
  char state = '?';     // /proc/PID/stat's state: R, S, D, T (stopped), t (traced), ...
  int rank = -1;        // the MPI rank (the BSP pid), -1 when not known (a daemon, mpirun)
  bool daemon = false;  // an MPI daemon (orted, prted, hydra_pmi_proxy) or mpirun
  std::string name;     // its command name (/proc/PID/comm), untrusted
};

// Whether a process in this state is stopped: T (a stop signal) or t (stopped by a tracer).
bool is_stopped_state(char state);

// The sh (one line, fit for hosts::guarded_command; `environment_line` goes in through
// shell_assignment) that prints, between the lines kJobProcessesBegin and kJobProcessesEnd,
// "proc PID STATE RANK NAME" for each process of the calling user in this UTS namespace whose
// environment holds `environment_line`, and "daemon PID STATE - NAME" for an MPI daemon that is
// the parent of one. RANK is OMPI_COMM_WORLD_RANK, PMI_RANK or PMIX_RANK, "-" when none is set.
std::string job_processes_script(const std::string& environment_line);
constexpr const char* kJobProcessesBegin = "bspg-job-processes";
constexpr const char* kJobProcessesEnd = "bspg-job-processes-end";

// The processes in such an output (what is before and after the markers ignored). `complete`
// says whether the end marker came: without it, nothing can be said about the host's processes.
std::vector<JobProcess> read_job_processes(const std::string& output, bool& complete);

// Every process here (this UTS namespace, this user) whose environment holds all of `lines`,
// with the MPI daemons that are their parents, read from /proc.
std::vector<JobProcess> local_job_processes(const std::vector<std::string>& lines);

// How long each process of the job has been stopped, across rounds: a process seen stopped
// counts as stopped since the last round that saw it running (or, when none did, the round
// before, or the start): as a silent host counts as silent since its last answer.
class StopClock {
 public:
  using Clock = std::chrono::steady_clock;
  explicit StopClock(double timeout_s, Clock::time_point start = Clock::now());

  // One round's view of `host`'s processes at `now`: "" or what is lost, e.g.
  // "process 2 on emu3: stopped (SIGSTOP) for 10 s".
  std::string observe(const std::string& host, const std::vector<JobProcess>& processes,
                      Clock::time_point now);
  // The earliest time a process now stopped would be lost (Clock::time_point::max(): none is).
  Clock::time_point next_deadline() const;
  // The process the last loss that observe() returned was about.
  const JobProcess& lost_process() const { return lost_process_; }

 private:
  double timeout_s_;
  Clock::time_point start_;
  std::map<std::string, Clock::time_point> last_round_;  // per host
  std::map<std::pair<std::string, long>, Clock::time_point> stopped_since_;
  JobProcess lost_process_;
};

// What a stopped process is called in bsprun's line: "process 2 on HOST: stopped (SIGSTOP) for
// 10 s", "Open MPI's daemon orted (pid 812) on HOST: stopped by a tracer for 10 s".
std::string stopped_text(const std::string& host, const JobProcess& process, double seconds);

// Where the job recovers in place (spares): a process stopped for --host-timeout is ended (the MPI
// then sees it lost, and the library recovers) instead of lost with its host. Holds the two rules
// both paths follow: only a process of the job (a rank, never an MPI daemon or mpirun) is ended,
// and each once (a second sighting of the same process is a loss: ending it failed).
class StoppedProcessEnder {
 public:
  // Ends `process` on `host`; true where it was ended.
  using End = std::function<bool(const std::string& host, const JobProcess& process)>;
  StoppedProcessEnder() = default;
  explicit StoppedProcessEnder(End end) : end_(std::move(end)) {}
  explicit operator bool() const { return static_cast<bool>(end_); }
  // true where `process` was ended now.
  bool end(const std::string& host, const JobProcess& process);
  // A new run: its processes are new.
  void forget() { ended_.clear(); }

 private:
  End end_;
  std::set<std::pair<std::string, long>> ended_;  // (host, pid) handed to end_
};

// The local path's watch (runner.h JobWatch::lost): every process of run `run` of job `job_id`
// on this machine (BSPG_JOB_ID and BSPG_RUN in its environment). lost() scans /proc at most
// every interval_s(timeout) and is cheap in between.
class FrozenWatch {
 public:
  FrozenWatch(const std::string& job_id, const std::string& run_id, double timeout_s);
  // "" or what was lost, e.g. "process 1 on vm: stopped (SIGSTOP) for 5 s".
  std::string lost();
  // Where the job recovers in place (spares): a process of the job stopped for the timeout is
  // ended here instead of being lost.
  StoppedProcessEnder end_stopped;

  // Seconds between two looks at /proc for a timeout.
  static double interval_s(double timeout_s);

 private:
  std::vector<std::string> lines_;
  double interval_s_;
  std::string host_;
  StopClock clock_;
  StopClock::Clock::time_point next_look_;
  std::string lost_;
};

}  // namespace bspg::launcher

#endif
