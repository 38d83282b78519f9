// hydra_lines.cpp - MPICH's Hydra's single lines on mpiexec's stderr: a program, directory or
// proxy that failed on a host, and which host went when Hydra only said that a proxy ended.
#include <string>
#include <utility>
#include <vector>

#include "message_lines.h"
#include "mpirun_messages.h"

namespace bspg::launcher {
using namespace messages_internal;
namespace {

// "X (reason)", the way Hydra ends its lines: {"X", "reason"} ({"X", ""} without one).
std::pair<std::string, std::string> split_reason(const std::string& text) {
  const auto open = text.rfind(" (");
  if (open == std::string::npos) return {text, ""};
  std::string reason = text.substr(open + 2);
  if (!reason.empty() && reason.back() == ')') reason.pop_back();
  return {text.substr(0, open), reason};
}

// "emu2" of "[proxy:0:1@emu2] ...".
std::string hydra_host(const std::string& line) {
  const auto at = line.find('@');
  const auto end = at == std::string::npos ? at : line.find(']', at);
  return end == std::string::npos ? "" : line.substr(at + 1, end - at - 1);
}

}  // namespace

std::string MpirunStderr::hosts_gone(const std::vector<std::string>& unreachable) {
  if (unreachable.empty() || !failure_pending()) return "";
  // "emu2 (ssh: connect to host ...: Connection refused)", as RemoteStop gives it.
  const std::string& first = unreachable.front();
  const auto open = first.find(" (");
  const std::string host = first.substr(0, open);
  std::string why = open == std::string::npos ? "" : first.substr(open + 2);
  if (!why.empty() && why.back() == ')') why.pop_back();
  if (proxy_not_launched_)
    failure_ = StartFailure{125, host, host + ": could not start the job there: " + why, true, why};
  else
    failure_ = StartFailure{125, host, lost_contact(host), true, "MPICH's proxy there ended"};
  proxy_ended_ = StartFailure{};
  if (quiet_losses_) return "";  // bsprun says it when it restarts
  return say_failure_once();
}

// MPICH's Hydra speaks in single lines, and waits for ever after some of them: a program that a
// proxy could not execute, or (after ssh's own complaint) a proxy that never started. Those
// become the start failure; Hydra's account of its own state, then and while the job is being
// stopped, is dropped.
std::string MpirunStderr::take_hydra_line(const std::string& line) {
  const std::string execvp = "execvp error on file ", wdir = "unable to change wdir to ";
  if (const auto at = line.find(wdir); at != std::string::npos && line.rfind("[proxy:", 0) == 0) {
    const std::string directory = split_reason(trim(line.substr(at + wdir.size()))).first;
    const std::string host = hydra_host(line);
    if (failure_.exit_status == 0)
      failure_ = StartFailure{125, host,
                              host + ": cannot change to the working directory " + directory +
                                  " (it does not exist there, or cannot be entered)",
                              false, ""};
    ssh_lines_.clear();
    return say_failure_once();
  }
  if (const auto at = line.find(execvp); at != std::string::npos && line.rfind("[proxy:", 0) == 0) {
    const auto [file, reason] = split_reason(trim(line.substr(at + execvp.size())));
    const std::string host = hydra_host(line);
    if (failure_.exit_status == 0) {
      // Hydra says "Permission denied" of a path that does not exist as well.
      if (reason == "No such file or directory")
        failure_ =
            StartFailure{127, host, host + ": program " + file + " not found there", false, ""};
      else if (reason == "Permission denied")
        failure_ = StartFailure{127, host,
                                host + ": program " + file + " not found there, or not executable",
                                false, ""};
      else
        failure_ =
            StartFailure{126, host, host + ": cannot execute " + file + ": " + reason, false, ""};
    }
  } else if (line.rfind("[proxy:", 0) == 0 && failure_.exit_status == 0 &&
             (contains(line, "unable to connect to server ") ||
              contains(line, "unable to connect from ") ||
              contains(line, "unable to get host address for "))) {
    // A proxy that cannot reach mpiexec back (at the name or address mpiexec gave it: a name the
    // host cannot resolve, or one it resolves to itself): Hydra then waits for ever.
    const std::string host = hydra_host(line);
    const auto said = line.find("): ");
    std::string detail = said == std::string::npos ? line : trim(line.substr(said + 3));
    detail = detail.substr(0, detail.find(" (check for firewalls!)"));
    failure_ =
        StartFailure{125, host,
                     host + ": MPICH's proxy there could not connect back to mpiexec (" + detail +
                         "); where this machine has several networks, name the one the "
                         "hosts reach in HYDRA_IFACE",
                     false, ""};
    ssh_lines_.clear();
    return say_failure_once();
  } else if (!ssh_lines_.empty() && failure_.exit_status == 0) {
    not_started_over_ssh("MPICH's proxy did not start (mpiexec gives no reason)");
  } else if (failure_.exit_status == 0 && !stopping_ && contains(line, "[mpiexec@") &&
             contains(line, " control_cb (") && contains(line, "assert (!closed) failed") &&
             !death_explained()) {
    // A proxy hung up before anything else was said: its own line (a working directory it could
    // not enter, above) is often lost as it ends, or cut short by mpiexec's ("[proxy:0:0@emu1]
    // [mpiexec@vm] control_cb ...", whose start names the proxy's host).
    // Held for a second (flush): ssh's word that the host's connection was cut may follow it.
    const std::string host = line.rfind("[proxy:", 0) == 0 ? hydra_host(line) : "";
    proxy_ended_ =
        StartFailure{125, host,
                     "could not start the job" +
                         (host.empty() ? std::string(": MPICH's proxy on one of the hosts")
                                       : " on " + host + ": MPICH's proxy there") +
                         " ended before its processes started (mpiexec gives no reason; a "
                         "working directory missing there ends it so)",
                     false, ""};
    return "";
  } else if (failure_.exit_status == 0 && !stopping_ && contains(line, "[mpiexec@") &&
             contains(line, "Launch proxy failed")) {
    // MPICH 4.2: ssh failed to start a proxy, and ssh's own line may be lost; which host is
    // learnt when bsprun cannot reach it either (hosts_gone), else said after a second.
    proxy_not_launched_ = true;
    proxy_ended_ = StartFailure{125, "",
                                "could not start the job on every host: MPICH's mpiexec could "
                                "not start its proxy on one of them (it does not say which)",
                                true, ""};
    return "";
  } else if (failure_.exit_status == 0 && !stopping_ && proxy_ended_.exit_status == 0) {
    return release_ssh_lines() + line + "\n";
  }
  ssh_lines_.clear();
  return say_failure_once();
}

}  // namespace bspg::launcher
