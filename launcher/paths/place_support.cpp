// place_support.cpp - see place_support.h.
#include "place_support.h"

#include <limits.h>
#include <unistd.h>

#include <set>

#include "restart.h"
#include "say.h"

namespace bspg::launcher {

// bspg-hostinfo next to this bsprun (as installed, and in the build tree); hosts that share the
// file system find it there, others on their PATH.
std::string this_bsprun() {
  char path[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return "";
  path[n] = '\0';
  return path;
}

std::string sibling_hostinfo() {
  const std::string self = this_bsprun();
  if (self.empty()) return "bspg-hostinfo";
  return self.substr(0, self.rfind('/') + 1) + "bspg-hostinfo";
}

// The lines of a host's listing that were skipped, each named once.
void say_skipped(const Holdings& h, const std::string& dir) {
  for (const std::string& line : h.skipped)
    say(h.host + ": skipped in the listing of " + dir + ": " + line);
}

// "a", "a and b", "a, b and c".
std::string and_list(const std::vector<std::string>& items) {
  std::string text;
  for (std::size_t i = 0; i < items.size(); ++i)
    text += (i == 0 ? "" : i + 1 == items.size() ? " and " : ", ") + items[i];
  return text;
}

std::string rank_list(const std::vector<int>& ranks) {
  std::vector<std::string> items;
  for (int rank : ranks) items.push_back(std::to_string(rank));
  return and_list(items);
}

// The loss of processes that left no exit note (exit_notes.h), on `where` ("emu1 and emu2").
std::string lost_processes_text(const std::vector<int>& lost, const std::string& where,
                                const std::string& mpi_name) {
  return lost.size() == 1
             ? "process " + rank_list(lost) + " on " + where +
                   ": it did not end by itself (killed by a signal), found by bsprun"
             : "processes " + rank_list(lost) + " on " + where +
                   ": they did not end by themselves (one was killed by a signal, and " + mpi_name +
                   " ended the others), found by bsprun";
}

// Each process's host under the plan, in pid order.
std::vector<std::string> hosts_of_pids(const GridPlan& plan) {
  std::vector<std::string> hosts;
  for (const auto& sj : plan.subjobs)
    for (const auto& h : rsl::placement(sj))
      hosts.insert(hosts.end(), static_cast<std::size_t>(h.count), h.host);
  return hosts;
}

HostRanks ranks_on_host(const GridPlan& plan, const std::vector<std::string>& host_of_pid,
                        const std::string& host) {
  std::vector<std::string> world = host_of_pid;
  for (const auto& spare : plan.spares)
    world.insert(world.end(), static_cast<std::size_t>(spare.count), spare.contact);
  HostRanks ranks;
  for (std::size_t r = 0; r < world.size(); ++r)
    if (world[r] == host) {
      ranks.all.push_back(static_cast<int>(r));
      if (r < host_of_pid.size()) ranks.job.push_back(static_cast<int>(r));
    }
  return ranks;
}

// The plan's hosts, for messages: "emu1 emu3".
std::string chosen_text(const GridPlan& plan) {
  std::string text;
  for (const auto& h : plan.chosen) text += (text.empty() ? "" : " ") + h.name;
  return text;
}

// The plan's host that calls itself `name` (its host name, or the short form of one), or "".
std::string chosen_calling_itself(const GridPlan& plan, const std::string& name) {
  for (const auto& h : plan.chosen)
    if (h.name == name) return h.name;
  // "node1" for "node1.example.org", or the other way round.
  const auto short_name = [](const std::string& n) { return n.substr(0, n.find('.')); };
  if (name.find_first_not_of("0123456789.") == std::string::npos) return "";  // an address
  for (const auto& h : plan.chosen)
    if (short_name(h.name) == short_name(name) && !short_name(name).empty()) return h.name;
  return "";
}

// One host's checkpoint listing: kept, or (problem) left out and, with -v, said why.
void keep_listing(const std::string& host, const std::string& problem, Holdings&& h,
                  const Options& opt, const std::string& dir, std::vector<Holdings>& holdings) {
  if (!problem.empty()) {
    if (opt.verbose) say(host + ": cannot look at the checkpoints in " + dir + ": " + problem);
    return;
  }
  say_skipped(h, dir);
  holdings.push_back(std::move(h));
}

bool take_unsaid_end_for_restart(RunResult& result, const ExitNoteSet& notes,
                                 const std::vector<std::string>& host_of_pid) {
  // Open MPI's forwarding of output can drop the last lines of processes that end together: the
  // library's line is then lost, but not its processes' notes.
  if (result.no_recovery || result.exit_status != kExitNoRecoveryInPlace ||
      !notes.ended_with(kExitNoRecoveryInPlace))
    return false;
  NoRecoveryInPlace unsaid;
  unsaid.why = "its reason did not arrive; the processes' exit notes say it ended the job";
  for (int rank : notes.not_ended())
    if (rank >= 0 && static_cast<std::size_t>(rank) < host_of_pid.size()) {
      unsaid.lost.pid = rank;
      unsaid.lost.host = host_of_pid[static_cast<std::size_t>(rank)];
      break;
    }
  result.no_recovery = unsaid;
  return true;
}

// A process of the run killed by a signal, from the exit notes of the run's hosts (`complete`:
// every host's were read): the job's loss, unless a process failed by exit (the program's
// failure) or the run ended otherwise (a crash said so itself, a lost host (other_loss: one the
// place noticed itself), a stop).
void take_killed_process(RunResult& result, const ExitNoteSet& notes, bool complete,
                         bool other_loss, const std::vector<std::string>& host_of_pid,
                         const std::string& mpi_name) {
  const bool crashed = result.exit_status > 128 && is_crash_signal(result.exit_status - 128);
  // With spares the library accounts for its lost processes itself (in_place.h).
  if (take_unsaid_end_for_restart(result, notes, host_of_pid)) return;
  if (!result.recoveries.empty() || result.no_recovery) return;
  if (!complete || !result.started || result.start_overdue || result.forwarded_signal ||
      result.timed_out || crashed || result.death.rank >= 0 || !result.lost.empty() ||
      result.start_failure.host_lost || other_loss || notes.ended_with_failure())
    return;
  // Only the job's processes (host_of_pid has one entry each): spares come after them, and a
  // spare lost while it waited is said by the library and costs the job nothing.
  std::vector<int> lost;
  for (int rank : notes.not_ended())
    if (rank >= 0 && static_cast<std::size_t>(rank) < host_of_pid.size()) lost.push_back(rank);
  if (lost.empty()) return;
  std::set<std::string> where;
  for (int rank : lost) where.insert(host_of_pid[static_cast<std::size_t>(rank)]);
  result.death.rank = lost.front();
  result.death.host = where.size() == 1 ? *where.begin() : "";
  result.death.described = lost_processes_text(
      lost, and_list(std::vector<std::string>(where.begin(), where.end())), mpi_name);
  if (result.exit_status == 0) result.exit_status = 1;
}

}  // namespace bspg::launcher
