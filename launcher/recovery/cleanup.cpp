// cleanup.cpp - bsprun --clean-up: see cleanup.h.
#include "cleanup.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <iostream>
#include <map>
#include <sstream>

#include "hosts.h"
#include "localhost.h"
#include "remote_stop.h"
#include "say.h"
#include "untrusted.h"

namespace bspg::launcher {
namespace {

constexpr const char* kHere = "this machine";

// end_job_script takes up to about 6 s once it found the processes; finding them is quick.
constexpr double kScriptSeconds = 15;

std::string joined(const std::vector<std::string>& items) {
  std::string text;
  for (const auto& item : items) text += (text.empty() ? "" : ", ") + item;
  return text;
}

std::string count_text(std::size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace

CleanedHost read_cleanup_output(const std::string& host, const std::string& output) {
  CleanedHost result;
  result.host = host;
  result.reached = true;
  std::map<long, std::string> found;  // pid -> how bsprun names it
  std::vector<long> order, left;
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string word, pid_text, kind, state, name;
    fields >> word >> pid_text;
    if (pid_text.empty() || pid_text.size() > 9 ||
        pid_text.find_first_not_of("0123456789") != std::string::npos)
      continue;
    const long pid = std::stol(pid_text);
    if (word == "found") {
      fields >> kind >> state;
      std::getline(fields >> std::ws, name);
      if (found.count(pid)) continue;
      std::string text = untrusted::excerpt(name, 32) + " (pid " + pid_text;
      if (kind == "daemon") text += ", MPI daemon";
      if (state == "T" || state == "t") text += ", stopped";
      found[pid] = text + ")";
      order.push_back(pid);
    } else if (word == "left") {
      left.push_back(pid);
    }
  }
  // The job's processes first, then their daemons.
  std::stable_partition(order.begin(), order.end(), [&](long pid) {
    return found[pid].find(", MPI daemon") == std::string::npos;
  });
  for (long pid : order) {
    bool still_there = false;
    for (long l : left) still_there = still_there || l == pid;
    (still_there ? result.left : result.ended).push_back(found[pid]);
  }
  return result;
}

std::vector<std::string> cleanup_lines(const std::string& job_id, const CleanedHost& host) {
  std::vector<std::string> lines;
  if (!host.reached) {
    lines.push_back(host.host + ": could not reach it (" + untrusted::printable(host.error) +
                    "); processes of job " + job_id + " there may still run");
    return lines;
  }
  if (!host.ended.empty())
    lines.push_back(host.host + ": ended " + count_text(host.ended.size(), "process", "processes") +
                    " of job " + job_id + ": " + joined(host.ended));
  if (!host.left.empty())
    lines.push_back(host.host + ": " + count_text(host.left.size(), "process", "processes") +
                    " of job " + job_id + " did not end even after SIGKILL: " + joined(host.left));
  if (host.ended.empty() && host.left.empty())
    lines.push_back(host.host + ": nothing of job " + job_id + " left");
  return lines;
}

int clean_up_job(const Options& opt) {
  const std::string script = end_job_script("BSPG_JOB_ID=" + opt.job_id, getpid(), true);
  std::vector<hosts::HostSpec> candidates;
  if (!opt.hostfile.empty()) {
    try {
      candidates = hosts::read_hostfile(opt.hostfile);
    } catch (const std::exception& e) {
      say(e.what());
      return kExitLaunchFailed;
    }
  }

  std::vector<CleanedHost> results;
  {
    std::string error;
    const std::string output = run_sh_here(script, kScriptSeconds, error);
    CleanedHost here = read_cleanup_output(kHere, output);
    if (!error.empty()) {
      here.reached = false;
      here.error = error;
    }
    results.push_back(here);
  }
  if (!candidates.empty()) {
    hosts::ProbeOptions probe;
    probe.timeout_ms = static_cast<int>((opt.probe_timeout_s + kScriptSeconds) * 1000);
    probe.accept_unknown_host_keys = opt.accept_unknown_host_keys;
    if (opt.fanout > 0) probe.fanout = opt.fanout;
    const auto runs =
        hosts::run_on_hosts(candidates, hosts::guarded_command(script, probe.timeout_ms), probe);
    for (const auto& run : runs) {
      CleanedHost host = read_cleanup_output(run.host.name, run.out);
      if (!run.ok || run.exit_status != 0) {
        host.reached = false;
        host.error =
            !run.ok ? run.error
                    : "the clean-up script failed (exit " + std::to_string(run.exit_status) +
                          "): " + untrusted::excerpt(run.err.substr(0, run.err.find('\n')), 120);
      }
      results.push_back(host);
    }
  }

  std::vector<std::string> unreached, unended;
  for (const CleanedHost& host : results) {
    for (const std::string& line : cleanup_lines(opt.job_id, host)) say(line);
    if (!host.reached) unreached.push_back(host.host);
    if (host.reached && !host.left.empty()) unended.push_back(host.host);
  }
  if (unreached.empty() && unended.empty()) {
    say("job " + opt.job_id + ": nothing of it is left on " +
        (candidates.empty()
             ? std::string(kHere)
             : std::string(kHere) + " or the " + count_text(candidates.size(), "host", "hosts") +
                   " of " + opt.hostfile));
    return 0;
  }
  std::string problem;
  if (!unreached.empty()) problem = "could not reach " + joined(unreached);
  if (!unended.empty())
    problem +=
        (problem.empty() ? "" : "; ") + std::string("processes did not end on ") + joined(unended);
  say("job " + opt.job_id + ": " + problem + "; processes of it may still run there");
  return kExitLaunchFailed;
}

}  // namespace bspg::launcher
