// srun_relay.cpp - the srun that holds a lost node's daemon connection to mpirun (srun_relay.h).
#include "srun_relay.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "daemon_relay.h"
#include "localhost.h"
#include "mpistart.h"
#include "write_all.h"

namespace bspg::launcher {
namespace {

// How long slurmd is given to take a connection, and then how long that connection must stay up
// (a node being killed may take it, and close it as its slurmd dies).
constexpr int kConnectMs = 1000;
constexpr int kStaysUpMs = 300;
// How long Slurm's controller is given to name the nodes' addresses.
constexpr double kScontrolSeconds = 10;

// The numeric text of an address (an IPv4 address mapped into IPv6 as the IPv4 one).
std::string numeric(const sockaddr_storage& address) {
  char text[INET6_ADDRSTRLEN] = {};
  if (address.ss_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(address).sin_addr, text, sizeof text);
  } else if (address.ss_family == AF_INET6) {
    const auto& in6 = reinterpret_cast<const sockaddr_in6&>(address).sin6_addr;
    if (IN6_IS_ADDR_V4MAPPED(&in6))
      inet_ntop(AF_INET, &in6.s6_addr[12], text, sizeof text);
    else
      inet_ntop(AF_INET6, &in6, text, sizeof text);
  }
  return text;
}

// Whether slurmd takes a connection at `address` on `port` within kConnectMs, and (stays_up_ms >
// 0) keeps it that long.
bool slurmd_answers(const sockaddr_storage& address, int port, int stays_up_ms) {
  const int fd = connect_within(address, port, kConnectMs);
  bool ok = fd >= 0;
  if (ok && stays_up_ms > 0) {
    // slurmd says nothing first: the connection readable means it was closed or reset.
    pollfd p{fd, POLLIN, 0};
    ok = poll(&p, 1, stays_up_ms) == 0;
  }
  if (fd >= 0) close(fd);
  return ok;
}

// The value of `--NAME=VALUE` among `words`, "" where it is not there.
std::string option_value(const std::vector<std::string>& words, const std::string& name) {
  const std::string prefix = "--" + name + "=";
  for (const std::string& word : words)
    if (word.rfind(prefix, 0) == 0) return word.substr(prefix.size());
  return "";
}

// Each address of the nodes in `list` (as Slurm names them: NodeAddr, and the node's name),
// numeric, with the node's name.
std::map<std::string, std::string> node_addresses(const std::string& list) {
  std::map<std::string, std::string> names;
  if (list.empty()) return names;
  std::string error;
  std::istringstream lines(run_sh_here(
      "exec " + shell_quote_command({"scontrol", "show", "node", "-o", list}) + " 2>/dev/null",
      kScontrolSeconds, error));
  for (std::string line; std::getline(lines, line);) {
    std::string node, address;
    std::istringstream fields(line);
    for (std::string field; fields >> field;) {
      if (field.rfind("NodeName=", 0) == 0) node = field.substr(9);
      if (field.rfind("NodeAddr=", 0) == 0) address = field.substr(9);
    }
    if (node.empty()) continue;
    for (const std::string& name : {address, node}) {
      if (name.empty()) continue;
      addrinfo hints{};
      hints.ai_socktype = SOCK_STREAM;
      addrinfo* found = nullptr;
      if (getaddrinfo(name.c_str(), nullptr, &hints, &found) != 0) continue;
      for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
        sockaddr_storage s{};
        std::memcpy(&s, a->ai_addr, std::min<std::size_t>(a->ai_addrlen, sizeof s));
        names.emplace(numeric(s), node);
      }
      freeaddrinfo(found);
    }
  }
  return names;
}

[[noreturn]] void exec_srun(const std::string& srun, std::vector<std::string>& words) {
  std::vector<char*> args;
  args.push_back(const_cast<char*>(srun.c_str()));
  for (std::string& word : words) args.push_back(word.data());
  args.push_back(nullptr);
  execv(srun.c_str(), args.data());
  std::fprintf(stderr, "bsprun: could not run %s: %s\n", srun.c_str(), std::strerror(errno));
  _exit(127);
}

// A daemon's connection and the relay's to mpirun.
struct Link {
  int daemon = -1;  // -1 once closed (held: its node is gone)
  int mpirun = -1;  // -1 once closed
  sockaddr_storage peer{};
  bool may_hold = false;  // its node's slurmd took a connection when the daemon came
  // Whether its node's slurmd answers, asked when the daemon's side ended: at a job's end every
  // daemon ends at once, and each node is asked at the same time, not one after another.
  std::future<bool> node_answers;
};

int exit_status_of(int status) {
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

std::string srun_relay_script(const std::string& bsprun_path, const std::string& real_srun,
                              int slurmd_port) {
  for (const std::string* path : {&bsprun_path, &real_srun})
    if (path->empty() || path->find_first_of("'\n") != std::string::npos) return "";
  return "#!/bin/sh\n# bsprun's srun for Open MPI's daemons (srun_relay.h)\nexec '" + bsprun_path +
         "' " + kSrunRelayOption + " '" + real_srun + "' " + std::to_string(slurmd_port) +
         " \"$@\"\n";
}

int run_srun_relay(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr,
                 "bsprun: %s is bsprun's own srun for Open MPI's daemons: "
                 "%s REAL_SRUN SLURMD_PORT ARGS...\n",
                 kSrunRelayOption, kSrunRelayOption);
    return 2;
  }
  const std::string srun = argv[2];
  const int slurmd_port = std::atoi(argv[3]);
  std::vector<std::string> words(argv + 4, argv + argc);
  int port = 0;
  int hnp_port = 0;
  const int listener = relay_listener(&port);
  if (listener < 0 || slurmd_port <= 0 || slurmd_port > 65535 ||
      !point_hnp_uri_at(words, port, &hnp_port)) {
    if (listener >= 0) close(listener);
    std::vector<std::string> unchanged(argv + 4, argv + argc);
    exec_srun(srun, unchanged);
  }
  std::string nodes = option_value(words, "nodelist");
  if (nodes.empty() && std::getenv("SLURM_NODELIST")) nodes = std::getenv("SLURM_NODELIST");
  const std::map<std::string, std::string> node_of = node_addresses(nodes);
  long expected = std::atol(option_value(words, "ntasks").c_str());
  if (expected <= 0) expected = 1;

  // mpirun watches this process as its srun: signals it sends go on to the real one, which ends
  // with the relay.
  const pid_t starter = getppid();
  const int starter_fd = static_cast<int>(syscall(SYS_pidfd_open, starter, 0));
  // Open MPI gives its srun /dev/null for output: the relay's line goes to mpirun's own standard
  // error, which bsprun reads.
  int report = open(("/proc/" + std::to_string(starter) + "/fd/2").c_str(), O_WRONLY | O_CLOEXEC);
  if (report < 0) report = STDERR_FILENO;
  sigset_t handled, before;
  sigemptyset(&handled);
  for (int s : {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGCHLD, SIGUSR1, SIGUSR2})
    sigaddset(&handled, s);
  sigprocmask(SIG_BLOCK, &handled, &before);
  const int signals = signalfd(-1, &handled, SFD_CLOEXEC);
  const pid_t child = fork();
  if (child == 0) {
    close(listener);
    sigprocmask(SIG_SETMASK, &before, nullptr);
    exec_srun(srun, words);
  }
  if (child < 0) return 127;
  signal(SIGPIPE, SIG_IGN);

  std::vector<Link> links;
  long accepted = 0;
  int srun_status = -1;  // -1 while it runs
  bool starter_ended = false;
  char buffer[65536];
  for (;;) {
    const bool listening = accepted < expected;
    std::vector<pollfd> fds = {
        {signals, POLLIN, 0}, {starter_fd, POLLIN, 0}, {listening ? listener : -1, POLLIN, 0}};
    const std::size_t polled = links.size();  // a link accepted below waits for the next poll
    for (const Link& l : links) {
      fds.push_back({l.daemon, POLLIN, 0});
      fds.push_back({l.mpirun, POLLIN, 0});
    }
    bool asking = false;
    for (const Link& l : links) asking = asking || l.node_answers.valid();
    const int ready = poll(fds.data(), fds.size(), asking ? 20 : starter_fd < 0 ? 500 : -1);
    if (ready < 0 && errno != EINTR) break;
    if (fds[0].revents != 0) {
      signalfd_siginfo info{};
      while (read(signals, &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
        if (info.ssi_signo == SIGCHLD) {
          int status = 0;
          if (srun_status < 0 && waitpid(child, &status, WNOHANG) == child)
            srun_status = exit_status_of(status);
        } else if (srun_status < 0) {
          kill(child, static_cast<int>(info.ssi_signo));
        }
        pollfd more{signals, POLLIN, 0};
        if (poll(&more, 1, 0) != 1) break;
      }
    }
    if (fds[1].revents != 0 || (starter_fd < 0 && kill(starter, 0) != 0 && errno == ESRCH)) {
      starter_ended = true;
      break;
    }
    if (listening && (fds[2].revents & POLLIN)) {
      sockaddr_storage peer{};
      socklen_t size = sizeof peer;
      const int daemon = accept4(listener, reinterpret_cast<sockaddr*>(&peer), &size, SOCK_CLOEXEC);
      if (daemon >= 0) {
        ++accepted;
        Link l;
        l.daemon = daemon;
        l.peer = peer;
        l.may_hold = slurmd_answers(peer, slurmd_port, 0);
        l.mpirun = relay_to_starter(daemon, hnp_port);
        if (l.mpirun < 0)
          close(daemon);
        else
          links.push_back(std::move(l));
      }
      if (accepted >= expected) close(listener);
    }
    for (std::size_t k = 0; k < polled; ++k) {
      Link& l = links[k];
      const pollfd& from_daemon = fds[3 + 2 * k];
      const pollfd& from_mpirun = fds[4 + 2 * k];
      bool mpirun_closed = false;
      if (l.mpirun >= 0 && from_mpirun.revents != 0) {
        const ssize_t got = recv(l.mpirun, buffer, sizeof buffer, 0);
        if (got > 0) {
          if (l.daemon >= 0) write_all(l.daemon, buffer, static_cast<std::size_t>(got));
        } else if (got == 0 || errno != EINTR) {
          mpirun_closed = true;
        }
      }
      if (!mpirun_closed && l.daemon >= 0 && from_daemon.revents != 0) {
        const ssize_t got = recv(l.daemon, buffer, sizeof buffer, 0);
        if (got > 0) {
          if (!write_all(l.mpirun, buffer, static_cast<std::size_t>(got))) mpirun_closed = true;
        } else if (got == 0 || errno != EINTR) {
          close(l.daemon);
          l.daemon = -1;
          if (!l.may_hold)
            mpirun_closed = true;
          else
            l.node_answers =
                std::async(std::launch::async, slurmd_answers, l.peer, slurmd_port, kStaysUpMs);
        }
      }
      if (!mpirun_closed && l.node_answers.valid() &&
          l.node_answers.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
        if (l.node_answers.get()) {
          mpirun_closed = true;  // the daemon ended; its node is there: mpirun is told
        } else {
          const std::string address = numeric(l.peer);
          const auto it = node_of.find(address);
          write_all(report,
                    daemon_gone_line(it != node_of.end() ? it->second : address, "Slurm's slurmd"));
        }
      }
      if (mpirun_closed) {
        if (l.daemon >= 0) close(l.daemon);
        if (l.mpirun >= 0) close(l.mpirun);
        l.daemon = l.mpirun = -1;
        l.node_answers = {};  // an answer still coming is of no use now
      }
    }
    if (srun_status >= 0) {
      bool open = false;
      for (const Link& l : links) open = open || l.mpirun >= 0 || l.node_answers.valid();
      if (!open) return srun_status;  // srun ended, and nothing is held
    }
  }
  // mpirun ended: so does its srun (which may wait for a node that is gone: killed after 1 s).
  if (srun_status < 0) {
    kill(child, SIGTERM);
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    while (waitpid(child, nullptr, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() >= until) {
        kill(child, SIGKILL);
        waitpid(child, nullptr, 0);
        break;
      }
      usleep(20000);
    }
  }
  return starter_ended ? 0 : 1;
}

}  // namespace bspg::launcher
