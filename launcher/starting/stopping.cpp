// stopping.cpp - stopping a job: the stop signals (held between runs, taken, ended by), the job's
// processes on this machine (found, signalled, those left after mpirun stopped), a run's exit
// status.
#include "stopping.h"

#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "options.h"
#include "runner.h"

namespace bspg::launcher {
using namespace runner_internal;
namespace {

// The stop signal bsprun ends by once it has cleaned up (exit_status_of).
int signal_to_end_by = 0;

sigset_t stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : kForwardedSignals) sigaddset(&set, sig);
  return set;
}

// State (R, S, T, Z, ...) and parent of a process, from /proc/<pid>/stat (fields 3 and 4, after
// the parenthesised name); false when it is gone.
bool read_stat(const std::string& pid, char& state, long& ppid) {
  const std::string path = "/proc/" + pid + "/stat";
  FILE* f = std::fopen(path.c_str(), "r");
  if (!f) return false;
  char buf[512];
  size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = '\0';
  const char* close_paren = std::strrchr(buf, ')');
  return close_paren && std::sscanf(close_paren + 1, " %c %ld", &state, &ppid) == 2;
}

// Parent of every process.
std::multimap<pid_t, pid_t> children_by_parent() {
  std::multimap<pid_t, pid_t> tree;
  DIR* proc = opendir("/proc");
  if (!proc) return tree;
  while (dirent* entry = readdir(proc)) {
    char* end = nullptr;
    long pid = std::strtol(entry->d_name, &end, 10);
    if (pid <= 0 || *end != '\0') continue;
    char state = 0;
    long ppid = 0;
    // Zombies have finished; they only wait to be reaped.
    if (read_stat(entry->d_name, state, ppid) && state != 'Z')
      tree.emplace(static_cast<pid_t>(ppid), static_cast<pid_t>(pid));
  }
  closedir(proc);
  return tree;
}

}  // namespace

namespace runner_internal {

// A stop signal that is pending (held by hold_stop_signals and blocked now), taken; 0: none.
int take_pending_stop_signal() {
  sigset_t pending;
  sigemptyset(&pending);
  if (sigpending(&pending) != 0) return 0;
  for (int sig : kForwardedSignals) {
    if (!sigismember(&pending, sig)) continue;
    sigset_t only;
    sigemptyset(&only);
    sigaddset(&only, sig);
    const struct timespec now { 0, 0 };
    if (sigtimedwait(&only, nullptr, &now) == sig) return sig;
  }
  return 0;
}

// SIGCONT to pid if it is stopped (a running mpirun would pass SIGCONT on to the job and say so).
void continue_if_stopped(pid_t pid) {
  char state = 0;
  long ppid = 0;
  if (read_stat(std::to_string(pid), state, ppid) && state == 'T') kill(pid, SIGCONT);
}

// Every live descendant of root (not root itself), but those below the children in `not_below`.
std::vector<pid_t> descendants_of(pid_t root, const std::vector<pid_t>& not_below) {
  auto tree = children_by_parent();
  std::vector<pid_t> found;
  std::vector<pid_t> todo{root};
  while (!todo.empty()) {
    pid_t parent = todo.back();
    todo.pop_back();
    auto range = tree.equal_range(parent);
    for (auto it = range.first; it != range.second; ++it) {
      if (parent == root &&
          std::find(not_below.begin(), not_below.end(), it->second) != not_below.end())
        continue;
      found.push_back(it->second);
      todo.push_back(it->second);
    }
  }
  return found;
}

void signal_all(const std::vector<pid_t>& pids, int sig) {
  for (pid_t p : pids) kill(p, sig);
}

// SIGTERM, with SIGCONT first so that stopped processes act on it.
void terminate_all(const std::vector<pid_t>& pids) {
  signal_all(pids, SIGCONT);
  signal_all(pids, SIGTERM);
}

Clock::duration seconds(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

// After mpirun is gone: stop and reap what of the job is left (orphaned ranks became our
// children because we are a subreaper). mpirun may exit while ranks it already signalled are
// still dying, so they get 0.5 s to go by themselves; then SIGCONT and SIGTERM, SIGKILL grace_s
// later, and 2 s after that bsprun gives up on what is still there. Children bsprun had before
// the job (`before`: e.g. a shell's process substitution reading its stderr) are not the job's.
Leftovers stop_leftovers(double grace_s, const std::vector<pid_t>& before) {
  const pid_t self = getpid();
  const auto terminate_at = Clock::now() + seconds(0.5);
  Clock::time_point kill_at{}, give_up_at{};
  Leftovers result;
  for (;;) {
    while (waitpid(-1, nullptr, WNOHANG) > 0) {
    }
    const auto left = descendants_of(self, before);
    if (left.empty()) return result;
    const auto now = Clock::now();
    if (result.stopped == 0 && now >= terminate_at) {
      result.stopped = static_cast<int>(left.size());
      terminate_all(left);
      kill_at = now + seconds(grace_s);
      give_up_at = kill_at + seconds(2);
    }
    if (result.stopped > 0 && now >= kill_at) signal_all(left, SIGKILL);
    if (result.stopped > 0 && now >= give_up_at) {
      result.unkillable = static_cast<int>(left.size());
      return result;
    }
    struct timespec pause {
      0, 20 * 1000 * 1000
    };
    nanosleep(&pause, nullptr);
  }
}

}  // namespace runner_internal

int exit_status_of(const RunResult& r, double time_limit_s) {
  if (!r.started) {
    std::cerr << "bsprun: " << r.error << "\n";
    return kExitLaunchFailed;
  }
  if (r.leftovers_stopped > 0)
    std::cerr << "bsprun: mpirun exited with " << r.leftovers_stopped
              << " process(es) of the job still running; bsprun stopped them\n";
  if (r.timed_out) {
    std::cerr << "bsprun: time limit of " << time_limit_s << " s reached; the job was stopped\n";
    return kExitTimeLimit;
  }
  // Stopped on request (Ctrl-C, kill): end as if killed by that signal (status 128+signal),
  // so that a script running bsprun stops as well; also when the starter says 0, as MPICH's
  // Hydra does in about a third of the runs it passed a SIGTERM on to.
  // bsprun ends by it in main, after its files are removed and its locks released.
  if (r.forwarded_signal) {
    signal_to_end_by = r.forwarded_signal;
    return 128 + r.forwarded_signal;
  }
  if (!r.lost.empty()) return kExitLaunchFailed;  // said when it was noticed
  return r.exit_status;
}

void hold_stop_signals() {
  const sigset_t held = stop_signals();
  pthread_sigmask(SIG_BLOCK, &held, nullptr);
}

int pending_stop_signal() {
  sigset_t pending;
  sigemptyset(&pending);
  if (sigpending(&pending) != 0) return 0;
  for (int sig : kForwardedSignals)
    if (sigismember(&pending, sig)) return sig;
  return 0;
}

int signal_to_end_with() {
  if (signal_to_end_by == 0) signal_to_end_by = take_pending_stop_signal();
  return signal_to_end_by;
}

void exit_as_killed_by(int sig) {
  std::fflush(nullptr);
  if (sig != SIGQUIT) {
    std::signal(sig, SIG_DFL);
    sigset_t only;
    sigemptyset(&only);
    sigaddset(&only, sig);
    sigprocmask(SIG_UNBLOCK, &only, nullptr);
    raise(sig);
  }
  _exit(128 + sig);  // SIGQUIT, or the signal did not end us
}

}  // namespace bspg::launcher
