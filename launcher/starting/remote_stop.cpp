// remote_stop.cpp - one ssh per host runs remote_stop_script; see remote_stop.h.
#include "remote_stop.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <random>
#include <thread>

#include "hosts.h"
#include "untrusted.h"

namespace bspg::launcher {
namespace {

using Clock = std::chrono::steady_clock;

// The script waits up to 3 s for the processes (SIGTERM, then SIGKILL) and 3 s for their daemons;
// allow for that and the login.
constexpr double kScriptSeconds = 8;

// The last non-empty line of ssh's stderr.
std::string last_line(const std::string& text) {
  std::string last, line;
  for (char c : text) {
    if (c == '\n') {
      if (!line.empty()) last = line;
      line.clear();
    } else if (c != '\r') {
      line += c;
    }
  }
  return line.empty() ? last : line;
}

void read_available(int fd, std::string& into) {
  char buffer[4096];
  ssize_t n;
  while ((n = read(fd, buffer, sizeof buffer)) > 0) {
    if (into.size() < 65536) into.append(buffer, static_cast<std::size_t>(n));
  }
}

}  // namespace

std::string new_job_marker() {
  std::random_device random;
  char text[64];
  std::snprintf(text, sizeof text, "bspg-%d-%08x%08x", static_cast<int>(getpid()), random(),
                random());
  return text;
}

std::string end_process_script(const std::string& environment_line, long pid) {
  // As end_job_script: one line of sh, values through shell_assignment only.
  return hosts::shell_assignment("marker", environment_line) + "p=" + std::to_string(pid) +
         "; self=$(readlink /proc/self/ns/uts); me=$(id -u); "
         "if [ \"$p\" -gt 1 ] && [ \"$p\" != $$ ] && "
         "grep -qzxF -e \"$marker\" /proc/$p/environ 2>/dev/null && "
         "[ \"$(readlink /proc/$p/ns/uts 2>/dev/null)\" = \"$self\" ] && "
         "[ \"$(stat -c %u /proc/$p 2>/dev/null)\" = \"$me\" ]; then "
         "case $(cat /proc/$p/comm 2>/dev/null) in orted|prted|hydra_pmi_proxy) "
         "echo \"daemon $p\"; exit 0;; esac; "
         "kill -KILL $p 2>/dev/null && echo \"ended $p\" && exit 0; fi; "
         "echo \"none $p\"; exit 0";
}

std::string end_job_script(const std::string& environment_line, long spare_pid,
                           bool with_starters) {
  // One line of sh (run_on_hosts' login shells, guarded_command): no single quote, no backslash
  // but shell_assignment's escapes, and every statement ended for a line of its own.
  // A process counts while it is neither gone nor a zombie (a zombie has ended; only its parent
  // has not reaped it yet). `wait_gone SECONDS PIDS` waits until none counts, polling.
  return hosts::shell_assignment("marker", environment_line) +
         "spare=" + std::to_string(spare_pid) +
         "; self=$(readlink /proc/self/ns/uts); me=$(id -u); "
         "alive() { for p in $*; do s=$(cat /proc/$p/stat 2>/dev/null) || continue; "
         "s=${s##*) }; [ \"${s%% *}\" = Z ] || echo $p; done; }; "
         "wait_gone() { n=$(($1 * 10)); shift; while [ $n -gt 0 ] && [ -n \"$(alive $*)\" ]; do "
         "sleep 0.1; n=$((n - 1)); done; }; "
         "is_daemon() { case $(cat /proc/$1/comm 2>/dev/null) in "
         "orted|prted|hydra_pmi_proxy) return 0;; esac; return 1; }; "
         "ranks=; daemons=; "
         "for f in $(grep -lzxF -e \"$marker\" /proc/[0-9]*/environ 2>/dev/null); do "
         "p=${f#/proc/}; p=${p%/environ}; "
         "[ \"$p\" != $$ ] && [ \"$p\" != \"$spare\" ] || continue; "
         "[ \"$(readlink /proc/$p/ns/uts 2>/dev/null)\" = \"$self\" ] || continue; "
         "[ \"$(stat -c %u /proc/$p 2>/dev/null)\" = \"$me\" ] || continue; "
         "s=$(cat /proc/$p/stat 2>/dev/null) || continue; s=${s##*) }; set -- $s; "
         "[ \"$1\" != Z ] || continue; "
         "if is_daemon $p; then daemons=\"$daemons $p\"; kind=daemon; "
         "else ranks=\"$ranks $p\"; kind=process; fi; "
         "echo \"found $p $kind $1 $(cat /proc/$p/comm 2>/dev/null)\"; "
         "case \" $daemons $ranks \" in *\" $2 \"*) continue;; esac; "
         "if is_daemon $2 && [ \"$(stat -c %u /proc/$2 2>/dev/null)\" = \"$me\" ]; then "
         "daemons=\"$daemons $2\"; s=$(cat /proc/$2/stat 2>/dev/null); s=${s##*) }; "
         "echo \"found $2 daemon ${s%% *} $(cat /proc/$2/comm 2>/dev/null)\"; "
         // PRRTE's prted runs as two: the one ssh started is the parent of the one that starts
         // the job's processes, and stays when only its child is ended.
         "g=${s#* }; g=${g%% *}; case \" $daemons \" in *\" $g \"*) ;; *) "
         "if [ \"$(cat /proc/$g/comm 2>/dev/null)\" = prted ] && "
         "[ \"$(stat -c %u /proc/$g 2>/dev/null)\" = \"$me\" ]; then daemons=\"$daemons $g\"; "
         "t=$(cat /proc/$g/stat 2>/dev/null); t=${t##*) }; "
         "echo \"found $g daemon ${t%% *} prted\"; fi;; esac; fi; "
         "done; " +
         // A starter (mpirun) holds the line as an argument (-x NAME=VALUE), not in its
         // environment.
         std::string(
             with_starters
                 ? "for f in $(grep -lzxF -e \"$marker\" /proc/[0-9]*/cmdline 2>/dev/null); do "
                   "p=${f#/proc/}; p=${p%/cmdline}; "
                   "[ \"$p\" != $$ ] && [ \"$p\" != \"$spare\" ] || continue; "
                   "case \" $daemons \" in *\" $p \"*) continue;; esac; "
                   "[ \"$(readlink /proc/$p/ns/uts 2>/dev/null)\" = \"$self\" ] || continue; "
                   "[ \"$(stat -c %u /proc/$p 2>/dev/null)\" = \"$me\" ] || continue; "
                   "case $(cat /proc/$p/comm 2>/dev/null) in mpirun*|mpiexec*|orterun*|prterun*) "
                   "s=$(cat /proc/$p/stat 2>/dev/null) || continue; s=${s##*) }; "
                   "daemons=\"$daemons $p\"; "
                   "echo \"found $p daemon ${s%% *} $(cat /proc/$p/comm 2>/dev/null)\";; esac; "
                   "done; "
                 : "") +
         "[ -n \"$ranks$daemons\" ] || exit 0; "
         // Stopped ones act on nothing until continued; then the processes, then their daemons
         // (which usually end by themselves once their processes are gone).
         "kill -CONT $daemons $ranks 2>/dev/null; "
         "if [ -n \"$ranks\" ]; then kill -TERM $ranks 2>/dev/null; wait_gone 2 $ranks; "
         "kill -KILL $(alive $ranks) 2>/dev/null; wait_gone 1 $ranks; fi; "
         "if [ -n \"$daemons\" ]; then wait_gone 1 $daemons; "
         "kill -TERM $(alive $daemons) 2>/dev/null; wait_gone 1 $daemons; "
         "kill -KILL $(alive $daemons) 2>/dev/null; wait_gone 1 $daemons; fi; "
         "for p in $(alive $ranks $daemons); do echo \"left $p\"; done; exit 0";
}

std::string remote_stop_script(const std::string& marker) {
  return end_job_script(std::string(kJobMarkerVariable) + "=" + marker);
}

RemoteStop::RemoteStop(const RemoteJob& job, double timeout_s) : job_(job), timeout_s_(timeout_s) {}

RemoteStop::~RemoteStop() {
  for (auto& command : running_) {
    kill(command.pid, SIGKILL);
    waitpid(command.pid, nullptr, 0);
    close(command.err_fd);
  }
}

void RemoteStop::leave_out(const std::string& host) {
  auto& hosts = job_.hosts;
  hosts.erase(std::remove_if(hosts.begin(), hosts.end(),
                             [&](const std::string& h) {
                               auto name = job_.address_names.find(h);
                               return h == host ||
                                      (name != job_.address_names.end() && name->second == host);
                             }),
              hosts.end());
}

std::vector<std::string> ssh_script_argv(const std::string& ssh_config, const std::string& host,
                                         const std::string& connect_timeout_s) {
  std::vector<std::string> argv{"ssh"};
  if (!ssh_config.empty()) argv.insert(argv.end(), {"-F", ssh_config});
  argv.insert(argv.end(), {"-T", "-o", "BatchMode=yes", "-o", "ConnectTimeout=" + connect_timeout_s,
                           "-o", "LogLevel=ERROR", "--", host, "sh -s"});
  return argv;
}

void RemoteStop::start() {
  if (started_) return;
  started_ = true;
  poll();
}

void RemoteStop::launch(const std::string& host) {
  const std::string connect_timeout = std::to_string(std::max(1L, std::lround(timeout_s_)));
  std::vector<std::string> argv = ssh_script_argv(job_.ssh_config, host, connect_timeout);
  // Built before fork: the child only calls async-signal-safe functions.
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  int in[2], err[2];
  if (pipe2(in, O_CLOEXEC) != 0) {
    unreachable_.push_back(host + " (cannot run ssh: " + std::strerror(errno) + ")");
    return;
  }
  if (pipe2(err, O_CLOEXEC) != 0) {
    unreachable_.push_back(host + " (cannot run ssh: " + std::strerror(errno) + ")");
    close(in[0]);
    close(in[1]);
    return;
  }
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);  // not in the terminal's foreground group: a second Ctrl-C does not end it
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    signal(SIGPIPE, SIG_DFL);
    dup2(in[0], STDIN_FILENO);
    dup2(err[1], STDERR_FILENO);
    const int null = open("/dev/null", O_WRONLY);
    if (null >= 0) dup2(null, STDOUT_FILENO);
    execvp(args[0], args.data());
    static const char kCannot[] = "cannot run ssh\n";
    ssize_t ignored = write(STDERR_FILENO, kCannot, sizeof kCannot - 1);
    (void)ignored;
    _exit(255);
  }
  close(in[0]);
  close(err[1]);
  if (pid < 0) {
    unreachable_.push_back(host + " (cannot run ssh: " + std::strerror(errno) + ")");
    close(in[1]);
    close(err[0]);
    return;
  }
  // The script is far smaller than a pipe's buffer: this write does not block.
  const std::string script = remote_stop_script(job_.marker);
  ssize_t written = write(in[1], script.data(), script.size());
  (void)written;
  close(in[1]);
  fcntl(err[0], F_SETFL, O_NONBLOCK);
  Command command;
  command.host = host;
  command.pid = pid;
  command.err_fd = err[0];
  command.deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(timeout_s_ + kScriptSeconds));
  running_.push_back(command);
}

void RemoteStop::done(Command& command, int status, bool timed_out) {
  read_available(command.err_fd, command.err);
  close(command.err_fd);
  const std::string name =
      job_.address_names.count(command.host) ? job_.address_names[command.host] : command.host;
  std::string why;
  if (timed_out) {
    char text[64];
    std::snprintf(text, sizeof text, "no answer within %.0f s", timeout_s_ + kScriptSeconds);
    why = text;
  } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    why = last_line(command.err);
    if (why.empty()) why = "ssh failed";
  }
  if (why.empty()) return;
  unreachable_.push_back(name + " (" + untrusted::printable(why) + ")");
  // ssh's own failures end it with 255 (the remote script's with its own status).
  if (timed_out || (WIFEXITED(status) && WEXITSTATUS(status) == 255)) silent_.push_back(name);
}

bool RemoteStop::poll() {
  if (!started_) return true;
  const auto now = Clock::now();
  for (auto it = running_.begin(); it != running_.end();) {
    read_available(it->err_fd, it->err);
    int status = 0;
    const pid_t reaped = waitpid(it->pid, &status, WNOHANG);
    const bool timed_out = reaped == 0 && now >= it->deadline;
    if (timed_out) {
      kill(it->pid, SIGKILL);
      waitpid(it->pid, &status, 0);
    }
    if (reaped == it->pid || timed_out || reaped < 0) {
      done(*it, status, timed_out);
      it = running_.erase(it);
    } else {
      ++it;
    }
  }
  while (running_.size() < kParallel && next_ < job_.hosts.size()) launch(job_.hosts[next_++]);
  return running_.empty() && next_ >= job_.hosts.size();
}

void RemoteStop::finish() {
  while (!poll()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

std::string not_stopped_line(const std::vector<std::string>& unreachable) {
  std::string hosts;
  for (const auto& h : unreachable) hosts += (hosts.empty() ? "" : ", ") + h;
  return "could not reach " + hosts + " to stop the job there; its processes there may still run";
}

}  // namespace bspg::launcher
