// The probe's remote command and the checks on what a host answers.
#include "probe_answer.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "untrusted.h"

namespace bspg::hosts::detail {
namespace {

const char* const kBegin = "bspg-probe-v2";
const char* const kEnd = "bspg-probe-end";

// The whole token as a number, in the C locale whatever the user's; false if it is not one.
template <typename Number>
bool parse_number(const std::string& token, Number& value) {
  const char* end = token.data() + token.size();
  const auto [stop, error] = std::from_chars(token.data(), end, value);
  return error == std::errc() && stop == end;
}

std::string quoted(const std::string& value) { return "'" + untrusted::excerpt(value, 40) + "'"; }

std::string read_loads(const std::string& line, ProbeResult& result) {
  std::istringstream words(line);
  std::string token;
  double* const loads[] = {&result.load1, &result.load5, &result.load15};
  for (double* load : loads) {
    if (!(words >> token)) {
      if (load == &result.load1) return "no load average (/proc/loadavg) on the host";
      return "unreadable load average " + quoted(line) + " in /proc/loadavg";
    }
    // from_chars reads "nan", "inf" and "1e308" too: they are refused below, not misread.
    if (!parse_number(token, *load))
      return "unreadable load average " + quoted(token) + " in /proc/loadavg";
    if (!std::isfinite(*load) || *load < 0 || *load > kMaxLoad)
      return "impossible load average " + quoted(token) + " in /proc/loadavg";
  }
  return "";
}

std::string read_cores(const std::string& rest, ProbeResult& result) {
  std::istringstream words(rest);
  std::string token;
  if (!(words >> token)) return "no core count (bspg-hostinfo, nproc) on the host";
  long long cores = 0;
  if (!parse_number(token, cores) || cores < 1 || cores > kMaxCores)
    return "impossible core count " + quoted(token) + " (bspg-hostinfo --cores, nproc)";
  result.cores = static_cast<int>(cores);
  return "";
}

std::string read_memory(const std::string& rest, ProbeResult& result) {
  std::istringstream words(rest);
  std::string token, unit;
  words >> token >> unit;
  long long kb = -1;
  if (!parse_number(token, kb) || unit != "kB" || kb < 0 || kb > kMaxMemoryKb)
    return "impossible free memory " + quoted(token + (unit.empty() ? "" : " " + unit)) +
           " (MemAvailable in /proc/meminfo)";
  result.mem_available_kb = kb;
  return "";
}

std::string read_hostname(const std::string& rest, ProbeResult& result) {
  std::istringstream words(rest);
  std::string name;
  if (!(words >> name)) return "no host name (uname -n) on the host";
  const bool plain = std::all_of(name.begin(), name.end(), [](unsigned char c) {
    return c > 0x20 && c < 0x7f;  // what uname -n gives: visible ASCII
  });
  if (name.size() > kMaxHostName || !plain)
    return "impossible host name " + quoted(name) + " (uname -n)";
  result.hostname = name;
  return "";
}

std::string read_program(const std::string& rest, ProbeResult& result) {
  if (rest == "ok")
    result.program_status = ProgramStatus::kOk;
  else if (rest == "notfound")
    result.program_status = ProgramStatus::kNotFound;
  else if (rest == "notregular")
    result.program_status = ProgramStatus::kNotRegularFile;
  else if (rest == "notexec")
    result.program_status = ProgramStatus::kNotExecutable;
  else
    return "unexpected program check " + quoted(rest);
  return "";
}

// "SITE T0 T1": a connect to SITE's first host, timed by bash's $EPOCHREALTIME before and after.
std::string read_round_trip(const std::string& rest, ProbeResult& result) {
  std::istringstream words(rest);
  std::string site, t0, t1;
  words >> site >> t0 >> t1;
  const auto seconds = [](const std::string& text, double& value) {
    if (text.empty() || text.size() > 24 ||
        !std::all_of(text.begin(), text.end(),
                     [](unsigned char c) { return std::isdigit(c) || c == '.'; }))
      return false;
    value = std::strtod(text.c_str(), nullptr);
    return true;
  };
  double a = 0, b = 0;
  const bool name_ok =
      !site.empty() && site.size() <= 64 && std::all_of(site.begin(), site.end(), [](unsigned char c) {
        return std::isalnum(c) || c == '.' || c == '_' || c == '-';
      });
  if (!name_ok || !seconds(t0, a) || !seconds(t1, b) || b < a || b - a > 60)
    return "impossible round trip " + quoted(rest);
  result.site_round_trips_ms.emplace_back(site, (b - a) * 1000);
  return "";
}

}  // namespace

}  // namespace bspg::hosts::detail

namespace bspg::hosts {

std::string octal_escaped(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '/' || c == '.' || c == '_' || c == '-';
    if (plain) {
      out += static_cast<char>(c);
    } else {
      char escape[8];
      std::snprintf(escape, sizeof escape, "\\%03o", c);
      out += escape;
    }
  }
  return out;
}

std::string shell_assignment(const std::string& name, const std::string& value) {
  return name + "=$(printf \"" + octal_escaped(value) + "_\"); " + name + "=${" + name + "%_}; ";
}

Listing lines_between(const std::string& output, const std::string& begin, const std::string& end,
                      std::vector<std::string>& lines) {
  std::istringstream text(output);
  std::string line;
  bool begun = false;
  while (std::getline(text, line)) {
    if (!begun)
      begun = line == begin;
    else if (line == end)
      return Listing::kComplete;
    else
      lines.push_back(line);
  }
  return begun ? Listing::kCutShort : Listing::kMissing;
}

std::string guarded_command(const std::string& script, int timeout_ms) {
  // The inner sh runs a watchdog first: it holds the channel's stdin and kills the whole session
  // (kill 0: sshd made the command a process group of its own) when that closes, which happens
  // when the caller disconnects, times out or dies; `timeout` bounds it even if the connection
  // hangs. One line, no single quote, and no backslash but the octal escapes: every login shell
  // passes it to sh unchanged.
  const long long bound_s = (static_cast<long long>(timeout_ms) + 999) / 1000 + 1;
  return "sh -c '"
         "exec 3<&0 </dev/null; t=; if command -v timeout >/dev/null 2>&1; then t=\"timeout -s "
         "KILL " +
         std::to_string(bound_s) +
         "\"; fi; ($t cat <&3 >/dev/null 2>&1; kill -9 0) >/dev/null 2>&1 & exec 3<&-; " + script +
         "'";
}

}  // namespace bspg::hosts

namespace bspg::hosts::detail {

std::string probe_command(const ProbeOptions& opt) {
  return guarded_command(probe_script(opt), opt.timeout_ms);
}

}  // namespace bspg::hosts::detail

namespace bspg::hosts {

std::string probe_script(const ProbeOptions& opt) {
  // The figures, then the program check, then the end marker.
  std::string script =
      "echo " + std::string(detail::kBegin) +
      "; echo load $(cat /proc/loadavg); "
      "echo cores $(bspg-hostinfo --cores 2>/dev/null || nproc 2>/dev/null || getconf "
      "_NPROCESSORS_ONLN); "
      "grep MemAvailable /proc/meminfo; echo hostname $(uname -n); ";
  if (!opt.program.empty()) {
    script += shell_assignment("p", opt.program) +
              "if [ ! -e \"$p\" ]; then echo program notfound; "
              "elif [ ! -f \"$p\" ]; then echo program notregular; "
              "elif [ ! -x \"$p\" ]; then echo program notexec; else echo program ok; fi; ";
  }
  if (!opt.round_trip_targets.empty()) {
    // One bash per target, bounded by timeout: a target that does not answer costs 1 s at most.
    script += shell_assignment("b", "t0=$EPOCHREALTIME; exec 3<>\"/dev/tcp/$1/$2\" && echo \"rtt $3 $t0 $EPOCHREALTIME\"") +
              "if command -v bash >/dev/null 2>&1 && command -v timeout >/dev/null 2>&1; then ";
    for (const auto& t : opt.round_trip_targets)
      script += shell_assignment("a", t.address) + shell_assignment("s", t.site) +
                "LC_ALL=C timeout 1 bash -c \"$b\" rtt \"$a\" " + std::to_string(t.port) +
                " \"$s\" 2>/dev/null; ";
    script += "fi; ";
  }
  script += "echo " + std::string(detail::kEnd);
  return script;
}

std::string read_probe_script_output(const std::string& output, bool program_checked,
                                     ProbeResult& result) {
  return detail::read_probe_answer(output, program_checked, result);
}

}  // namespace bspg::hosts

namespace bspg::hosts::detail {

std::string read_probe_answer(const std::string& output, bool program_checked,
                              ProbeResult& result) {
  std::istringstream lines(output);
  std::string line;
  bool begun = false, ended = false, have_load = false, have_cores = false, have_name = false;
  bool have_program = false;
  while (!ended && std::getline(lines, line)) {
    if (!begun) {  // whatever shell start-up files print comes before the marker
      begun = line == kBegin;
      continue;
    }
    const size_t space = line.find(' ');
    const std::string key = line.substr(0, space);
    const std::string rest = space == std::string::npos ? "" : line.substr(space + 1);
    std::string problem;
    if (key == kEnd) {
      ended = true;
    } else if (key == "load") {
      problem = read_loads(rest, result);
      have_load = true;
    } else if (key == "cores") {
      problem = read_cores(rest, result);
      have_cores = true;
    } else if (key == "MemAvailable:") {
      problem = read_memory(rest, result);
    } else if (key == "hostname") {
      problem = read_hostname(rest, result);
      have_name = true;
    } else if (key == "rtt") {
      problem = read_round_trip(rest, result);
    } else if (key == "program" && program_checked) {
      problem = read_program(rest, result);
      have_program = true;
    } else {
      problem = "unexpected line " + quoted(line);
    }
    if (!problem.empty()) return problem;
  }
  if (!begun) {
    std::string first = output.substr(0, output.find('\n'));
    return "unexpected answer: " + untrusted::excerpt(first, 200);
  }
  if (!have_load) return "no load average (/proc/loadavg) on the host";
  if (!have_cores) return "no core count (bspg-hostinfo, nproc) on the host";
  if (!have_name) return "no host name (uname -n) on the host";
  if (program_checked && !have_program) return "no answer about the program";
  if (!ended) return "answer cut short (no end marker)";
  return "";
}

}  // namespace bspg::hosts::detail
