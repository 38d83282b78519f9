// monitor.h - watching the hosts of a running grid job.
//
// A thread probes the job's hosts every few seconds (the probe engine: non-blocking sessions,
// each probe bounded). A host that has not answered for --host-timeout seconds (frozen: its
// processes and its sshd stopped; cut off; switched off) is declared lost, and run_job stops the
// job. With --migrate-load X, a host whose load other than the job's own processes stays above X
// for kBusyRounds probes in a row gets a "stop" file in its checkpoint directory (when the job
// could run elsewhere): the job ends right after its next checkpoint, and bsprun restarts it on
// other hosts. With a job marker, each probe also lists the job's processes on the host
// (frozen.h): one stopped (SIGSTOP) for --host-timeout while its host answers is lost too.
#ifndef BSPG_LAUNCHER_MONITOR_H
#define BSPG_LAUNCHER_MONITOR_H

#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "frozen.h"
#include "hosts.h"

namespace bspg::launcher {

struct WatchedHost {
  hosts::HostSpec host;
  int job_processes = 0;  // the job's processes there (subtracted from its load)
};

struct MonitorOptions {
  double host_timeout_s = 30;  // no answer for this long: lost
  double migrate_load = 0;     // > 0: move off a host whose other load stays above this
  hosts::ProbeOptions probe;   // keys, fan-out; the timeout is the monitor's own
  std::string checkpoint_dir;  // where the stop file goes
  std::string run_id;          // the run the stop file names (only that run stops)
  // NAME=VALUE in the environment of every process of the job (remote_stop.h's marker): each
  // probe then also reports the job's processes there; "" checks hosts only.
  std::string job_marker_line;
  // Whether the job could run without `host` (probes the other candidates); asked before moving.
  std::function<bool(const std::string& host)> room_elsewhere;
  // Set where the job recovers in place (spares): a process of the job stopped for
  // --host-timeout is ended by it instead of being lost (the MPI then sees it lost, and the
  // library recovers), and the monitor watches on.
  StoppedProcessEnder* end_stopped = nullptr;
  // Set where the job recovers in place (spares): a host silent for --host-timeout is handed to
  // leave_silent (true where the job's other processes were told of its processes' loss: the
  // library then cuts its connections to them, and recovers in place). The monitor then watches
  // the other hosts on, and declares the host lost after all where recovered_from(host) has not
  // become true kLeftHostGrace seconds later (the job is then stopped and restarted).
  // daemon_gone: the host was handed over by host_gone, not for its silence.
  std::function<bool(const std::string& host, bool daemon_gone)> leave_silent;
  std::function<bool(const std::string& host)> recovered_from;
};

// Seconds the library has to recover from a silent host's processes once the others were told.
constexpr double kLeftHostGrace = 3;

// Probes this many times in a row above --migrate-load before the job moves.
constexpr int kBusyRounds = 3;

class HostMonitor {
 public:
  HostMonitor(std::vector<WatchedHost> hosts, MonitorOptions options);
  ~HostMonitor();  // stops the thread
  HostMonitor(const HostMonitor&) = delete;
  HostMonitor& operator=(const HostMonitor&) = delete;

  void start();
  // "" or what was lost and how it was noticed
  // ("emu2: no answer for 30 s (timed out after 5.0 s)").
  std::string lost() const;
  // The host lost ("" when none): silent, or with a process of the job stopped.
  std::string lost_host() const;
  // The host lost because it stopped answering ("" when none, or when it still answers).
  std::string silent_host() const;
  // The host the job is being moved off (its stop file is written), "" when none.
  std::string moving_off() const;
  // `host` is gone (its MPI daemon's connection ended while its ssh port no longer answers;
  // daemon_relay.h): handed to leave_silent at once, as a host silent for --host-timeout would
  // be, or lost where leave_silent is not set or refuses. Any thread.
  void host_gone(const std::string& host);
  // The library said it cannot recover in place (its line is read): a host left to it is lost
  // at once, not at the end of its grace. Any thread.
  void recovery_refused();

  // Seconds between probe rounds and each probe's timeout, for a host timeout.
  static double interval_s(double host_timeout_s);
  static double probe_timeout_s(double host_timeout_s, double probe_timeout_s);

 private:
  void run();
  void busy(const WatchedHost& watched, double other_load);

  std::vector<WatchedHost> hosts_;
  MonitorOptions options_;
  std::thread thread_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::vector<std::string> gone_;  // host_gone's, not yet taken by the thread
  bool refused_ = false;           // recovery_refused
  std::string lost_, lost_host_, silent_host_, moving_off_;
  std::vector<int> busy_rounds_;
  bool said_no_room_ = false;
};

}  // namespace bspg::launcher

#endif
