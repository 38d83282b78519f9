// cleanup.h - bsprun --clean-up --job-id ID [--hostfile FILE]: ending what a job left behind.
//
// A bsprun that was killed (SIGKILL) or whose machine went down cannot stop its job; the job's
// processes (every one has BSPG_JOB_ID=ID in its environment) and their MPI daemons may stay,
// frozen ones above all. --clean-up goes to this machine and to every host of the host file
// (over ssh, as the probes do: host keys checked, each host bounded) and ends them there with
// end_job_script (remote_stop.h): stopped ones continued, SIGTERM, SIGKILL after a grace, then
// their daemons. It says per host what it ended.
#ifndef BSPG_LAUNCHER_CLEANUP_H
#define BSPG_LAUNCHER_CLEANUP_H

#include <string>
#include <vector>

#include "options.h"

namespace bspg::launcher {

// What the clean-up found on one host.
struct CleanedHost {
  std::string host;      // "this machine" or the host file's name
  bool reached = false;  // false: `error` says why not
  std::string error;
  std::vector<std::string> ended;  // "ckpt_job (pid 812, stopped)", "orted (pid 800, MPI daemon)"
  std::vector<std::string> left;   // the same for those still there at the end
};

// Reads end_job_script's output ("found ..." and "left ..." lines) for `host`.
CleanedHost read_cleanup_output(const std::string& host, const std::string& output);

// bsprun's lines for one host: what it ended, that nothing was there, or why not.
std::vector<std::string> cleanup_lines(const std::string& job_id, const CleanedHost& host);

// Runs the clean-up of job opt.job_id here and on opt.hostfile's hosts, printing its lines.
// 0 when nothing of the job is left anywhere it looked; kExitLaunchFailed when a host could not
// be reached or a process did not end (the last line names them).
int clean_up_job(const Options& opt);

}  // namespace bspg::launcher

#endif
