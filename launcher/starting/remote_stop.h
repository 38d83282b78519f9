// remote_stop.h - stopping a job's processes on other hosts over ssh.
//
// When a grid job must stop, mpirun asks its daemons to end the processes; a frozen daemon (or a
// frozen mpirun) would leave them running. So bsprun also goes to every host itself: one ssh per
// host (the same ssh configuration Open MPI uses) runs a short sh script that finds the job's
// processes there by the marker in their environment, continues them and their parent (Open
// MPI's daemon) should they be stopped (SIGSTOP), sends SIGTERM, and SIGKILL 2 s later, and then
// ends the daemons too, so that nothing of the job is left when the ssh returns. A host that
// cannot be reached (down, frozen, no route) is reported; its processes may still run.
#ifndef BSPG_LAUNCHER_REMOTE_STOP_H
#define BSPG_LAUNCHER_REMOTE_STOP_H

#include <sys/types.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace bspg::launcher {

// The environment variable that marks every process of a grid job (mpirun -x NAME=marker).
constexpr const char* kJobMarkerVariable = "BSPG_JOB_MARKER";

// A new marker, unique to this job: letters, digits and '-' only.
std::string new_job_marker();

// The job's processes on other hosts (grid path); no hosts on the local path.
struct RemoteJob {
  std::vector<std::string> hosts;  // ssh destinations: host names of the ssh configuration
  std::string ssh_config;          // ssh -F this file; "": the user's own configuration
  std::string marker;              // kJobMarkerVariable's value in every process of the job
  std::map<std::string, std::string> address_names;  // address or name -> host name (messages)
};

// The sh script (one line, fit for hosts::guarded_command) that ends, on the host it runs on,
// every process of the calling user whose environment holds `environment_line` (NAME=VALUE)
// but `spare_pid`, and the MPI daemons (orted, prted, hydra_pmi_proxy) that are their parents
// or carry the line. Only processes of the host's own UTS namespace count (emulated test hosts
// share one process table). Stopped ones are continued first; the processes get SIGTERM and
// SIGKILL 2 s later, then their daemons up to 1 s to end by themselves, SIGTERM, and SIGKILL
// 1 s later. It prints "found PID process|daemon STATE NAME" for each one it found and
// "left PID" for each still there at its end (at most about 6 s later). with_starters: also the
// MPI starters (mpirun, mpiexec) that have the line among their arguments (-x NAME=VALUE), ended
// with the daemons.
std::string end_job_script(const std::string& environment_line, long spare_pid = 0,
                           bool with_starters = false);

// The sh script (one line, fit for hosts::guarded_command) that ends, with SIGKILL, the process
// `pid` on the host it runs on if it is a process of the job: of the calling user, of the host's
// own UTS namespace, its environment holding `environment_line`, and not an MPI daemon. A stopped
// process ends too. It prints "ended PID", "daemon PID" (left alone) or "none PID" (no such
// process of the job: gone already, or never one). For a lost process the library recovered from
// in place (in_place.h), which may still live, frozen.
std::string end_process_script(const std::string& environment_line, long pid);

// end_job_script for the processes carrying `marker` (kJobMarkerVariable).
std::string remote_stop_script(const std::string& marker);

// ssh's command line that runs, on host, the sh script it is given on its standard input: with
// the ssh configuration (none: the user's own), no password prompts, connect timeout in seconds.
std::vector<std::string> ssh_script_argv(const std::string& ssh_config, const std::string& host,
                                         const std::string& connect_timeout_s);

// The ssh commands of one stop, at most kParallel at a time, each bounded by timeout_s to
// connect and a few seconds more to finish.
// bsprun's line about the hosts in `unreachable` ("host (why)", as RemoteStop::unreachable()
// gives them): "could not reach ... to stop the job there; its processes there may still run".
std::string not_stopped_line(const std::vector<std::string>& unreachable);

class RemoteStop {
 public:
  RemoteStop(const RemoteJob& job, double timeout_s);
  ~RemoteStop();
  RemoteStop(const RemoteStop&) = delete;
  RemoteStop& operator=(const RemoteStop&) = delete;

  bool started() const { return started_; }
  // Before start(): leaves out a host known to be unreachable (lost), so as not to wait for it.
  void leave_out(const std::string& host);
  // Starts the first ssh commands (the others follow as these finish, in poll()).
  void start();
  // Reaps finished commands, ends those past their deadline, starts waiting ones; true when
  // every host is done (or nothing was started).
  bool poll();
  // poll() until every host is done.
  void finish();
  // "host (why)" for each host that could not be reached to stop the job there.
  const std::vector<std::string>& unreachable() const { return unreachable_; }
  // Of those, the hosts whose ssh could not connect or did not answer in time (host names): the
  // hosts that are gone, as opposed to a local failure to run ssh.
  const std::vector<std::string>& silent() const { return silent_; }

 private:
  struct Command {
    std::string host;
    pid_t pid = -1;
    int err_fd = -1;  // ssh's stderr
    std::string err;
    std::chrono::steady_clock::time_point deadline;
  };
  void launch(const std::string& host);
  void done(Command& command, int status, bool timed_out);

  static constexpr std::size_t kParallel = 32;
  RemoteJob job_;
  double timeout_s_;
  bool started_ = false;
  std::size_t next_ = 0;  // next host to start
  std::vector<Command> running_;
  std::vector<std::string> unreachable_;
  std::vector<std::string> silent_;
};

}  // namespace bspg::launcher

#endif
