// frozen.cpp - stopped processes of the job: see frozen.h.
#include "frozen.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

#include "hosts.h"
#include "say.h"
#include "untrusted.h"

namespace bspg::launcher {
namespace {

using Clock = StopClock::Clock;

// A stopped process whose time is this close to the timeout when a round sees it is lost: the
// round that ends at the deadline may end a little before it (seconds).
constexpr double kDeadlineSlack = 0.05;

// Variables that hold a process's MPI rank (Open MPI, MPICH, any PMIx server: Open MPI 5's jobs
// of several subjobs have only PMIX_RANK).
const char* const kRankVariables[] = {"OMPI_COMM_WORLD_RANK=", "PMI_RANK=", "PMIX_RANK="};

// The command names of MPI daemons and starters (/proc/PID/comm, at most 15 characters).
bool is_daemon_name(const std::string& name) {
  if (name == "orted" || name == "prted" || name == "hydra_pmi_proxy") return true;
  for (const char* starter : {"mpirun", "mpiexec", "orterun", "prterun"})
    if (name.rfind(starter, 0) == 0) return true;
  return false;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// State and parent from /proc/PID/stat (after the parenthesised name); false when it is gone.
bool read_state(long pid, char& state, long& ppid) {
  const std::string stat = read_text("/proc/" + std::to_string(pid) + "/stat");
  const std::size_t close_paren = stat.rfind(')');
  return close_paren != std::string::npos &&
         std::sscanf(stat.c_str() + close_paren + 1, " %c %ld", &state, &ppid) == 2;
}

std::string command_name(long pid) {
  std::string name = read_text("/proc/" + std::to_string(pid) + "/comm");
  if (!name.empty() && name.back() == '\n') name.pop_back();
  return name;
}

std::string uts_namespace(const std::string& pid) {
  char target[128];
  const ssize_t n = readlink(("/proc/" + pid + "/ns/uts").c_str(), target, sizeof target - 1);
  return n > 0 ? std::string(target, static_cast<std::size_t>(n)) : "";
}

}  // namespace

bool is_stopped_state(char state) { return state == 'T' || state == 't'; }

std::string job_processes_script(const std::string& environment_line) {
  // One line of sh for any login shell (guarded_command): no single quote, no backslash.
  return hosts::shell_assignment("marker", environment_line) +
         "self=$(readlink /proc/self/ns/uts); me=$(id -u); seen=; echo " +
         std::string(kJobProcessesBegin) +
         "; for f in $(grep -lzxF -e \"$marker\" /proc/[0-9]*/environ 2>/dev/null); do "
         "p=${f#/proc/}; p=${p%/environ}; [ \"$p\" != $$ ] || continue; "
         "[ \"$(readlink /proc/$p/ns/uts 2>/dev/null)\" = \"$self\" ] || continue; "
         "[ \"$(stat -c %u /proc/$p 2>/dev/null)\" = \"$me\" ] || continue; "
         "s=$(cat /proc/$p/stat 2>/dev/null) || continue; s=${s##*) }; set -- $s; "
         "r=$(grep -az -m1 -e ^OMPI_COMM_WORLD_RANK= -e ^PMI_RANK= -e ^PMIX_RANK= "
         "/proc/$p/environ 2>/dev/null | tr -d \"[:cntrl:]\"); r=${r#*=}; [ -n \"$r\" ] || r=-; "
         "echo \"proc $p $1 $r $(cat /proc/$p/comm 2>/dev/null)\"; "
         "case $(cat /proc/$2/comm 2>/dev/null) in orted|prted|hydra_pmi_proxy) "
         "case \" $seen \" in *\" $2 \"*) ;; *) seen=\"$seen $2\"; "
         "t=$(cat /proc/$2/stat 2>/dev/null); t=${t##*) }; "
         "echo \"daemon $2 ${t%% *} - $(cat /proc/$2/comm 2>/dev/null)\";; esac;; esac; "
         "done; echo " +
         std::string(kJobProcessesEnd);
}

std::vector<JobProcess> read_job_processes(const std::string& output, bool& complete) {
  std::vector<JobProcess> processes;
  std::vector<std::string> lines;
  complete = hosts::lines_between(output, kJobProcessesBegin, kJobProcessesEnd, lines) ==
             hosts::Listing::kComplete;
  for (const std::string& line : lines) {
    std::istringstream fields(line);
    std::string kind, pid, state, rank;
    fields >> kind >> pid >> state >> rank;
    if ((kind != "proc" && kind != "daemon") || state.size() != 1 || pid.empty() ||
        pid.find_first_not_of("0123456789") != std::string::npos || pid.size() > 9)
      continue;  // not a line this script writes: nothing to conclude from it
    JobProcess p;
    p.pid = std::stol(pid);
    p.state = state[0];
    p.daemon = kind == "daemon";
    if (!rank.empty() && rank.size() <= 9 &&
        rank.find_first_not_of("0123456789") == std::string::npos)
      p.rank = std::stoi(rank);
    std::getline(fields >> std::ws, p.name);
    p.daemon = p.daemon || is_daemon_name(p.name);
    processes.push_back(p);
  }
  return processes;
}

std::vector<JobProcess> local_job_processes(const std::vector<std::string>& lines) {
  std::vector<JobProcess> found;
  const std::string self_uts = uts_namespace("self");
  const uid_t me = geteuid();
  std::vector<long> parents;
  DIR* proc = opendir("/proc");
  if (!proc) return found;
  while (dirent* entry = readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(entry->d_name, &end, 10);
    if (pid <= 0 || *end != '\0' || pid == getpid()) continue;
    struct stat st {};
    if (stat(("/proc/" + std::string(entry->d_name)).c_str(), &st) != 0 || st.st_uid != me)
      continue;
    const std::string environment = read_text("/proc/" + std::string(entry->d_name) + "/environ");
    if (environment.empty()) continue;
    // NUL-separated NAME=VALUE entries: each wanted line must be one of them, whole.
    const std::string wrapped = std::string(1, '\0') + environment;
    bool all = true;
    for (const std::string& l : lines)
      all =
          all && wrapped.find(std::string(1, '\0') + l + std::string(1, '\0')) != std::string::npos;
    if (!all || uts_namespace(entry->d_name) != self_uts) continue;
    JobProcess p;
    p.pid = pid;
    long ppid = 0;
    if (!read_state(pid, p.state, ppid) || p.state == 'Z') continue;
    for (const char* variable : kRankVariables) {
      const std::size_t at = wrapped.find(std::string(1, '\0') + variable);
      if (at == std::string::npos) continue;
      const std::size_t value = at + 1 + std::strlen(variable);
      p.rank = std::atoi(wrapped.c_str() + value);
      break;
    }
    p.name = command_name(pid);
    p.daemon = is_daemon_name(p.name);
    found.push_back(p);
    parents.push_back(ppid);
  }
  closedir(proc);
  // The daemons (or mpirun) the processes hang from, once each.
  for (long ppid : parents) {
    if (std::any_of(found.begin(), found.end(), [&](const JobProcess& p) { return p.pid == ppid; }))
      continue;
    JobProcess parent;
    parent.pid = ppid;
    parent.name = command_name(ppid);
    long grandparent = 0;
    if (!is_daemon_name(parent.name) || !read_state(ppid, parent.state, grandparent)) continue;
    parent.daemon = true;
    found.push_back(parent);
  }
  return found;
}

std::string stopped_text(const std::string& host, const JobProcess& process, double seconds) {
  std::string who;
  const std::string name = untrusted::printable(process.name);
  if (!process.daemon && process.rank >= 0)
    who = "process " + std::to_string(process.rank);
  else if (process.daemon && (name == "orted" || name == "prted" || name == "hydra_pmi_proxy"))
    who = "the MPI daemon " + name + " (pid " + std::to_string(process.pid) + ")";
  else
    who = (name.empty() ? "a process" : name) + " (pid " + std::to_string(process.pid) + ")";
  const std::string how =
      process.state == 't' ? "stopped by a tracer (debugger)" : "stopped (SIGSTOP)";
  return who + " on " + host + ": " + how + " for " + seconds_text(seconds) + " s";
}

StopClock::StopClock(double timeout_s, Clock::time_point start)
    : timeout_s_(timeout_s), start_(start) {}

std::string StopClock::observe(const std::string& host, const std::vector<JobProcess>& processes,
                               Clock::time_point now) {
  const auto previous = last_round_.count(host) ? last_round_[host] : start_;
  last_round_[host] = now;
  // Processes of this host not seen this round have ended: forget them.
  for (auto it = stopped_since_.begin(); it != stopped_since_.end();) {
    const bool here = it->first.first == host;
    const bool seen = std::any_of(processes.begin(), processes.end(),
                                  [&](const JobProcess& p) { return p.pid == it->first.second; });
    it = here && !seen ? stopped_since_.erase(it) : std::next(it);
  }
  const JobProcess* longest = nullptr;
  double longest_s = 0;
  for (const JobProcess& p : processes) {
    const auto key = std::make_pair(host, p.pid);
    if (!is_stopped_state(p.state)) {
      stopped_since_.erase(key);
      continue;
    }
    const auto since = stopped_since_.emplace(key, previous).first->second;
    const double stopped_s = std::chrono::duration<double>(now - since).count();
    // A rank names the loss best; a daemon only when no rank is as long stopped.
    if (!longest || stopped_s > longest_s + 0.001 ||
        (longest->daemon && !p.daemon && stopped_s >= longest_s - 0.001)) {
      longest = &p;
      longest_s = stopped_s;
    }
  }
  if (!longest || longest_s < timeout_s_ - kDeadlineSlack) return "";
  lost_process_ = *longest;
  return stopped_text(host, *longest, longest_s);
}

StopClock::Clock::time_point StopClock::next_deadline() const {
  auto earliest = Clock::time_point::max();
  const auto timeout =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s_));
  for (const auto& [key, since] : stopped_since_) earliest = std::min(earliest, since + timeout);
  return earliest;
}

double FrozenWatch::interval_s(double timeout_s) { return std::clamp(timeout_s / 5, 0.2, 2.0); }

FrozenWatch::FrozenWatch(const std::string& job_id, const std::string& run_id, double timeout_s)
    : lines_{"BSPG_JOB_ID=" + job_id, "BSPG_RUN=" + run_id},
      interval_s_(interval_s(timeout_s)),
      clock_(timeout_s),
      next_look_(Clock::now()) {
  char name[256] = "this machine";
  if (gethostname(name, sizeof name - 1) != 0) std::strcpy(name, "this machine");
  name[sizeof name - 1] = '\0';
  host_ = untrusted::printable(name);
}

bool StoppedProcessEnder::end(const std::string& host, const JobProcess& process) {
  if (!end_ || process.daemon || process.rank < 0) return false;
  if (!ended_.insert({host, process.pid}).second) return false;
  return end_(host, process);
}

std::string FrozenWatch::lost() {
  const auto now = Clock::now();
  if (!lost_.empty() || now < next_look_) return lost_;
  lost_ = clock_.observe(host_, local_job_processes(lines_), now);
  if (!lost_.empty() && end_stopped && end_stopped.end(host_, clock_.lost_process()))
    lost_.clear();
  // The next look: after the interval, or at the deadline of a process seen stopped.
  next_look_ = std::min(
      now + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(interval_s_)),
      clock_.next_deadline());
  return lost_;
}

}  // namespace bspg::launcher
