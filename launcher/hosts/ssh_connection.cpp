// One libssh session in non-blocking mode: every step returns at once, and says what to wait for.
// TCP is connected here rather than by libssh, so that no step blocks (libssh would look names up
// and poll the connect itself) and so that running out of sockets is seen as this machine's
// problem.
#include "ssh_connection.h"

#include <fcntl.h>
#include <libssh/callbacks.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <new>

namespace bspg::hosts::detail {
namespace {

// bsprun reports what goes wrong itself; libssh's own traces are dropped.
void drop_libssh_log(int, const char*, const char*, void*) {}

// The exit status the command sent, -1 while none came or when a signal ended it. libssh 0.11
// deprecates ssh_channel_get_exit_status for ssh_channel_get_exit_state, which 0.10 lacks.
int channel_exit_status(ssh_channel channel) {
#if LIBSSH_VERSION_INT >= SSH_VERSION_INT(0, 11, 0)
  uint32_t code = 0;
  char* signal = nullptr;
  int core_dumped = 0;
  const int rc = ssh_channel_get_exit_state(channel, &code, &signal, &core_dumped);
  const bool by_signal = signal != nullptr;
  if (signal) ssh_string_free_char(signal);
  return rc == SSH_OK && !by_signal ? static_cast<int>(code) : -1;
#else
  return ssh_channel_get_exit_status(channel);
#endif
}

constexpr size_t kMaxOutput =
    1 << 20;  // a host whose shell start-up prints megabytes is not our business

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return text;
}

std::string option_string(ssh_session session, ssh_options_e option) {
  char* value = nullptr;
  if (ssh_options_get(session, option, &value) != SSH_OK || value == nullptr) return "";
  std::string result = value;
  ssh_string_free_char(value);
  return result;
}

void init_libssh() {
  static std::once_flag once;
  std::call_once(once, [] { ssh_init(); });
}

// What a failed TCP connect means for the host.
std::string connect_errno_message(int error, int timeout_ms) {
  switch (error) {
    case ECONNREFUSED:
      return "connection refused";
    case ETIMEDOUT:
      return timeout_message(timeout_ms);
    case EHOSTUNREACH:
    case ENETUNREACH:
      return "host unreachable";
    case ECONNRESET:
      return "connection reset (is it an SSH server?)";
    default:
      return "cannot connect: " + std::string(std::strerror(error));
  }
}

}  // namespace

std::string timeout_message(int timeout_ms) {
  char text[64];
  std::snprintf(text, sizeof text, "timed out after %.1f s", timeout_ms / 1000.0);
  return text;
}

std::string local_cause(int error) {
  switch (error) {
    case EMFILE:
      return "too many open files (the open-file limit, ulimit -n)";
    case ENFILE:
      return "the system's table of open files is full";
    case ENOMEM:
    case ENOBUFS:
      return "out of memory";
    case EAGAIN:
      return "no more threads or processes allowed (ulimit -u, or memory for their stacks)";
    case EADDRNOTAVAIL:
      return "no free local port for another connection";
    default:
      return "";
  }
}

std::string resolve(const std::string& host, unsigned port, bool lookup,
                    std::vector<Address>& addresses) {
  addresses.clear();
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV | (lookup ? 0 : AI_NUMERICHOST);
  addrinfo* found = nullptr;
  const int rc = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found);
  if (rc == EAI_NONAME && !lookup) return "";  // a name: to be looked up where blocking is fine
  if (rc == EAI_MEMORY) throw LocalError("out of memory");
  if (rc == EAI_SYSTEM) {
    const int error = errno;
    if (std::string cause = local_cause(error); !cause.empty()) throw LocalError(cause);
    return "cannot resolve address '" + host + "': " + std::strerror(error);
  }
  if (rc != 0) return "cannot resolve address '" + host + "'";
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    if (a->ai_addrlen > sizeof(sockaddr_storage)) continue;
    Address address;
    std::memcpy(&address.storage, a->ai_addr, a->ai_addrlen);
    address.length = a->ai_addrlen;
    addresses.push_back(address);
  }
  freeaddrinfo(found);
  if (addresses.empty()) return "cannot resolve address '" + host + "'";
  return "";
}

Connection::Connection(const HostSpec& host, const ProbeOptions& opt)
    : host_(host),
      timeout_ms_(opt.timeout_ms),
      accept_unknown_host_keys_(opt.accept_unknown_host_keys) {
  init_libssh();
}

Connection::~Connection() {
  disconnect();
  if (identity_ != nullptr) ssh_key_free(identity_);
}

void Connection::disconnect() {
  if (socket_ >= 0) {  // still connecting: the socket is ours
    close(socket_);
    socket_ = -1;
  }
  // ssh_free closes the socket (given with SSH_OPTIONS_FD: libssh 0.10 closes it there, but not in
  // ssh_disconnect) and frees the channel. Neither ssh_channel_close nor ssh_disconnect: the first
  // waits for output to drain, and a stalled host would hold up the whole poll loop.
  if (session_ != nullptr) ssh_free(session_);
  session_ = nullptr;
  channel_ = nullptr;
}

std::string Connection::configure() {
  session_ = ssh_new();
  if (session_ == nullptr) throw LocalError("out of memory");
  ssh_options_set(session_, SSH_OPTIONS_HOST, host_.address.c_str());
  // Quiet while the configuration is read too: libssh 0.11 (Debian 13) warns on stderr of every
  // OpenSSH option it does not know (ProxyUseFdpass, CheckHostIP, HashKnownHosts, ...), at the
  // level that the configuration's own LogLevel line set. Its logging state is per thread.
  ssh_set_log_callback(drop_libssh_log);
  const int no_log = SSH_LOG_NOLOG;
  ssh_options_set(session_, SSH_OPTIONS_LOG_VERBOSITY, &no_log);
  // The user's ssh configuration first, then what the host file says on top of it (as in the
  // config that ssh_config_for writes for Open MPI's ssh).
  if (ssh_options_parse_config(session_, nullptr) < 0)
    return "cannot read the ssh configuration: " + std::string(ssh_get_error(session_));
  // libssh reads LogLevel from that configuration but maps OpenSSH's quiet levels (ERROR, INFO)
  // to levels at which it prints its own traces on stderr; bsprun reports problems itself.
  ssh_options_set(session_, SSH_OPTIONS_LOG_VERBOSITY, &no_log);
  if (!host_.user.empty()) ssh_options_set(session_, SSH_OPTIONS_USER, host_.user.c_str());
  if (host_.port != 22) {
    const unsigned int port = static_cast<unsigned int>(host_.port);
    ssh_options_set(session_, SSH_OPTIONS_PORT, &port);
  }
  if (!host_.known_hosts.empty())
    ssh_options_set(session_, SSH_OPTIONS_KNOWNHOSTS, host_.known_hosts.c_str());
  long seconds = std::max(1, timeout_ms_ / 1000);
  ssh_options_set(session_, SSH_OPTIONS_TIMEOUT, &seconds);
  ssh_set_blocking(session_, 0);

  proxy_command_ = !option_string(session_, SSH_OPTIONS_PROXYCOMMAND).empty();
  if (!proxy_command_) {
    target_host_ = option_string(session_, SSH_OPTIONS_HOST);
    if (target_host_.empty()) target_host_ = host_.address;
    unsigned int port = 22;
    if (ssh_options_get_port(session_, &port) == SSH_OK && port > 0) target_port_ = port;
  }
  return "";
}

void Connection::connect(std::vector<Address> addresses) {
  addresses_ = std::move(addresses);
  next_address_ = 0;
  phase_ = proxy_command_ ? Phase::kHandshake : Phase::kTcp;
}

Connection::Progress Connection::fail(std::string error) {
  error_ = std::move(error);
  phase_ = Phase::kFailed;
  return Progress::kFailed;
}

Connection::Progress Connection::advance() {
  for (;;) {
    Progress progress;
    const Phase before = phase_;
    switch (phase_) {
      case Phase::kTcp:
        progress = step_tcp();
        break;
      case Phase::kHandshake:
        progress = step_handshake();
        break;
      case Phase::kAuthenticate:
        progress = step_authenticate();
        break;
      case Phase::kOpenChannel:
      case Phase::kExec:
      case Phase::kRead:
      case Phase::kExitStatus:
        progress = step_command();
        break;
      case Phase::kDone:
        return Progress::kDone;
      case Phase::kFailed:
        return Progress::kFailed;
      case Phase::kNew:
      default:
        return fail("internal error: advance() before connect()");
    }
    // A step that moved on may be followed at once by the next one.
    if (progress != Progress::kWaiting || phase_ == before) return progress;
  }
}

Connection::Progress Connection::step_tcp() {
  for (;;) {
    if (socket_ < 0) {
      if (next_address_ >= addresses_.size())
        return fail(connect_errno_message(connect_errno_ != 0 ? connect_errno_ : ECONNREFUSED,
                                          timeout_ms_));
      const Address& address = addresses_[next_address_++];
      socket_ = socket(address.storage.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
      if (socket_ < 0) {
        const int error = errno;
        if (std::string cause = local_cause(error); !cause.empty()) throw LocalError(cause);
        connect_errno_ = error;
        continue;
      }
      if (::connect(socket_, reinterpret_cast<const sockaddr*>(&address.storage), address.length) !=
              0 &&
          errno != EINPROGRESS) {
        const int error = errno;
        close(socket_);
        socket_ = -1;
        if (error == EADDRNOTAVAIL) throw LocalError(local_cause(error));
        connect_errno_ = error;
        continue;
      }
    }
    pollfd ready{socket_, POLLOUT, 0};
    if (poll(&ready, 1, 0) == 0) return Progress::kWaiting;  // still connecting
    int error = 0;
    socklen_t length = sizeof error;
    if (getsockopt(socket_, SOL_SOCKET, SO_ERROR, &error, &length) != 0) error = errno;
    if (error == 0) break;
    close(socket_);
    socket_ = -1;
    connect_errno_ = error;
  }
  // Connected: the socket is libssh's from here on (it closes it). Without Nagle's delay: SFTP
  // waits for an answer to each write, and a delayed small packet would hold every one up.
  const int one = 1;
  setsockopt(socket_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  ssh_options_set(session_, SSH_OPTIONS_FD, &socket_);
  socket_ = -1;
  phase_ = Phase::kHandshake;
  return Progress::kWaiting;
}

std::string Connection::connect_error() const {
  const std::string message = ssh_get_error(session_);
  const std::string text = lower(message);
  if (text.find("refused") != std::string::npos) return "connection refused";
  if (text.find("timeout") != std::string::npos || text.find("timed out") != std::string::npos)
    return timeout_message(timeout_ms_);
  if (text.find("resolve") != std::string::npos)
    return "cannot resolve address '" + host_.address + "'";
  if (text.find("reset") != std::string::npos) return "connection reset (is it an SSH server?)";
  if (text.find("unreachable") != std::string::npos || text.find("no route") != std::string::npos)
    return "host unreachable";
  if (text.find("out of memory") != std::string::npos) throw LocalError("out of memory");
  return "cannot connect: " + message;
}

Connection::Progress Connection::step_handshake() {
  const int rc = ssh_connect(session_);
  if (rc == SSH_AGAIN) return Progress::kWaiting;
  if (rc != SSH_OK) return fail(connect_error());
  if (std::string problem = check_host_key(); !problem.empty()) return fail(problem);
  phase_ = Phase::kAuthenticate;
  return Progress::kWaiting;
}

std::string Connection::check_host_key() {
  std::string file = option_string(session_, SSH_OPTIONS_KNOWNHOSTS);
  if (file.empty()) file = "~/.ssh/known_hosts";
  switch (ssh_session_is_known_server(session_)) {
    case SSH_KNOWN_HOSTS_OK:
      return "";
    case SSH_KNOWN_HOSTS_CHANGED:
      return "host key CHANGED (possible impersonation) per " + file;
    case SSH_KNOWN_HOSTS_OTHER:
      return "host key CHANGED (a key of another type than listed; possible impersonation) per " +
             file;
    case SSH_KNOWN_HOSTS_UNKNOWN:
    case SSH_KNOWN_HOSTS_NOT_FOUND:
      if (!accept_unknown_host_keys_) return "unknown host key (not in " + file + ")";
      // Recorded, like OpenSSH's accept-new, so that Open MPI's ssh (StrictHostKeyChecking yes)
      // agrees.
      if (ssh_session_update_known_hosts(session_) != SSH_OK)
        return "cannot record the host key in " + file + ": " + ssh_get_error(session_);
      return "";
    case SSH_KNOWN_HOSTS_ERROR:
    default:
      return "cannot check the host key against " + file + ": " + ssh_get_error(session_);
  }
}

Connection::Progress Connection::step_authenticate() {
  int rc;
  if (!host_.identity.empty()) {
    if (identity_ == nullptr) {
      if (access(host_.identity.c_str(), R_OK) != 0)
        return fail("identity file " + host_.identity + " is not readable");
      if (ssh_pki_import_privkey_file(host_.identity.c_str(), nullptr, nullptr, nullptr,
                                      &identity_) != SSH_OK)
        return fail("cannot load identity file " + host_.identity +
                    " (not a private key, or passphrase-protected)");
    }
    rc = ssh_userauth_publickey(session_, nullptr, identity_);
  } else {
    rc = ssh_userauth_publickey_auto(session_, nullptr, nullptr);
  }
  switch (rc) {
    case SSH_AUTH_AGAIN:
      return Progress::kWaiting;
    case SSH_AUTH_SUCCESS:
      phase_ = command_.empty() ? Phase::kDone : Phase::kOpenChannel;
      return command_.empty() ? Progress::kDone : Progress::kWaiting;
    case SSH_AUTH_DENIED:
    case SSH_AUTH_PARTIAL:
      return fail("authentication refused for user " + option_string(session_, SSH_OPTIONS_USER));
    default:
      return fail("authentication failed: " + std::string(ssh_get_error(session_)));
  }
}

Connection::Progress Connection::step_command() {
  int rc;
  switch (phase_) {
    case Phase::kOpenChannel:
      if (channel_ == nullptr) {
        channel_ = ssh_channel_new(session_);
        if (channel_ == nullptr) throw LocalError("out of memory");
      }
      rc = ssh_channel_open_session(channel_);
      if (rc == SSH_AGAIN) return Progress::kWaiting;
      if (rc != SSH_OK)
        return fail("cannot open a session: " + std::string(ssh_get_error(session_)));
      phase_ = Phase::kExec;
      return Progress::kWaiting;
    case Phase::kExec:
      command_sent_ = true;  // from the first try on, the request may be on its way
      rc = ssh_channel_request_exec(channel_, command_.c_str());
      if (rc == SSH_AGAIN) return Progress::kWaiting;
      if (rc != SSH_OK)
        return fail("cannot run a command: " + std::string(ssh_get_error(session_)));
      phase_ = Phase::kRead;
      return Progress::kWaiting;
    case Phase::kRead: {
      char buffer[4096];
      for (;;) {
        bool progress = false;
        for (int is_stderr = 0; is_stderr <= 1; ++is_stderr) {
          const int n = ssh_channel_read_nonblocking(channel_, buffer, sizeof buffer, is_stderr);
          if (n > 0) {
            std::string& sink = is_stderr ? output_.err : output_.out;
            if (sink.size() < kMaxOutput) sink.append(buffer, static_cast<size_t>(n));
            progress = true;
          } else if (n == SSH_ERROR) {
            return fail("connection lost: " + std::string(ssh_get_error(session_)));
          }
        }
        if (progress) continue;
        if (ssh_channel_is_eof(channel_) || ssh_channel_is_closed(channel_)) break;
        return Progress::kWaiting;
      }
      phase_ = Phase::kExitStatus;
      return Progress::kWaiting;
    }
    case Phase::kExitStatus:
      // The exit status usually arrives with the EOF; without one (a signal) the close follows.
      output_.exit_status = channel_exit_status(channel_);
      if (output_.exit_status == -1 && !ssh_channel_is_closed(channel_)) return Progress::kWaiting;
      phase_ = Phase::kDone;
      return Progress::kDone;
    default:
      return fail("internal error: bad command phase");
  }
}

double Connection::round_trip_ms() const {
  if (proxy_command_ || session_ == nullptr || phase_ == Phase::kTcp) return -1;
  const int fd = ssh_get_fd(session_);
  tcp_info info{};
  socklen_t length = sizeof info;
  if (fd < 0 || getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &length) != 0 || info.tcpi_rtt == 0)
    return -1;
  return info.tcpi_rtt / 1000.0;  // the kernel's smoothed round trip, in microseconds
}

int Connection::fd() const { return phase_ == Phase::kTcp ? socket_ : ssh_get_fd(session_); }

short Connection::events() const {
  if (phase_ == Phase::kTcp) return POLLOUT;
  // libssh asks for POLLOUT while output is buffered (and while connecting through a ProxyCommand).
  return static_cast<short>(POLLIN |
                            ((ssh_get_poll_flags(session_) & SSH_WRITE_PENDING) ? POLLOUT : 0));
}

void Connection::abandon() {
  if (command_sent_ && channel_ != nullptr && ssh_channel_is_open(channel_)) {
    // Read what arrived (closing a socket with unread data would reset the connection and could
    // drop the request), then ask sshd to kill the command's process group.
    char buffer[4096];
    for (int i = 0; i < 64; ++i) {
      const int out = ssh_channel_read_nonblocking(channel_, buffer, sizeof buffer, 0);
      const int err = ssh_channel_read_nonblocking(channel_, buffer, sizeof buffer, 1);
      if (out <= 0 && err <= 0) break;
    }
    ssh_channel_request_send_signal(channel_, "KILL");  // sent at once: no reply is asked for
  }
  disconnect();
  phase_ = Phase::kFailed;
}

std::string Connection::open(Clock::time_point deadline) {
  try {
    if (std::string problem = configure(); !problem.empty()) return problem;
    std::vector<Address> addresses;
    if (!proxy_command_) {
      if (std::string problem = resolve(target_host_, target_port_, true, addresses);
          !problem.empty())
        return problem;
    }
    connect(std::move(addresses));
    for (;;) {
      const Progress progress = advance();
      if (progress == Progress::kDone) return "";
      if (progress == Progress::kFailed) return error_;
      const auto now = Clock::now();
      if (now >= deadline) return timeout_message(timeout_ms_);
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - now).count();
      pollfd wait{fd(), events(), 0};
      poll(&wait, 1, static_cast<int>(std::min<long long>(left, 1 << 30)));
    }
  } catch (const LocalError& e) {
    return std::string("problem on this machine: ") + e.what();
  } catch (const std::bad_alloc&) {
    return "problem on this machine: out of memory";
  }
}

ssh_session Connection::blocking_session() {
  ssh_set_blocking(session_, 1);
  long seconds = timeout_ms_ / 1000;
  long micros = (timeout_ms_ % 1000) * 1000L;
  ssh_options_set(session_, SSH_OPTIONS_TIMEOUT, &seconds);
  ssh_options_set(session_, SSH_OPTIONS_TIMEOUT_USEC, &micros);
  return session_;
}

}  // namespace bspg::hosts::detail
