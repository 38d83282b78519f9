// ssh_lines.cpp - ssh's complaints, which the starters pass on: the host they name, a daemon or
// proxy that did not start there, a connection cut while the job ran (a host lost).
#include <string>
#include <vector>

#include "message_lines.h"
#include "mpirun_messages.h"

namespace bspg::launcher {
namespace messages_internal {

// One of ssh's lines about a connection that was cut after it was made (the host went away while
// the job ran), rather than one that could not be made.
bool is_cut_connection(const std::string& line) {
  return (line.rfind("Connection to ", 0) == 0 &&
          line.find(" closed by remote host") != std::string::npos) ||
         line.rfind("client_loop: ", 0) == 0 || line.rfind("Connection reset by ", 0) == 0;
}

// bsprun's words for a host lost while the job ran ("" when the starter does not say which).
std::string lost_contact(const std::string& host) {
  return "lost contact with " + (host.empty() ? std::string("a host") : host) +
         " while the job ran (the host or its network failed); the job was stopped";
}

// Whether one of ssh's lines names address ("connect to host 10.1.2.3 port 22", "Connection to
// 10.1.2.3 closed", "root@10.1.2.3: Permission denied").
bool names_address(const std::string& line, const std::string& address) {
  return contains(line, (" " + address + " ").c_str()) ||
         contains(line, (" " + address + ":").c_str()) ||
         contains(line, ("@" + address + ":").c_str());
}

}  // namespace messages_internal

using namespace messages_internal;

// ssh could not start the starter's daemon on a host (the held ssh lines say which, by its
// address or name): a start failure, 125, and that host's.
void MpirunStderr::not_started_over_ssh(const std::string& no_reason) {
  std::string host, reason = ssh_lines_.empty() ? "" : ssh_lines_.front();
  for (const auto& [address, name] : address_names_) {
    for (const auto& line : ssh_lines_) {
      if (host.empty() && names_address(line, address)) {
        host = name;
        reason = line;
      }
    }
  }
  ssh_lines_.clear();
  if (reason.empty()) reason = no_reason;
  if (failure_.exit_status == 0)
    failure_ = StartFailure{125, host,
                            (host.empty() ? "could not start the job on every host: "
                                          : host + ": could not start the job there: ") +
                                reason,
                            false, ""};
  // A daemon that did not start is a host's failure (unreachable, or cut off as it started),
  // whether or not ssh said which.
  failure_.host_lost = failure_.host == host;
  if (failure_.host_lost) failure_.cause = reason;
  if (quiet_losses_ && failure_.host_lost) reported_ = true;  // bsprun says it when it restarts
}

// A starter that waits for ever after ssh failed (Hydra) says nothing more: ssh's line alone is
// the failure. A connection that was cut is a host lost while the job ran; any other complaint
// (refused, no route, a host key, a login) kept the job from starting there.
std::string MpirunStderr::take_ssh_line_alone() {
  const std::string line = ssh_lines_.back();
  const bool cut = is_cut_connection(line);
  if (failure_.exit_status != 0 || stopping_) {
    ssh_lines_.clear();
    return "";
  }
  if (!cut) {
    not_started_over_ssh("ssh failed");
  } else {
    std::string host;
    for (const auto& [address, name] : address_names_)
      if (host.empty() && names_address(line, address)) host = name;
    ssh_lines_.clear();
    failure_ = StartFailure{125, host, lost_contact(host), !host.empty(), line};
  }
  if (quiet_losses_ && failure_.host_lost) return "";  // bsprun says it when it restarts
  return say_failure_once();
}

}  // namespace bspg::launcher
