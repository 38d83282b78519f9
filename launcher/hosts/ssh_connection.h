// ssh_connection.h - internal: one libssh session to a host, driven step by step without blocking,
// so that one poll loop can drive thousands of them (probe.cpp), or one thread one (staging).
#pragma once

#include <libssh/libssh.h>
#include <sys/socket.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "hosts.h"

namespace bspg::hosts::detail {

using Clock = std::chrono::steady_clock;

// "timed out after 5.0 s"
std::string timeout_message(int timeout_ms);

// A problem of this machine, not of the host: out of memory, out of file descriptors. what() is
// the cause, e.g. "out of memory".
struct LocalError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The local cause behind an errno value from socket(), pipe(), thread creation and the like,
// or "" when the errno does not mean this machine ran out of something.
std::string local_cause(int error);

struct Address {
  sockaddr_storage storage{};
  socklen_t length = 0;
};

// Resolves host:port into `addresses`. Numeric addresses need no lookup; a name is looked up
// (getaddrinfo, which may block) only when `lookup`, else `addresses` stays empty. Returns "" or
// the host's problem ("cannot resolve address 'x'"); throws LocalError.
std::string resolve(const std::string& host, unsigned port, bool lookup,
                    std::vector<Address>& addresses);

struct CommandOutput {
  std::string out, err;
  int exit_status = -1;
};

class Connection {
 public:
  enum class Progress { kWaiting, kDone, kFailed };

  Connection(const HostSpec& host, const ProbeOptions& opt);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Creates the session: the user's ssh configuration, then what the host file says on top (as in
  // the config that ssh_config_for writes for Open MPI's ssh). "" or the problem; throws
  // LocalError.
  std::string configure();
  // After configure(): where TCP goes (HostName and Port after the ssh configuration). Empty when
  // a ProxyCommand from the ssh configuration connects instead.
  const std::string& target_host() const { return target_host_; }
  unsigned target_port() const { return target_port_; }

  // Starts connecting: to the addresses in turn, or through the ProxyCommand when there is one.
  void connect(std::vector<Address> addresses);
  // With a command, the steps go on to run it once logged in; without, done means logged in.
  void set_command(std::string command) { command_ = std::move(command); }

  // Goes as far as it can without blocking: connect, check the host key against known_hosts,
  // log in with a public key, run the command and collect its output. Throws LocalError.
  Progress advance();
  // After kWaiting: the socket and the poll events (POLLIN, POLLOUT) that let advance() go on.
  int fd() const;
  short events() const;
  const std::string& error() const { return error_; }      // after kFailed: one short reason
  // The TCP round trip to the host in ms as the kernel measured it over the exchanges so far (its
  // smoothed estimate: after a login, a few round trips' worth), or -1 when unknown (a
  // ProxyCommand, or not connected).
  double round_trip_ms() const;
  // After kDone with a command: what it wrote and its status, handed over (once).
  CommandOutput take_output() { return std::move(output_); }

  // Gives up before done: a command already started on the host is killed there (SSH signal
  // request; its stdin closes with the session too) and the session disconnects.
  void abandon();

  // Blocking use, for staging: resolves, connects and logs in before `deadline`. "" or the problem.
  std::string open(Clock::time_point deadline);
  // After open(): the session in blocking mode, each operation bounded by the probe timeout (for
  // SFTP).
  ssh_session blocking_session();

 private:
  enum class Phase {
    kNew,
    kTcp,
    kHandshake,
    kAuthenticate,
    kOpenChannel,
    kExec,
    kRead,
    kExitStatus,
    kDone,
    kFailed
  };

  Progress fail(std::string error);
  Progress step_tcp();
  Progress step_handshake();
  Progress step_authenticate();
  Progress step_command();
  std::string connect_error() const;
  std::string check_host_key();
  void disconnect();

  HostSpec host_;
  int timeout_ms_;
  bool accept_unknown_host_keys_;
  ssh_session session_ = nullptr;
  ssh_channel channel_ = nullptr;  // freed by ssh_disconnect
  ssh_key identity_ = nullptr;
  Phase phase_ = Phase::kNew;
  std::string target_host_;
  unsigned target_port_ = 22;
  bool proxy_command_ = false;
  std::vector<Address> addresses_;
  size_t next_address_ = 0;
  int socket_ = -1;        // ours while TCP connects; libssh's from the handshake on
  int connect_errno_ = 0;  // why the last address failed
  std::string command_;
  bool command_sent_ = false;
  CommandOutput output_;
  std::string error_;
};

}  // namespace bspg::hosts::detail
