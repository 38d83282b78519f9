// allocate.cpp - ranking and placement, see the policy in allocate.h.
#include "allocate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <queue>
#include <sstream>

#include "options.h"
#include "untrusted.h"

namespace bspg::launcher {
namespace {

int usable_slots(const hosts::ProbeResult& p) {
  if (!p.ok) return 0;
  if (p.host.slots > 0) return p.host.slots;
  return std::max(p.cores, 1);
}

std::string memory_text(long long kb) {
  char buf[32];
  if (kb >= 1024LL * 1024)
    std::snprintf(buf, sizeof buf, "%.1fG", kb / (1024.0 * 1024.0));
  else
    std::snprintf(buf, sizeof buf, "%lldM", kb / 1024);
  return buf;
}

std::string address_of(const hosts::HostSpec& h) { return h.address.empty() ? h.name : h.address; }

// One row per candidate; `status` is the last column.
std::string render_table(const std::vector<hosts::ProbeResult>& probes,
                         const std::vector<std::string>& status) {
  size_t name_w = 4, addr_w = 7;
  for (const auto& p : probes) {
    name_w = std::max(name_w, p.host.name.size());
    addr_w = std::max(addr_w, address_of(p.host).size());
  }
  std::ostringstream out;
  char buf[512];
  std::snprintf(buf, sizeof buf, "%-*s  %-*s  %5s  %6s  %8s  %s\n", int(name_w), "HOST",
                int(addr_w), "ADDRESS", "CORES", "LOAD", "FREE-MEM", "PROCESSES");
  out << buf;
  for (size_t i = 0; i < probes.size(); ++i) {
    const auto& p = probes[i];
    if (p.ok) {
      std::snprintf(buf, sizeof buf, "%-*s  %-*s  %5d  %6.2f  %8s  ", int(name_w),
                    p.host.name.c_str(), int(addr_w), address_of(p.host).c_str(), p.cores, p.load1,
                    memory_text(p.mem_available_kb).c_str());
    } else {
      std::snprintf(buf, sizeof buf, "%-*s  %-*s  %5s  %6s  %8s  ", int(name_w),
                    p.host.name.c_str(), int(addr_w), address_of(p.host).c_str(), "-", "-", "-");
    }
    out << buf << untrusted::printable(status[i]) << "\n";
  }
  return out.str();
}

}  // namespace

Allocation allocate(const std::vector<hosts::ProbeResult>& probes, int nprocs) {
  if (nprocs <= 0) throw AllocationError("the number of processes must be positive");
  Allocation a;
  a.nprocs = nprocs;
  for (const auto& p : probes) {
    HostChoice c;
    c.probe = p;
    c.slots = usable_slots(p);
    c.free_capacity = p.ok ? p.cores - p.load1 : 0;
    a.candidates.push_back(c);
  }

  // Rank reachable hosts; stable sort keeps host file order for full ties.
  std::vector<size_t> order;
  for (size_t i = 0; i < a.candidates.size(); ++i)
    if (a.candidates[i].probe.ok) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    const auto& cx = a.candidates[x];
    const auto& cy = a.candidates[y];
    if (cx.free_capacity != cy.free_capacity) return cx.free_capacity > cy.free_capacity;
    return cx.probe.mem_available_kb > cy.probe.mem_available_kb;
  });
  for (size_t r = 0; r < order.size(); ++r) a.candidates[order[r]].rank = static_cast<int>(r);

  int total_slots = usable_slot_total(probes);
  if (total_slots < nprocs) {
    std::ostringstream msg;
    msg << "not enough capacity: " << nprocs << " processes requested, but ";
    if (order.empty()) {
      msg << "none of the " << probes.size() << " candidate hosts is reachable";
    } else {
      msg << "the " << order.size() << " reachable host" << (order.size() == 1 ? "" : "s") << " of "
          << probes.size() << " have " << total_slots << " slot" << (total_slots == 1 ? "" : "s")
          << " (";
      for (size_t r = 0; r < order.size(); ++r)
        msg << (r ? ", " : "") << a.candidates[order[r]].probe.host.name << ": "
            << a.candidates[order[r]].slots;
      msg << ")";
    }
    size_t unreachable = probes.size() - order.size();
    if (unreachable && !order.empty()) msg << "; " << unreachable << " unreachable";
    throw AllocationError(msg.str());
  }

  // Each process goes to the host with the most free capacity left (cores - load1 - processes
  // placed there), ties to the better ranked host; full hosts drop out. A priority queue keeps
  // this O(N log hosts).
  using Entry = std::pair<double, int>;  // (capacity left, -rank): the largest is next
  std::priority_queue<Entry> next;
  for (size_t r = 0; r < order.size(); ++r)
    if (a.candidates[order[r]].slots > 0)
      next.emplace(a.candidates[order[r]].free_capacity, -static_cast<int>(r));
  for (int placed = 0; placed < nprocs; ++placed) {
    auto [left, neg_rank] = next.top();  // never empty: total slots >= nprocs
    next.pop();
    auto& c = a.candidates[order[static_cast<size_t>(-neg_rank)]];
    ++c.count;
    a.placement.push_back(static_cast<int>(order[static_cast<size_t>(-neg_rank)]));
    if (c.count < c.slots) next.emplace(left - 1.0, neg_rank);
  }

  // Subjobs: a site's hosts together, positioned at the site's best host.
  std::map<std::string, size_t> site_subjob;
  for (size_t i : order) {
    const auto& c = a.candidates[i];
    if (c.count == 0) continue;
    const std::string& site = c.probe.host.site;
    size_t k;
    if (!site.empty() && site_subjob.count(site)) {
      k = site_subjob[site];
    } else {
      k = a.subjobs.size();
      a.subjobs.push_back(PlannedSubjob{site, {}, 0});
      if (!site.empty()) site_subjob[site] = k;
    }
    a.subjobs[k].hosts.push_back(PlacedHost{c.probe.host.name, c.count});
    a.subjobs[k].count += c.count;
  }
  return a;
}

int usable_slot_total(const std::vector<hosts::ProbeResult>& probes) {
  int total = 0;
  for (const auto& p : probes) total += usable_slots(p);
  return total;
}

std::vector<rsl::Subjob> subjobs_for(const Allocation& allocation, const std::string& executable,
                                     const std::vector<std::string>& arguments,
                                     const std::string& directory) {
  std::vector<rsl::Subjob> subjobs;
  for (size_t k = 0; k < allocation.subjobs.size(); ++k) {
    const auto& planned = allocation.subjobs[k];
    rsl::Subjob sj;
    sj.count = planned.count;
    sj.executable = executable;
    sj.arguments = arguments;
    sj.directory = directory;
    sj.label = "subjob " + std::to_string(k);
    sj.environment = {{"BSPG_SUBJOB", std::to_string(k)}};
    if (planned.site.empty()) {
      sj.contact = planned.hosts.front().name;
    } else {
      // A site: the contact is the site, its hosts say where the processes go.
      sj.contact = planned.site;
      for (const auto& h : planned.hosts) sj.hosts.push_back(rsl::hosts_entry(h.name, h.count));
    }
    subjobs.push_back(sj);
  }
  return subjobs;
}

ProgramProblem program_problem(const Allocation& allocation, const std::string& program) {
  using hosts::ProgramStatus;
  // The first kind of problem found, and every chosen host that has it.
  ProgramStatus kind = ProgramStatus::kOk;
  std::string names;
  for (const auto& c : allocation.candidates) {
    const ProgramStatus status = c.probe.program_status;
    if (c.count == 0 || status == ProgramStatus::kOk || status == ProgramStatus::kUnchecked)
      continue;
    if (kind == ProgramStatus::kOk) kind = status;
    if (status == kind) names += (names.empty() ? "" : ", ") + c.probe.host.name;
  }
  switch (kind) {
    case ProgramStatus::kNotFound:
      return {kExitNotFound,
              names + ": program " + program + " not found there (--stage copies it to the hosts)"};
    case ProgramStatus::kNotRegularFile:
      return {kExitNotExecutable, names + ": " + program + " is not a regular file there"};
    case ProgramStatus::kNotExecutable:
      return {kExitNotExecutable,
              names + ": " + program +
                  " is not executable there (--stage copies it with its exec bits)"};
    default:
      return {};
  }
}

std::string format_probe_table(const Allocation& allocation) {
  std::vector<hosts::ProbeResult> probes;
  std::vector<std::string> status;
  // Subjob index per host name, for the table.
  std::map<std::string, size_t> subjob_of;
  for (size_t k = 0; k < allocation.subjobs.size(); ++k)
    for (const auto& h : allocation.subjobs[k].hosts) subjob_of[h.name] = k;
  for (const auto& c : allocation.candidates) {
    probes.push_back(c.probe);
    if (!c.probe.ok) {
      status.push_back("not used: " + c.probe.error);
    } else if (c.count == 0) {
      status.push_back("0 (not needed: less free capacity than the hosts chosen)");
    } else {
      std::string s =
          std::to_string(c.count) + " (subjob " + std::to_string(subjob_of[c.probe.host.name]);
      if (!c.probe.host.site.empty()) s += ", site " + c.probe.host.site;
      status.push_back(s + ")");
    }
  }
  return render_table(probes, status);
}

std::string format_probe_table(const std::vector<hosts::ProbeResult>& probes) {
  std::vector<std::string> status;
  for (const auto& p : probes) status.push_back(p.ok ? "reachable" : "not used: " + p.error);
  return render_table(probes, status);
}

}  // namespace bspg::launcher
