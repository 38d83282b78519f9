// runner.cpp - fork/exec of mpirun and signal forwarding.
//
// Interactive (stdin is our terminal and we are its foreground job): mpirun stays in our
// process group, so Ctrl-C, Ctrl-\ and hangups from the terminal reach mpirun directly (and
// bsprun notes them); mpirun can read the terminal. Otherwise mpirun gets a process group of
// its own, and signals sent to bsprun are passed to that group.
#include "runner.h"

#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstring>
#include <ctime>

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace bspg::launcher {
namespace {

const int kForwardedSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

void on_child_signal(int) {}  // only there so SIGCHLD is never discarded

}  // namespace

RunResult run_job(const std::vector<std::string>& argv, double time_limit_s, double kill_grace_s) {
  RunResult result;
  const bool interactive = isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp();

  sigset_t wanted, previous;
  sigemptyset(&wanted);
  for (int sig : kForwardedSignals) sigaddset(&wanted, sig);
  sigaddset(&wanted, SIGCHLD);
  struct sigaction chld {}, old_chld {};
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
    sigprocmask(SIG_SETMASK, &previous, nullptr);
    sigaction(SIGCHLD, &old_chld, nullptr);
    return result;
  }
  if (!interactive) setpgid(pid, pid);  // both sides set it: no race with signals sent right after fork
  // Whom to signal: mpirun's own group, or (sharing ours) mpirun alone.
  const pid_t target = interactive ? pid : -pid;

  int exec_errno = 0;
  ssize_t got = read(error_pipe[0], &exec_errno, sizeof exec_errno);
  close(error_pipe[0]);
  if (got == static_cast<ssize_t>(sizeof exec_errno)) {
    result.started = false;
    result.error = "cannot run " + argv[0] + ": " + std::strerror(exec_errno);
  }

  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const bool limited = time_limit_s > 0;
  const auto deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(time_limit_s));
  bool stop_requested = false;
  Clock::time_point kill_at{};
  int status = 0;

  for (;;) {
    pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    auto now = Clock::now();
    if (limited && !result.timed_out && now >= deadline) {
      result.timed_out = true;
      kill(target, SIGTERM);
      if (!stop_requested) { stop_requested = true; kill_at = now + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(kill_grace_s)); }
    }
    if (stop_requested && now >= kill_at) kill(target, SIGKILL);

    // Sleep until a signal arrives, or at most a short while (deadline checks).
    struct timespec wait_for { 0, 200 * 1000 * 1000 };
    siginfo_t info;
    int sig = sigtimedwait(&wanted, &info, &wait_for);
    if (sig > 0 && sig != SIGCHLD) {
      // A signal from the terminal went to the whole foreground group, mpirun included;
      // passing it on again would make mpirun see it twice (its "force quit").
      if (!(interactive && info.si_code == SI_KERNEL)) kill(target, sig);
      if (!result.forwarded_signal) result.forwarded_signal = sig;
      if (!stop_requested) {
        stop_requested = true;
        kill_at = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(kill_grace_s));
      }
    }
  }

  sigprocmask(SIG_SETMASK, &previous, nullptr);
  sigaction(SIGCHLD, &old_chld, nullptr);

  if (WIFEXITED(status)) result.exit_status = WEXITSTATUS(status);
  else if (WIFSIGNALED(status)) result.exit_status = 128 + WTERMSIG(status);
  return result;
}

}  // namespace bspg::launcher
