// probe_hosts: every candidate at once, one thread and one SSH session each.
#include "hosts.h"
#include "ssh_connection.h"

#include <locale>
#include <sstream>
#include <thread>

namespace bspg::hosts {
namespace {

using detail::Clock;

// One command for everything the ranking needs. Wrapped in `sh -c` so that the user's login shell
// (bash, zsh, csh, ...) does not matter. The marker skips whatever shell start-up files print.
const char* const kProbeCommand =
    "sh -c 'echo bspg-probe-v1; cat /proc/loadavg; "
    "echo cores $(bspg-hostinfo --cores 2>/dev/null || nproc 2>/dev/null || getconf _NPROCESSORS_ONLN); "
    "grep MemAvailable /proc/meminfo; echo hostname $(uname -n)'";

std::string first_line(const std::string& text) {
  const auto end = text.find('\n');
  std::string line = text.substr(0, end);
  if (line.size() > 200) line = line.substr(0, 200) + "...";
  return line;
}

// Fills hostname, cores, loads and memory from the probe command's output; "" or the problem.
std::string parse_probe_output(const std::string& out, ProbeResult& result) {
  std::istringstream lines(out);
  lines.imbue(std::locale::classic());
  std::string line;
  bool marker = false, have_load = false, have_cores = false;
  while (std::getline(lines, line)) {
    if (!marker) {
      marker = line == "bspg-probe-v1";
      if (marker && std::getline(lines, line)) {
        std::istringstream load(line);
        load.imbue(std::locale::classic());
        have_load = static_cast<bool>(load >> result.load1 >> result.load5 >> result.load15);
      }
      continue;
    }
    std::istringstream words(line);
    words.imbue(std::locale::classic());
    std::string key;
    words >> key;
    if (key == "cores") {
      have_cores = static_cast<bool>(words >> result.cores) && result.cores > 0;
    } else if (key == "MemAvailable:") {
      words >> result.mem_available_kb;
    } else if (key == "hostname") {
      words >> result.hostname;
    }
  }
  if (!marker) return "unexpected answer: " + first_line(out);
  if (!have_load) return "no load average (/proc/loadavg) on the host";
  if (!have_cores) return "no core count (bspg-hostinfo, nproc) on the host";
  if (result.hostname.empty()) return "no host name (uname -n) on the host";
  return "";
}

ProbeResult probe_one(const HostSpec& host, const ProbeOptions& opt) {
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::milliseconds(opt.timeout_ms);
  ProbeResult result;
  result.host = host;
  try {
    detail::Connection connection(host, opt);
    result.error = connection.open(deadline);
    if (result.error.empty()) {
      const detail::CommandOutput output = connection.run(kProbeCommand, deadline);
      if (!output.error.empty()) {
        result.error = output.error;
      } else if (output.exit_status != 0 && output.exit_status != -1) {
        result.error = "command failed (exit " + std::to_string(output.exit_status) + "): " +
                       first_line(output.err.empty() ? output.out : output.err);
      } else if (std::string problem = parse_probe_output(output.out, result); !problem.empty()) {
        result.error = "command failed: " + problem +
                       (output.err.empty() ? "" : " (" + first_line(output.err) + ")");
      }
    }
  } catch (const std::exception& e) {
    result.error = std::string("internal error: ") + e.what();
  }
  result.ok = result.error.empty();
  result.elapsed_s = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

}  // namespace

std::vector<ProbeResult> probe_hosts(const std::vector<HostSpec>& hosts, const ProbeOptions& opt) {
  std::vector<ProbeResult> results(hosts.size());
  std::vector<std::thread> threads;
  threads.reserve(hosts.size());
  for (size_t i = 0; i < hosts.size(); ++i) {
    try {
      threads.emplace_back([&, i] { results[i] = probe_one(hosts[i], opt); });
    } catch (const std::system_error&) {
      results[i] = probe_one(hosts[i], opt);  // no more threads: probe this one here
    }
  }
  for (auto& thread : threads) thread.join();
  return results;
}

}  // namespace bspg::hosts
