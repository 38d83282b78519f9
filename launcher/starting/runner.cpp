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
// (mpirun's descendants included) a third of the grace period later, then SIGKILL. Stopped
// (SIGSTOP) processes are continued first, and on the grid path the job's processes on the other
// hosts are stopped over ssh as well (remote_stop.h), so that a frozen member does not keep the
// job alive. mpirun's stderr passes through MpirunStderr, its stdout through MpirunStdout
// (mpirun_messages.h).
#include "runner.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstring>
#include <iostream>
#include <optional>
#include <string_view>
#include <vector>

#include "mpistart.h"
#include "options.h"  // kExitLaunchFailed
#include "output_relay.h"
#include "say.h"
#include "stopping.h"

namespace bspg::launcher {
using namespace runner_internal;
namespace {

void on_child_signal(int) {}  // only there so SIGCHLD is never discarded

JobOutput job_output;  // set_job_output

// "mpirun" for /usr/bin/mpirun.openmpi: the name users know the starter by.
std::string starter_name(const std::string& path) {
  std::string name = path.substr(path.find_last_of('/') + 1);
  if (const std::size_t dot = name.find('.'); dot != std::string::npos && dot > 0) name.erase(dot);
  return name;
}

// mpirun's stderr or stdout, read without blocking.
class PipeReader {
 public:
  explicit PipeReader(int fd) : fd_(fd) {
    if (fd_ >= 0) fcntl(fd_, F_SETFL, O_NONBLOCK);
  }
  ~PipeReader() {
    if (fd_ >= 0) close(fd_);
  }
  PipeReader(const PipeReader&) = delete;
  PipeReader& operator=(const PipeReader&) = delete;

  int fd() const { return fd_; }
  Clock::time_point last_data() const { return last_data_; }

  // Hands what is there to `take`, at most max_reads pieces (so that a job that writes without
  // a pause does not keep bsprun from its other work); at end of stream the descriptor is closed.
  template <typename Take>
  void read_some(Take&& take, int max_reads = INT_MAX) {
    char buffer[65536];
    for (int reads = 0; fd_ >= 0 && reads < max_reads; ++reads) {
      const ssize_t n = read(fd_, buffer, sizeof buffer);
      if (n > 0) {
        last_data_ = Clock::now();
        take(std::string_view(buffer, static_cast<std::size_t>(n)));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n == 0) {
        close(fd_);
        fd_ = -1;
      }
      return;
    }
  }
  // Closes it early: the writer then gets EPIPE (SIGPIPE) as it would have from where bsprun's
  // own output went.
  void close_early() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
  Clock::time_point last_data_ = Clock::now();
};

}  // namespace

void set_job_output(const JobOutput& output) { job_output = output; }

RunResult run_job(const std::vector<std::string>& argv, double time_limit_s, double kill_grace_s,
                  const RemoteJob& remote, const JobWatch& watch) {
  RunResult result;
  const bool interactive = isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp();

  sigset_t wanted, previous;
  sigemptyset(&wanted);
  for (int sig : kForwardedSignals) sigaddset(&wanted, sig);
  sigaddset(&wanted, SIGCHLD);
  struct sigaction chld {
  }, old_chld{}, ignore_pipe{}, old_pipe{};
  chld.sa_handler = on_child_signal;
  sigaction(SIGCHLD, &chld, &old_chld);
  // Writing to a stderr that is gone must not kill bsprun before it has stopped the job.
  ignore_pipe.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignore_pipe, &old_pipe);
  sigprocmask(SIG_BLOCK, &wanted, &previous);
  const auto restore_signals = [&] {
    sigprocmask(SIG_SETMASK, &previous, nullptr);
    sigaction(SIGCHLD, &old_chld, nullptr);
    sigaction(SIGPIPE, &old_pipe, nullptr);
  };
  // mpirun gets the stop signals unblocked, whatever bsprun holds (hold_stop_signals).
  sigset_t child_mask = previous;
  for (int sig : kForwardedSignals) sigdelset(&child_mask, sig);

  // Asked to stop before the run began (between runs): nothing is started.
  if (const int sig = take_pending_stop_signal(); sig != 0) {
    result.forwarded_signal = sig;
    result.exit_status = 128 + sig;
    restore_signals();
    return result;
  }

  // The exec error travels back through a close-on-exec pipe: EOF means exec worked.
  int error_pipe[2], stderr_pipe[2], stdout_pipe[2];
  const JobOutput output = job_output;
  const int signal_fd = signalfd(-1, &wanted, SFD_CLOEXEC | SFD_NONBLOCK);
  if (signal_fd < 0 || pipe2(error_pipe, O_CLOEXEC) != 0) {
    result.started = false;
    result.error = std::string("cannot start mpirun: ") + std::strerror(errno);
    if (signal_fd >= 0) close(signal_fd);
    restore_signals();
    return result;
  }
  if (pipe2(stderr_pipe, O_CLOEXEC) != 0)
    stderr_pipe[0] = stderr_pipe[1] = -1;  // stderr then passes as is
  if (pipe2(stdout_pipe, O_CLOEXEC) != 0)
    stdout_pipe[0] = stdout_pipe[1] = -1;  // so does stdout
  else
    fcntl(stdout_pipe[0], F_SETPIPE_SZ, 1 << 20);  // fewer switches to bsprun for a large output
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  pid_t parent = getpid();
  const std::vector<pid_t> children_before = descendants_of(parent);
  pid_t pid = fork();
  if (pid == 0) {
    if (!interactive) setpgid(0, 0);
    // If bsprun dies without a chance to forward anything, the job still stops.
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(128 + SIGTERM);
    sigaction(SIGCHLD, &old_chld, nullptr);
    signal(SIGPIPE, SIG_DFL);
    sigprocmask(SIG_SETMASK, &child_mask, nullptr);
    if (stderr_pipe[1] >= 0) dup2(stderr_pipe[1], STDERR_FILENO);
    if (stdout_pipe[1] >= 0) dup2(stdout_pipe[1], STDOUT_FILENO);
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
  if (stderr_pipe[1] >= 0) close(stderr_pipe[1]);
  if (stdout_pipe[1] >= 0) close(stdout_pipe[1]);
  MpirunStderr filter(remote.address_names);
  if (watch.quiet_losses) filter.quiet_losses();
  if (watch.starter_may_wait_for_ever) filter.starter_waits_on_failure();
  MpirunStdout out_filter(output.separation.how == OutputSeparation::kFiles);
  OutputRelay relay(output, filter, out_filter);
  PipeReader err_pipe(stderr_pipe[0]);
  PipeReader out_pipe(stdout_pipe[0]);
  const auto from_stderr = [&](std::string_view bytes) { relay.from_stderr(bytes); };
  const auto from_stdout = [&](std::string_view bytes) { relay.from_stdout(bytes); };
  // About 1 MiB of stdout at a time, then the loop's other work.
  const auto read_stdout = [&] {
    out_pipe.read_some(from_stdout, 16);
    if (relay.stdout_gone()) out_pipe.close_early();
  };
  if (pid < 0) {
    result.started = false;
    result.error = std::string("fork: ") + std::strerror(errno);
    close(error_pipe[0]);
    close(signal_fd);
    prctl(PR_SET_CHILD_SUBREAPER, 0);
    restore_signals();
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
  // Hosts that do not answer within a third of the grace period are reported, not waited for.
  RemoteStop remote_stop(remote, std::min(5.0, kill_grace_s / 3));
  bool stop_requested = false;
  bool job_terminated = false;
  bool silent_host_lost = false;  // the watch stopped the job for a host that does not answer
  bool ended_leaving_lost = false;  // the job ended, but mpirun waits for a lost host (above)
  Clock::time_point terminate_at{}, kill_at{};
  int status = 0;
  Clock::time_point stop_requested_at{};
  auto request_stop = [&](Clock::time_point now, bool host_lost = false) {
    if (stop_requested) return;
    stop_requested = true;
    stop_requested_at = now;
    terminate_at = now + grace / 3;
    kill_at = now + grace;
    // With a host lost, mpirun waits for a daemon that will not answer: end it sooner.
    // The other hosts' processes are stopped over ssh meanwhile (remote_stop.h).
    if (host_lost) {
      terminate_at = std::min(terminate_at, now + std::chrono::milliseconds(500));
      kill_at = std::min(kill_at, now + std::chrono::milliseconds(1500));
    }
    // A stopped (SIGSTOP) mpirun, daemon or rank would not act on the signal until continued.
    continue_if_stopped(pid);
    signal_all(descendants_of(pid), SIGCONT);
    filter.stopping();
    if (!remote.hosts.empty()) remote_stop.start();
  };

  // The library's recoveries in place, each passed to the watch once.
  std::size_t recoveries_told = 0;
  const auto tell_recoveries = [&] {
    for (; recoveries_told < filter.recoveries().size(); ++recoveries_told)
      if (watch.recovered) watch.recovered(filter.recoveries()[recoveries_told]);
  };
  std::size_t gone_told = 0;
  bool refusal_told = false;
  const auto tell_daemons_gone = [&] {
    for (; gone_told < filter.daemons_gone().size(); ++gone_told)
      if (watch.daemon_gone) watch.daemon_gone(filter.daemons_gone()[gone_told]);
    if (!refusal_told && filter.no_recovery()) {
      refusal_told = true;
      if (watch.not_recovered) watch.not_recovered();
    }
  };
  bool files_growing = false;
  bool stopped_for_start_failure = false;
  bool stopped_after_crash = false;
  std::optional<Clock::time_point> crash_said_at;
  for (;;) {
    pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    auto now = Clock::now();
    if (limited && !result.timed_out && now >= deadline) {
      result.timed_out = true;
      kill(target, SIGTERM);
      request_stop(now);
    }
    if (watch.lost && !stop_requested) {
      if (std::string why = watch.lost(); !why.empty()) {
        result.lost = why;
        write_all(STDERR_FILENO, "bsprun: lost " + why + "; stopping the job\n");
        if (const std::string host = watch.lost_host ? watch.lost_host() : ""; !host.empty()) {
          remote_stop.leave_out(host);
          silent_host_lost = true;
        }
        // Other hosts whose processes were named lost do not answer either.
        if (watch.hosts_left)
          for (const std::string& host : watch.hosts_left()) {
            remote_stop.leave_out(host);
            silent_host_lost = true;
          }
        kill(target, SIGTERM);
        request_stop(now, true);
      }
    }
    // mpirun has not wound the job down by itself: stop every process of it here directly
    // (its ssh connections included, so that mpirun gives up on daemons that do not answer).
    if (stop_requested && !job_terminated && now >= terminate_at) {
      job_terminated = true;
      terminate_all(descendants_of(pid));
    }
    const bool stopped_on_hosts = remote_stop.poll();
    // mpirun waits for daemons on hosts that did not answer bsprun either: nothing will come.
    if (job_terminated && stopped_on_hosts && !remote_stop.unreachable().empty())
      kill_at = std::min(kill_at, terminate_at + std::chrono::seconds(1));
    // A host that went silent (frozen) keeps mpirun waiting for its daemon for ever: once every
    // other host has stopped the job over ssh, nothing else is left to wait for.
    if (silent_host_lost && remote_stop.started() && stopped_on_hosts) {
      if (!job_terminated) {
        job_terminated = true;
        terminate_all(descendants_of(pid));
      }
      kill_at = std::min(kill_at, now + std::chrono::milliseconds(100));
    }
    if (stop_requested && now >= kill_at) {
      signal_all(descendants_of(pid), SIGKILL);
      kill(pid, SIGKILL);
    }

    // Sleep until a signal or output arrives, or at most a short while (deadline checks; output
    // files are looked at more often, and at once again while they grow).
    pollfd fds[3] = {
        {signal_fd, POLLIN, 0}, {err_pipe.fd(), POLLIN, 0}, {out_pipe.fd(), POLLIN, 0}};
    const int wait_ms = files_growing                                       ? 0
                        : output.separation.how == OutputSeparation::kFiles ? 50
                                                                            : 200;
    ::poll(fds, 3, wait_ms);
    if (fds[1].revents & (POLLIN | POLLHUP)) err_pipe.read_some(from_stderr);
    if (fds[2].revents & (POLLIN | POLLHUP | POLLERR)) read_stdout();
    // Every living process of the job has ended (the library's last line) while the starter waits
    // for processes lost on a host that does not answer, which it will never hear from: the job
    // is over. The processes leave within moments; their daemons go with mpirun.
    if (filter.ended_without_finalizing() && !stop_requested && watch.hosts_left) {
      if (const std::vector<std::string> left = watch.hosts_left(); !left.empty()) {
        ended_leaving_lost = true;
        for (const std::string& host : left) {
          remote_stop.leave_out(host);  // ssh would only wait out its timeout there
          silent_host_lost = true;      // mpirun waits for its daemon: ended sooner
          result.not_stopped.push_back(host + " (it stopped answering while the job ran)");
        }
        request_stop(Clock::now(), true);
      }
    }
    const bool quiet_for_a_second = Clock::now() - err_pipe.last_data() > std::chrono::seconds(1);
    if (watch.starter_may_wait_for_ever && !stop_requested &&
        (filter.failure().exit_status != 0 || (filter.failure_pending() && quiet_for_a_second))) {
      stopped_for_start_failure = true;
      if (filter.failure().host_lost) remote_stop.leave_out(filter.failure().host);
      kill(target, SIGTERM);
      request_stop(Clock::now(), true);
    }
    // A process said it crashed. Its abort normally ends the job at once, but a starter may
    // leave it running: MPICH 4.2's Hydra when that process was on another host (the others wait
    // in their next sync), Open MPI 5 in master mode while the others compute (for a minute and
    // more). The job is stopped when it has not ended 2 s after the line.
    if (filter.crash_signal() != 0 && !crash_said_at) crash_said_at = Clock::now();
    if (!stop_requested && crash_said_at &&
        Clock::now() - *crash_said_at > std::chrono::seconds(2)) {
      stopped_after_crash = true;
      kill(target, SIGTERM);
      request_stop(Clock::now());
    }
    files_growing = relay.poll(Clock::now());
    tell_recoveries();
    tell_daemons_gone();
    // Held-back messages go out when nothing followed them for a second.
    if (err_pipe.fd() >= 0 && Clock::now() - err_pipe.last_data() > std::chrono::seconds(1))
      relay.flush_stderr();
    // The starter said something before every process started, and started none since: it
    // waits for ever (Open MPI 4.1 after a node name it refuses, say). Its words, in one line.
    if (!stop_requested && relay.start_overdue(Clock::now())) {
      result.start_overdue = true;
      const std::string said = relay.held_in_one_line();
      write_all(STDERR_FILENO,
                "bsprun: the job did not start: " + starter_name(argv.front()) + " said \"" + said +
                    "\", then started " + std::to_string(relay.processes_started()) + " of " +
                    std::to_string(output.processes_to_start) + " processes within " +
                    seconds_text(output.start_bound_s) + " s (--host-timeout)\n");
      kill(target, SIGTERM);
      request_stop(Clock::now(), true);
    }
    if (out_pipe.fd() >= 0 && Clock::now() - out_pipe.last_data() > std::chrono::seconds(1))
      relay.flush_stdout();
    signalfd_siginfo info{};
    while (read(signal_fd, &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
      const int sig = static_cast<int>(info.ssi_signo);
      if (sig == SIGCHLD) continue;
      // A signal from the terminal went to the whole foreground group, mpirun included;
      // passing it on again would make mpirun see it twice (its "force quit"). mpirun gets
      // one signal from bsprun at most; a stop escalates by other means.
      const bool from_terminal = interactive && info.ssi_code == SI_KERNEL;
      if (!from_terminal && !stop_requested) kill(target, sig);
      if (!result.forwarded_signal) result.forwarded_signal = sig;
      request_stop(Clock::now());
    }
  }
  // A failed run may leave processes and daemons on the hosts (mpirun crashed, or lost its
  // grip on them): they are ended as after a stop.
  const bool failed = !WIFEXITED(status) || WEXITSTATUS(status) != 0;
  if (failed && !remote.hosts.empty() && !remote_stop.started()) remote_stop.start();
  // The hosts first (their ssh commands are our children too), then ranks that outlived
  // mpirun here (it crashed, or was killed): they are ours now.
  remote_stop.finish();
  result.remote_stop_ran = remote_stop.started();
  for (const std::string& host : remote_stop.unreachable()) result.not_stopped.push_back(host);
  result.silent_hosts = remote_stop.silent();
  const Leftovers leftovers =
      stop_leftovers(stop_requested ? 1.0 : kill_grace_s / 3, children_before);
  result.leftovers_stopped = leftovers.stopped;
  result.leftovers_unkillable = leftovers.unkillable;
  // After mpirun and every process of the job here are gone: the rest, waiting at most 2 s for
  // the pipes to end.
  const auto drain_until = Clock::now() + std::chrono::seconds(2);
  while ((err_pipe.fd() >= 0 || out_pipe.fd() >= 0) && Clock::now() < drain_until) {
    pollfd pfds[2] = {{err_pipe.fd(), POLLIN, 0}, {out_pipe.fd(), POLLIN, 0}};
    ::poll(pfds, 2, 50);
    err_pipe.read_some(from_stderr);
    read_stdout();
  }
  relay.finish();
  tell_recoveries();
  tell_daemons_gone();
  // A host that could not be reached is the cause of a failure the starter did not place.
  std::vector<std::string> unreachable = remote_stop.unreachable();
  if (unreachable.empty() && filter.failure_pending() && watch.unreachable)
    unreachable = watch.unreachable();
  if (const std::string said = filter.hosts_gone(unreachable); !said.empty()) {
    write_all(STDERR_FILENO, said);
    const std::string host = filter.failure().host;
    auto& listed = result.not_stopped;
    listed.erase(std::remove_if(listed.begin(), listed.end(),
                                [&host](const std::string& entry) {
                                  return entry.rfind(host + " (", 0) == 0;
                                }),
                 listed.end());
  }
  write_all(STDERR_FILENO, filter.finish());
  if (stop_requested)
    result.stopping_s = std::chrono::duration<double>(Clock::now() - stop_requested_at).count();
  result.start_failure = filter.failure();
  result.death = filter.death();
  result.crash_pid = filter.crash_pid();
  result.stopped_after_checkpoint = filter.stopped_after_checkpoint();
  result.checkpoint_not_written = filter.checkpoint_not_written();
  result.whole_checkpoint = filter.whole_checkpoint();
  result.slurm_starter_refused = filter.slurm_starter_refused();
  result.held_consequences = filter.held_consequences();
  result.checkpoint_not_written_on = filter.checkpoint_not_written_on();
  result.recoveries = filter.recoveries();
  result.no_recovery = filter.no_recovery();
  close(signal_fd);
  prctl(PR_SET_CHILD_SUBREAPER, 0);
  restore_signals();

  if (WIFEXITED(status))
    result.exit_status = WEXITSTATUS(status);
  else if (WIFSIGNALED(status))
    result.exit_status = 128 + (result.mpirun_signal = WTERMSIG(status));
  // A lost host fails the job even where the starter then says 0 (Open MPI 5's does after it
  // "lost communication with a remote daemon").
  const bool lost_yet_zero =
      result.exit_status == 0 && result.start_failure.host_lost && !stop_requested;
  if (result.start_failure.exit_status != 0 &&
      ((result.exit_status != 0 && !stop_requested) || stopped_for_start_failure || lost_yet_zero))
    result.exit_status = result.start_failure.exit_status;
  if (result.start_overdue && result.forwarded_signal == 0) result.exit_status = kExitLaunchFailed;
  // The job ended well (every living process passed its end) and bsprun ended the starter.
  // mpirun's own status then tells only how it was ended (255 after SIGTERM, or SIGKILL).
  if (ended_leaving_lost && !result.timed_out && result.forwarded_signal == 0 &&
      filter.crash_signal() == 0) {
    result.exit_status = 0;
    result.mpirun_signal = 0;
    result.ended_leaving_lost = true;
  }
  // A process said it crashed: the job's status is that signal's, as a shell gives, whatever
  // number the starter chose (MPICH's Hydra and Open MPI 5 in master mode choose others; MPICH
  // 4.2's may even say 0).
  if (filter.crash_signal() != 0 && (!stop_requested || stopped_after_crash))
    result.exit_status = 128 + filter.crash_signal();
  // The starter's blocks on stdout say no more than a crash line, a death mpirun condensed, a
  // stop or a start failure did; otherwise they go out as they came (with restarts, once the run
  // proves to have failed by itself).
  if (!out_filter.held().empty() && filter.crash_signal() == 0 && filter.death().rank < 0 &&
      !stop_requested && filter.failure().exit_status == 0) {
    if (watch.quiet_losses && result.exit_status != 0)
      result.held_consequences += out_filter.held();
    else
      write_all(STDOUT_FILENO, out_filter.held());
  }
  if (result.leftovers_unkillable > 0) {
    write_all(STDERR_FILENO,
              "bsprun: " + std::to_string(result.leftovers_unkillable) +
                  " process(es) of the job on this machine did not end even after SIGKILL\n");
  }
  if (!result.not_stopped.empty())
    write_all(STDERR_FILENO, "bsprun: " + not_stopped_line(result.not_stopped) + "\n");
  return result;
}

namespace {
bool only_show = false;  // bsprun --show
}  // namespace

void show_commands_only() { only_show = true; }

RunResult run_mpirun(const std::vector<std::string>& argv, bool verbose, double time_limit_s,
                     const RemoteJob& remote, const JobWatch& watch) {
  if (only_show) {
    std::cout << shell_quote_command(argv) << std::endl;
    return {};
  }
  if (verbose) std::cerr << "bsprun: " << shell_quote_command(argv) << "\n";
  std::cout.flush();
  std::cerr.flush();
  return run_job(argv, time_limit_s, 15, remote, watch);
}

}  // namespace bspg::launcher
