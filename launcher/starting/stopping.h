// stopping.h - the stop signals and the job's processes on this machine, as run_job stops a job
// (stopping.cpp), and the clock runner.cpp's parts keep time by. Private to starting/.
#ifndef BSPG_LAUNCHER_STOPPING_H
#define BSPG_LAUNCHER_STOPPING_H

#include <sys/types.h>

#include <chrono>
#include <csignal>
#include <vector>

namespace bspg::launcher::runner_internal {

const int kForwardedSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

int take_pending_stop_signal();

void continue_if_stopped(pid_t pid);
// The default is here, where the callers in other files see it.
std::vector<pid_t> descendants_of(pid_t root, const std::vector<pid_t>& not_below = {});
void signal_all(const std::vector<pid_t>& pids, int sig);
void terminate_all(const std::vector<pid_t>& pids);

using Clock = std::chrono::steady_clock;

Clock::duration seconds(double s);

struct Leftovers {
  int stopped = 0;     // processes that had to be stopped
  int unkillable = 0;  // of those, still there 2 s after SIGKILL (e.g. stuck in the kernel)
};

Leftovers stop_leftovers(double grace_s, const std::vector<pid_t>& before);

}  // namespace bspg::launcher::runner_internal

#endif
