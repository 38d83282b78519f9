// runner.cpp - fork/exec of mpirun and signal forwarding.
//
// Interactive (stdin is our terminal and we are its foreground job): mpirun stays in our
// process group, so Ctrl-C, Ctrl-\ and hangups from the terminal reach mpirun directly (and
// bsprun notes them); mpirun can read the terminal. Otherwise mpirun gets a process group of
// its own, and signals sent to bsprun are passed to that group.
//
// Open MPI puts every local rank in a process group of its own, so a signal to mpirun's group
// does not reach them. bsprun is therefore a child subreaper: ranks that outlive mpirun become
// bsprun's children, and whatever of the job is still alive once mpirun is gone is stopped and
// reaped here. A stop request escalates: the signal, then SIGTERM to every process of the job
// (mpirun's descendants included) a third of the grace period later, then SIGKILL.
#include "runner.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <vector>

namespace bspg::launcher {
namespace {

const int kForwardedSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

void on_child_signal(int) {}  // only there so SIGCHLD is never discarded

// Parent of every process, read from /proc/<pid>/stat (field 4, after the parenthesised name).
std::multimap<pid_t, pid_t> children_by_parent() {
  std::multimap<pid_t, pid_t> tree;
  DIR* proc = opendir("/proc");
  if (!proc) return tree;
  while (dirent* entry = readdir(proc)) {
    char* end = nullptr;
    long pid = std::strtol(entry->d_name, &end, 10);
    if (pid <= 0 || *end != '\0') continue;
    std::string path = std::string("/proc/") + entry->d_name + "/stat";
    FILE* f = std::fopen(path.c_str(), "r");
    if (!f) continue;
    char buf[512];
    size_t n = std::fread(buf, 1, sizeof buf - 1, f);
    std::fclose(f);
    buf[n] = '\0';
    const char* close_paren = std::strrchr(buf, ')');
    char state = 0;
    long ppid = 0;
    // Zombies have finished; they only wait to be reaped.
    if (close_paren && std::sscanf(close_paren + 1, " %c %ld", &state, &ppid) == 2 && state != 'Z')
      tree.emplace(static_cast<pid_t>(ppid), static_cast<pid_t>(pid));
  }
  closedir(proc);
  return tree;
}

// Every live descendant of root (not root itself).
std::vector<pid_t> descendants_of(pid_t root) {
  auto tree = children_by_parent();
  std::vector<pid_t> found;
  std::vector<pid_t> todo{root};
  while (!todo.empty()) {
    pid_t parent = todo.back();
    todo.pop_back();
    auto range = tree.equal_range(parent);
    for (auto it = range.first; it != range.second; ++it) {
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

using Clock = std::chrono::steady_clock;

Clock::duration seconds(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

// After mpirun is gone: stop and reap what of the job is left (orphaned ranks became our
// children because we are a subreaper). mpirun may exit while ranks it already signalled are
// still dying, so they get 0.5 s to go by themselves; then SIGTERM, and SIGKILL grace_s later.
// Returns how many processes had to be stopped.
int stop_leftovers(double grace_s) {
  const pid_t self = getpid();
  const auto terminate_at = Clock::now() + seconds(0.5);
  Clock::time_point kill_at{};
  int stopped = 0;
  for (;;) {
    while (waitpid(-1, nullptr, WNOHANG) > 0) {
    }
    const auto left = descendants_of(self);
    if (left.empty()) return stopped;
    const auto now = Clock::now();
    if (stopped == 0 && now >= terminate_at) {
      stopped = static_cast<int>(left.size());
      terminate_all(left);
      kill_at = now + seconds(grace_s);
    }
    if (stopped > 0 && now >= kill_at) signal_all(left, SIGKILL);
    struct timespec pause {
      0, 20 * 1000 * 1000
    };
    nanosleep(&pause, nullptr);
  }
}

}  // namespace

RunResult run_job(const std::vector<std::string>& argv, double time_limit_s, double kill_grace_s) {
  RunResult result;
  const bool interactive = isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp();

  sigset_t wanted, previous;
  sigemptyset(&wanted);
  for (int sig : kForwardedSignals) sigaddset(&wanted, sig);
  sigaddset(&wanted, SIGCHLD);
  struct sigaction chld {
  }, old_chld{};
  chld.sa_handler = on_child_signal;
  sigaction(SIGCHLD, &chld, &old_chld);
  sigprocmask(SIG_BLOCK, &wanted, &previous);

  // The exec error travels back through a close-on-exec pipe: EOF means exec worked.
  int error_pipe[2];
  if (pipe2(error_pipe, O_CLOEXEC) != 0) {
    result.started = false;
    result.error = std::string("pipe: ") + std::strerror(errno);
    sigprocmask(SIG_SETMASK, &previous, nullptr);
    return result;
  }
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) {
    if (!interactive) setpgid(0, 0);
    // If bsprun dies without a chance to forward anything, the job still stops.
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(128 + SIGTERM);
    sigaction(SIGCHLD, &old_chld, nullptr);
    sigprocmask(SIG_SETMASK, &previous, nullptr);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    int err = errno;
    ssize_t ignored = write(error_pipe[1], &err, sizeof err);
    (void)ignored;
    _exit(127);
  }
  close(error_pipe[1]);
  if (pid < 0) {
    result.started = false;
    result.error = std::string("fork: ") + std::strerror(errno);
    close(error_pipe[0]);
    prctl(PR_SET_CHILD_SUBREAPER, 0);
    sigprocmask(SIG_SETMASK, &previous, nullptr);
    sigaction(SIGCHLD, &old_chld, nullptr);
    return result;
  }
  if (!interactive)
    setpgid(pid, pid);  // both sides set it: no race with signals sent right after fork
  // Whom to signal: mpirun's own group, or (sharing ours) mpirun alone.
  const pid_t target = interactive ? pid : -pid;

  int exec_errno = 0;
  ssize_t got = read(error_pipe[0], &exec_errno, sizeof exec_errno);
  close(error_pipe[0]);
  if (got == static_cast<ssize_t>(sizeof exec_errno)) {
    result.started = false;
    result.error = "cannot run " + argv[0] + ": " + std::strerror(exec_errno);
  }

  const bool limited = time_limit_s > 0;
  const auto deadline = Clock::now() + seconds(time_limit_s);
  const auto grace = seconds(kill_grace_s);
  bool stop_requested = false;
  bool job_terminated = false;
  Clock::time_point terminate_at{}, kill_at{};
  int status = 0;
  auto request_stop = [&](Clock::time_point now) {
    if (stop_requested) return;
    stop_requested = true;
    terminate_at = now + grace / 3;
    kill_at = now + grace;
  };

  for (;;) {
    pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    auto now = Clock::now();
    if (limited && !result.timed_out && now >= deadline) {
      result.timed_out = true;
      kill(target, SIGTERM);
      request_stop(now);
    }
    // mpirun has not wound the job down by itself: stop every process of it directly.
    if (stop_requested && !job_terminated && now >= terminate_at) {
      job_terminated = true;
      terminate_all(descendants_of(pid));
      kill(target, SIGTERM);
    }
    if (stop_requested && now >= kill_at) {
      signal_all(descendants_of(pid), SIGKILL);
      kill(target, SIGKILL);
    }

    // Sleep until a signal arrives, or at most a short while (deadline checks).
    struct timespec wait_for {
      0, 200 * 1000 * 1000
    };
    siginfo_t info;
    int sig = sigtimedwait(&wanted, &info, &wait_for);
    if (sig > 0 && sig != SIGCHLD) {
      // A signal from the terminal went to the whole foreground group, mpirun included;
      // passing it on again would make mpirun see it twice (its "force quit").
      if (!(interactive && info.si_code == SI_KERNEL)) kill(target, sig);
      if (!result.forwarded_signal) result.forwarded_signal = sig;
      request_stop(Clock::now());
    }
  }
  // Ranks that outlived mpirun (it crashed, or was killed) are ours now: stop them.
  result.leftovers_stopped = stop_leftovers(stop_requested ? 1.0 : kill_grace_s / 3);
  prctl(PR_SET_CHILD_SUBREAPER, 0);

  sigprocmask(SIG_SETMASK, &previous, nullptr);
  sigaction(SIGCHLD, &old_chld, nullptr);

  if (WIFEXITED(status))
    result.exit_status = WEXITSTATUS(status);
  else if (WIFSIGNALED(status))
    result.exit_status = 128 + WTERMSIG(status);
  return result;
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
