// ssh_connection.h - internal: one libssh session to a host, every step bounded by a deadline.
#pragma once

#include "hosts.h"

#include <libssh/libssh.h>

#include <chrono>
#include <string>

namespace bspg::hosts::detail {

using Clock = std::chrono::steady_clock;

// "timed out after 5.0 s"
std::string timeout_message(int timeout_ms);

struct CommandOutput {
  std::string error;  // empty on success (the command ran and exited; see exit_status)
  std::string out, err;
  int exit_status = -1;
};

class Connection {
 public:
  Connection(const HostSpec& host, const ProbeOptions& opt);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Connects, checks the host key against known_hosts and logs in with a public key, all before
  // `deadline`. Returns "" on success, else one short reason.
  std::string open(Clock::time_point deadline);

  // Runs one command and collects its output and exit status, before `deadline`.
  CommandOutput run(const std::string& command, Clock::time_point deadline);

  // After open(): the session in blocking mode, each operation bounded by the probe timeout (for SFTP).
  ssh_session blocking_session();

 private:
  std::string connect_error() const;
  std::string check_host_key();
  std::string authenticate(Clock::time_point deadline);
  // Waits until the socket may have progress (or a short slice passed); false when past the deadline.
  bool wait(Clock::time_point deadline) const;

  HostSpec host_;
  ProbeOptions opt_;
  ssh_session session_ = nullptr;
  bool connected_ = false;
};

}  // namespace bspg::hosts::detail
