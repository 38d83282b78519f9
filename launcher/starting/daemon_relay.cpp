// daemon_relay.cpp - the ssh agent that holds a lost daemon's connection to mpirun
// (daemon_relay.h).
#include "daemon_relay.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "untrusted.h"
#include "write_all.h"

namespace bspg::launcher {
namespace {


constexpr const char* kGoneStart = "bsprun: the MPI daemon on ";
constexpr const char* kGoneMiddle = " is gone, and its host does not answer ";
// How long the host's ssh port is given to answer, at the daemon's start and at its end.
constexpr int kAnswerMs = 1000;

// The port of each tcp or tcp6 address list in the value that starts at `from` in `text` (up to
// its first space or quote) replaced by `port`; the old one in *hnp_port (all must agree).
bool point_value_at(std::string& text, std::size_t from, const std::string& port, int* hnp_port) {
  const std::size_t i = text.find_first_not_of(" \t\"'=", from);
  if (i == std::string::npos) return false;
  std::size_t end = std::min(text.find_first_of(" \t\"'", i), text.size());
  bool changed = false;
  for (std::size_t seg = i; seg < end;) {
    const std::size_t seg_end = std::min(text.find(';', seg), end);
    std::size_t next = seg_end + 1;
    for (const char* scheme : {"tcp://", "tcp6://"}) {
      const std::size_t n = std::strlen(scheme);
      if (text.compare(seg, n, scheme) != 0) continue;
      // The addresses run to the first ':' outside brackets; the port to the next ':'.
      int depth = 0;
      std::size_t colon = std::string::npos;
      for (std::size_t k = seg + n; k < seg_end && colon == std::string::npos; ++k) {
        if (text[k] == '[') ++depth;
        if (text[k] == ']') --depth;
        if (text[k] == ':' && depth == 0) colon = k;
      }
      if (colon == std::string::npos) return false;
      std::size_t port_end = colon + 1;
      while (port_end < seg_end && text[port_end] >= '0' && text[port_end] <= '9') ++port_end;
      const std::size_t digits = port_end - colon - 1;
      if (digits == 0 || digits > 5) return false;
      const int old = std::atoi(text.substr(colon + 1, digits).c_str());
      if (old <= 0 || old > 65535 || (*hnp_port != 0 && *hnp_port != old)) return false;
      *hnp_port = old;
      text.replace(colon + 1, digits, port);
      end = end + port.size() - digits;
      next = seg_end + port.size() - digits + 1;
      changed = true;
    }
    seg = next;
  }
  return changed;
}

// Whether an ssh server answers at `address` (the daemon's, as its connection came) on `port`
// within kAnswerMs: its greeting ("SSH-") read. A host being killed may still accept the
// connection, and then reset it as its sshd dies.
bool answers(const sockaddr_storage& address, int port) {
  const int fd = connect_within(address, port, kAnswerMs);
  bool ok = fd >= 0;
  if (ok) {
    char greeting[4] = {};
    std::size_t got = 0;
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(kAnswerMs);
    while (got < sizeof greeting) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                            until - std::chrono::steady_clock::now())
                            .count();
      pollfd p{fd, POLLIN, 0};
      if (left <= 0 || poll(&p, 1, static_cast<int>(left)) != 1) break;
      const ssize_t n = recv(fd, greeting + got, sizeof greeting - got, 0);
      if (n <= 0) break;
      got += static_cast<std::size_t>(n);
    }
    ok = got == sizeof greeting && std::memcmp(greeting, "SSH-", 4) == 0;
  }
  if (fd >= 0) close(fd);
  return ok;
}

// The port ssh uses for `host` (`ssh -G`), 22 where it does not say.
int ssh_port(const std::string& config, const std::string& host) {
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) return 22;
  const pid_t child = fork();
  if (child == 0) {
    dup2(out[1], STDOUT_FILENO);
    const int null = open("/dev/null", O_WRONLY);
    if (null >= 0) dup2(null, STDERR_FILENO);
    execlp("ssh", "ssh", "-G", "-F", config.c_str(), "--", host.c_str(),
           static_cast<char*>(nullptr));
    _exit(127);
  }
  close(out[1]);
  std::string text;
  char buffer[4096];
  for (ssize_t got; (got = read(out[0], buffer, sizeof buffer)) > 0;)
    text.append(buffer, static_cast<std::size_t>(got));
  close(out[0]);
  if (child > 0) waitpid(child, nullptr, 0);
  const std::size_t at = text.find("\nport ");
  const int port = at == std::string::npos ? 22 : std::atoi(text.c_str() + at + 6);
  return port > 0 && port <= 65535 ? port : 22;
}

// The daemon's connection and the relay's to mpirun.
struct Link {
  int daemon = -1;  // -1 once closed (held: its host is gone)
  int mpirun = -1;
  sockaddr_storage peer{};
  bool may_hold = false;  // its host answered on its ssh port when the daemon came
};

// Relays the daemon's connection `daemon` (from `peer`) to mpirun's port at the address the
// daemon reached, in *link; false where mpirun's side could not be connected (the daemon's is
// then closed).
bool open_link(int daemon, const sockaddr_storage& peer, int hnp_port, int ssh_port, Link* link) {
  Link l;
  l.daemon = daemon;
  l.peer = peer;
  l.may_hold = answers(peer, ssh_port);
  l.mpirun = relay_to_starter(daemon, hnp_port);
  if (l.mpirun < 0) {
    close(daemon);
    return false;
  }
  *link = l;
  return true;
}

// The relay: the daemon's connection (`first`, when not -1, from `first_peer`; else the first
// accepted on `listener`), relayed to mpirun; `port`: its host's ssh port. Ends when that link
// has ended, or mpirun (`starter`) ends. The relay's process ignores SIGPIPE: a write to a closed
// side fails instead.
int serve(int listener, int first, const sockaddr_storage& first_peer, int hnp_port, pid_t starter,
          int port, const std::string& host) {
  const int starter_fd = static_cast<int>(syscall(SYS_pidfd_open, starter, 0));
  Link l;
  bool linked = first >= 0 && open_link(first, first_peer, hnp_port, port, &l);
  char buffer[65536];
  for (;;) {
    // One daemon, one connection: once it is relayed, no other is taken (one that came and went
    // from elsewhere could otherwise make the relay name this host gone).
    if (linked && listener >= 0) {
      close(listener);
      listener = -1;
    }
    pollfd fds[4] = {{listener, POLLIN, 0},
                     {starter_fd, POLLIN, 0},
                     {linked ? l.daemon : -1, POLLIN, 0},
                     {linked ? l.mpirun : -1, POLLIN, 0}};
    const int ready = poll(fds, 4, starter_fd < 0 ? 1000 : -1);
    if (ready < 0 && errno != EINTR) return 1;
    if (fds[1].revents != 0) return 0;  // mpirun ended
    if (starter_fd < 0 && kill(starter, 0) != 0 && errno == ESRCH) return 0;
    if (!linked) {
      if (fds[0].revents & POLLIN) {
        sockaddr_storage peer{};
        socklen_t size = sizeof peer;
        const int daemon =
            accept4(listener, reinterpret_cast<sockaddr*>(&peer), &size, SOCK_CLOEXEC);
        linked = daemon >= 0 && open_link(daemon, peer, hnp_port, port, &l);
      }
      continue;
    }
    bool mpirun_closed = false;
    if (fds[3].revents != 0) {
      const ssize_t got = recv(l.mpirun, buffer, sizeof buffer, 0);
      if (got > 0) {
        // Held, what mpirun says to a daemon that is gone goes nowhere. A failed write is seen
        // as the daemon's end on its next read.
        if (l.daemon >= 0) write_all(l.daemon, buffer, static_cast<std::size_t>(got));
      } else if (got == 0 || errno != EINTR) {
        mpirun_closed = true;
      }
    }
    if (!mpirun_closed && l.daemon >= 0 && fds[2].revents != 0) {
      const ssize_t got = recv(l.daemon, buffer, sizeof buffer, 0);
      if (got > 0) {
        if (!write_all(l.mpirun, buffer, static_cast<std::size_t>(got))) mpirun_closed = true;
      } else if (got == 0 || errno != EINTR) {
        close(l.daemon);
        l.daemon = -1;
        if (!l.may_hold || answers(l.peer, port))
          mpirun_closed = true;  // the daemon ended; its host is there: mpirun is told
        else
          write_all(STDERR_FILENO, daemon_gone_line(host, "ssh"));
      }
    }
    if (mpirun_closed) {
      if (l.daemon >= 0) close(l.daemon);
      close(l.mpirun);
      return 0;
    }
  }
}

[[noreturn]] void exec_ssh(const std::string& config, const std::string& host,
                           std::vector<std::string>& command) {
  std::vector<char*> argv;
  std::string ssh = "ssh", f = "-F";
  argv.push_back(ssh.data());
  argv.push_back(f.data());
  argv.push_back(const_cast<char*>(config.c_str()));
  argv.push_back(const_cast<char*>(host.c_str()));
  for (std::string& word : command) argv.push_back(word.data());
  argv.push_back(nullptr);
  execvp("ssh", argv.data());
  std::fprintf(stderr, "bsprun: could not run ssh: %s\n", std::strerror(errno));
  _exit(127);
}

}  // namespace

int connect_within(const sockaddr_storage& address, int port, int ms) {
  sockaddr_storage to = address;
  socklen_t length = 0;
  if (to.ss_family == AF_INET) {
    reinterpret_cast<sockaddr_in&>(to).sin_port = htons(static_cast<std::uint16_t>(port));
    length = sizeof(sockaddr_in);
  } else if (to.ss_family == AF_INET6) {
    reinterpret_cast<sockaddr_in6&>(to).sin6_port = htons(static_cast<std::uint16_t>(port));
    length = sizeof(sockaddr_in6);
  } else {
    return -1;
  }
  const int fd = socket(to.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  bool ok = connect(fd, reinterpret_cast<sockaddr*>(&to), length) == 0;
  if (!ok && errno == EINPROGRESS) {
    pollfd p{fd, POLLOUT, 0};
    if (poll(&p, 1, ms) == 1) {
      int error = 0;
      socklen_t size = sizeof error;
      ok = getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size) == 0 && error == 0;
    }
  }
  if (!ok) {
    close(fd);
    return -1;
  }
  return fd;
}

int relay_to_starter(int daemon, int hnp_port) {
  sockaddr_storage local{};
  socklen_t local_size = sizeof local;
  if (getsockname(daemon, reinterpret_cast<sockaddr*>(&local), &local_size) != 0) return -1;
  if (local.ss_family == AF_INET)
    reinterpret_cast<sockaddr_in&>(local).sin_port = htons(static_cast<std::uint16_t>(hnp_port));
  else
    reinterpret_cast<sockaddr_in6&>(local).sin6_port = htons(static_cast<std::uint16_t>(hnp_port));
  const int mpirun = socket(local.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (mpirun < 0 || connect(mpirun, reinterpret_cast<sockaddr*>(&local), local_size) != 0) {
    if (mpirun >= 0) close(mpirun);
    return -1;
  }
  // The run-time's messages are small and answered: each goes on at once, as the run-time's
  // own sockets send them (Nagle's wait for an acknowledgement cost 0.1-0.3 s per job here).
  const int one = 1;
  setsockopt(mpirun, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  setsockopt(daemon, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return mpirun;
}

int relay_listener(int* port) {
  int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd >= 0) {
    const int no = 0;
    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &no, sizeof no);
    sockaddr_in6 any{};
    any.sin6_family = AF_INET6;
    any.sin6_addr = in6addr_any;
    if (bind(fd, reinterpret_cast<sockaddr*>(&any), sizeof any) != 0 || listen(fd, 16) != 0) {
      close(fd);
      fd = -1;
    }
  }
  if (fd < 0) {
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in any{};
    any.sin_family = AF_INET;
    any.sin_addr.s_addr = htonl(INADDR_ANY);
    if (fd >= 0 &&
        (bind(fd, reinterpret_cast<sockaddr*>(&any), sizeof any) != 0 || listen(fd, 16) != 0)) {
      close(fd);
      fd = -1;
    }
  }
  if (fd < 0) return -1;
  sockaddr_storage bound{};
  socklen_t size = sizeof bound;
  getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &size);
  *port = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6&>(bound).sin6_port
                                            : reinterpret_cast<sockaddr_in&>(bound).sin_port);
  return fd;
}

bool point_hnp_uri_at(std::vector<std::string>& words, int port, int* hnp_port) {
  std::vector<std::string> changed = words;
  int found = 0;
  bool any = false;
  for (std::size_t w = 0; w < changed.size(); ++w)
    for (std::size_t at = changed[w].find("prte_hnp_uri"); at != std::string::npos;
         at = changed[w].find("prte_hnp_uri", at + 1)) {
      const std::size_t after = at + std::strlen("prte_hnp_uri");
      // The value in the same word, or (an argument of its own) in the next one.
      const bool alone = changed[w].find_first_not_of(" \t\"'=", after) == std::string::npos;
      std::string& text = alone && w + 1 < changed.size() ? changed[w + 1] : changed[w];
      const std::size_t from = alone ? 0 : after;
      if (!point_value_at(text, from, std::to_string(port), &found)) return false;
      any = true;
    }
  if (!any) return false;
  words = changed;
  *hnp_port = found;
  return true;
}

std::string daemon_relay_agent(const std::string& bsprun_path, const std::string& ssh_config) {
  for (const std::string* word : {&bsprun_path, &ssh_config})
    if (word->empty() || word->find_first_of(" \t\n\"'\\") != std::string::npos) return "";
  return bsprun_path + " " + kDaemonRelayOption + " " + ssh_config;
}

std::string daemon_gone_line(const std::string& host, const std::string& asked) {
  return kGoneStart + host + kGoneMiddle + asked +
         ": its processes are lost (mpirun is not told: it would end the job)\n";
}

std::string daemon_gone_host(const std::string& line) {
  const std::string start = kGoneStart;
  if (line.rfind(start, 0) != 0) return "";
  const std::size_t middle = line.find(kGoneMiddle, start.size());
  if (middle == std::string::npos) return "";
  const std::string host = line.substr(start.size(), middle - start.size());
  return untrusted::host_name_problem(host).empty() ? host : "";
}

int run_daemon_relay(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr,
                 "bsprun: %s is bsprun's own ssh agent for Open MPI: "
                 "%s SSH_CONFIG HOST COMMAND\n",
                 kDaemonRelayOption, kDaemonRelayOption);
    return 2;
  }
  const std::string config = argv[2];
  const std::string host = argv[3];
  std::vector<std::string> command(argv + 4, argv + argc);
  int port = 0;
  int hnp_port = 0;
  const int listener = relay_listener(&port);
  const bool relayed = listener >= 0 && point_hnp_uri_at(command, port, &hnp_port);
  if (relayed) {
    // mpirun takes ssh's end for its daemon's, and would end the job when a lost host's ssh
    // session breaks. So the relay, left behind, runs ssh as its own child, and this agent
    // reports the start to mpirun as soon as the daemon has come back (or ssh ended well), or
    // ssh's failure. ssh goes with the relay, which goes with mpirun.
    const pid_t starter = getppid();
    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0) return 127;
    const pid_t relay = fork();
    if (relay < 0) return 127;
    if (relay > 0) {
      close(report[1]);
      close(listener);
      int status = 1;  // the relay ended without a word
      while (read(report[0], &status, sizeof status) < 0 && errno == EINTR) {
      }
      return status;
    }
    close(report[0]);
    const auto tell = [&](int status) {
      ssize_t ignored = write(report[1], &status, sizeof status);
      (void)ignored;
      close(report[1]);
    };
    const pid_t ssh = fork();
    if (ssh == 0) {
      close(listener);
      exec_ssh(config, host, command);
    }
    if (ssh < 0) {
      tell(127);
      _exit(127);
    }
    // Asked meanwhile, not when the daemon has come: its way back to mpirun would wait.
    const int ssh_port_there = ssh_port(config, host);
    int first = -1;
    sockaddr_storage first_peer{};
    bool ssh_ended = false;
    for (;;) {
      int status = 0;
      if (waitpid(ssh, &status, WNOHANG) == ssh) {
        ssh_ended = true;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
          tell(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
          _exit(0);
        }
        break;
      }
      pollfd p{listener, POLLIN, 0};
      if (poll(&p, 1, 50) == 1) {
        socklen_t size = sizeof first_peer;
        first = accept4(listener, reinterpret_cast<sockaddr*>(&first_peer), &size, SOCK_CLOEXEC);
        if (first >= 0) break;
      }
    }
    tell(0);
    // The relay's standard input and output are not the job's (its line goes to stderr).
    const int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null >= 0) {
      dup2(null, STDIN_FILENO);
      dup2(null, STDOUT_FILENO);
    }
    signal(SIGPIPE, SIG_IGN);
    const int status = serve(listener, first, first_peer, hnp_port, starter, ssh_port_there, host);
    if (!ssh_ended) {
      kill(ssh, SIGTERM);
      waitpid(ssh, nullptr, 0);
    }
    _exit(status);
  }
  if (listener >= 0) close(listener);
  exec_ssh(config, host, command);
}

}  // namespace bspg::launcher
