// One libssh session in non-blocking mode, so every step can stop at the probe's deadline.
#include "ssh_connection.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <mutex>
#include <thread>

namespace bspg::hosts::detail {
namespace {

constexpr size_t kMaxOutput = 1 << 20;  // a host whose shell start-up prints megabytes is not our business

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
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

}  // namespace

std::string timeout_message(int timeout_ms) {
  char text[64];
  std::snprintf(text, sizeof text, "timed out after %.1f s", timeout_ms / 1000.0);
  return text;
}

Connection::Connection(const HostSpec& host, const ProbeOptions& opt) : host_(host), opt_(opt) {
  init_libssh();
  session_ = ssh_new();
}

Connection::~Connection() {
  if (session_ == nullptr) return;
  if (connected_) ssh_disconnect(session_);
  ssh_free(session_);
}

bool Connection::wait(Clock::time_point deadline) const {
  const auto now = Clock::now();
  if (now >= deadline) return false;
  // Short slices: libssh does not say when a non-blocking connect finishes, and buffered output
  // may need POLLOUT; 20 ms keeps a probe responsive without spinning.
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
  const int slice = static_cast<int>(std::clamp<long long>(left, 1, 20));
  const socket_t fd = ssh_get_fd(session_);
  if (fd == SSH_INVALID_SOCKET) {
    std::this_thread::sleep_for(std::chrono::milliseconds(slice));
    return true;
  }
  pollfd pfd{fd, POLLIN, 0};
  if (ssh_get_poll_flags(session_) & SSH_WRITE_PENDING) pfd.events |= POLLOUT;
  poll(&pfd, 1, slice);
  return true;
}

std::string Connection::connect_error() const {
  const std::string message = ssh_get_error(session_);
  const std::string text = lower(message);
  if (text.find("refused") != std::string::npos) return "connection refused";
  if (text.find("timeout") != std::string::npos || text.find("timed out") != std::string::npos)
    return timeout_message(opt_.timeout_ms);
  if (text.find("resolve") != std::string::npos) return "cannot resolve address '" + host_.address + "'";
  if (text.find("reset") != std::string::npos) return "connection reset (is it an SSH server?)";
  if (text.find("unreachable") != std::string::npos || text.find("no route") != std::string::npos)
    return "host unreachable";
  return "cannot connect: " + message;
}

std::string Connection::open(Clock::time_point deadline) {
  if (session_ == nullptr) return "cannot create an SSH session (out of memory?)";
  ssh_options_set(session_, SSH_OPTIONS_HOST, host_.address.c_str());
  // The user's ssh configuration first, then what the host file says on top of it (as in the
  // config that ssh_config_for writes for Open MPI's ssh).
  if (ssh_options_parse_config(session_, nullptr) < 0)
    return "cannot read the ssh configuration: " + std::string(ssh_get_error(session_));
  // libssh reads LogLevel from that configuration but maps OpenSSH's quiet levels (ERROR, INFO)
  // to levels at which it prints its own traces on stderr; bsprun reports problems itself.
  const int no_log = SSH_LOG_NOLOG;
  ssh_options_set(session_, SSH_OPTIONS_LOG_VERBOSITY, &no_log);
  if (!host_.user.empty()) ssh_options_set(session_, SSH_OPTIONS_USER, host_.user.c_str());
  if (host_.port != 22) {
    const unsigned int port = static_cast<unsigned int>(host_.port);
    ssh_options_set(session_, SSH_OPTIONS_PORT, &port);
  }
  if (!host_.known_hosts.empty()) ssh_options_set(session_, SSH_OPTIONS_KNOWNHOSTS, host_.known_hosts.c_str());
  long seconds = std::max(1, opt_.timeout_ms / 1000);
  ssh_options_set(session_, SSH_OPTIONS_TIMEOUT, &seconds);
  ssh_set_blocking(session_, 0);

  int rc;
  while ((rc = ssh_connect(session_)) == SSH_AGAIN)
    if (!wait(deadline)) return timeout_message(opt_.timeout_ms);
  if (rc != SSH_OK) return connect_error();
  connected_ = true;

  if (std::string problem = check_host_key(); !problem.empty()) return problem;
  return authenticate(deadline);
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
      return "host key CHANGED (a key of another type than listed; possible impersonation) per " + file;
    case SSH_KNOWN_HOSTS_UNKNOWN:
    case SSH_KNOWN_HOSTS_NOT_FOUND:
      if (!opt_.accept_unknown_host_keys) return "unknown host key (not in " + file + ")";
      // Recorded, like OpenSSH's accept-new, so that Open MPI's ssh (StrictHostKeyChecking yes) agrees.
      if (ssh_session_update_known_hosts(session_) != SSH_OK)
        return "cannot record the host key in " + file + ": " + ssh_get_error(session_);
      return "";
    case SSH_KNOWN_HOSTS_ERROR:
    default:
      return "cannot check the host key against " + file + ": " + ssh_get_error(session_);
  }
}

std::string Connection::authenticate(Clock::time_point deadline) {
  int rc;
  if (!host_.identity.empty()) {
    if (access(host_.identity.c_str(), R_OK) != 0) return "identity file " + host_.identity + " is not readable";
    ssh_key key = nullptr;
    if (ssh_pki_import_privkey_file(host_.identity.c_str(), nullptr, nullptr, nullptr, &key) != SSH_OK)
      return "cannot load identity file " + host_.identity + " (not a private key, or passphrase-protected)";
    while ((rc = ssh_userauth_publickey(session_, nullptr, key)) == SSH_AUTH_AGAIN)
      if (!wait(deadline)) break;
    ssh_key_free(key);
  } else {
    while ((rc = ssh_userauth_publickey_auto(session_, nullptr, nullptr)) == SSH_AUTH_AGAIN)
      if (!wait(deadline)) break;
  }
  switch (rc) {
    case SSH_AUTH_SUCCESS:
      return "";
    case SSH_AUTH_AGAIN:
      return timeout_message(opt_.timeout_ms);
    case SSH_AUTH_DENIED:
    case SSH_AUTH_PARTIAL:
      return "authentication refused for user " + option_string(session_, SSH_OPTIONS_USER);
    default:
      return "authentication failed: " + std::string(ssh_get_error(session_));
  }
}

CommandOutput Connection::run(const std::string& command, Clock::time_point deadline) {
  CommandOutput result;
  ssh_channel channel = ssh_channel_new(session_);
  if (channel == nullptr) {
    result.error = "cannot create a channel: " + std::string(ssh_get_error(session_));
    return result;
  }
  const auto finish = [&](std::string error) {
    result.error = std::move(error);
    if (ssh_channel_is_open(channel)) ssh_channel_close(channel);
    ssh_channel_free(channel);
    return result;
  };

  int rc;
  while ((rc = ssh_channel_open_session(channel)) == SSH_AGAIN)
    if (!wait(deadline)) return finish(timeout_message(opt_.timeout_ms));
  if (rc != SSH_OK) return finish("cannot open a session: " + std::string(ssh_get_error(session_)));
  while ((rc = ssh_channel_request_exec(channel, command.c_str())) == SSH_AGAIN)
    if (!wait(deadline)) return finish(timeout_message(opt_.timeout_ms));
  if (rc != SSH_OK) return finish("cannot run a command: " + std::string(ssh_get_error(session_)));

  char buffer[4096];
  for (;;) {
    bool progress = false;
    for (int is_stderr = 0; is_stderr <= 1; ++is_stderr) {
      const int n = ssh_channel_read_nonblocking(channel, buffer, sizeof buffer, is_stderr);
      if (n > 0) {
        std::string& sink = is_stderr ? result.err : result.out;
        if (sink.size() < kMaxOutput) sink.append(buffer, static_cast<size_t>(n));
        progress = true;
      } else if (n == SSH_ERROR) {
        return finish("connection lost: " + std::string(ssh_get_error(session_)));
      }
    }
    if (progress) continue;
    if (ssh_channel_is_eof(channel) || ssh_channel_is_closed(channel)) break;
    if (!wait(deadline)) return finish(timeout_message(opt_.timeout_ms));
  }
  // The exit status usually arrives with the EOF; wait for it a little, never past the deadline.
  while ((result.exit_status = ssh_channel_get_exit_status(channel)) == -1 && !ssh_channel_is_closed(channel))
    if (!wait(deadline)) break;
  return finish("");
}

ssh_session Connection::blocking_session() {
  ssh_set_blocking(session_, 1);
  long seconds = opt_.timeout_ms / 1000;
  long micros = (opt_.timeout_ms % 1000) * 1000L;
  ssh_options_set(session_, SSH_OPTIONS_TIMEOUT, &seconds);
  ssh_options_set(session_, SSH_OPTIONS_TIMEOUT_USEC, &micros);
  return session_;
}

}  // namespace bspg::hosts::detail
