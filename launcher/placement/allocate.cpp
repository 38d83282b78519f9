// allocate.cpp - ranking and placement, see the policy in allocate.h.
#include "allocate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <queue>
#include <set>
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

std::string rtt_text(double ms) {
  if (ms < 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, ms < 10 ? "%.2f" : "%.1f", ms);
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
  std::snprintf(buf, sizeof buf, "%-*s  %-*s  %5s  %6s  %8s  %7s  %s\n", int(name_w), "HOST",
                int(addr_w), "ADDRESS", "CORES", "LOAD", "FREE-MEM", "RTT-MS", "PROCESSES");
  out << buf;
  for (size_t i = 0; i < probes.size(); ++i) {
    const auto& p = probes[i];
    if (p.ok) {
      std::snprintf(buf, sizeof buf, "%-*s  %-*s  %5d  %6.2f  %8s  %7s  ", int(name_w),
                    p.host.name.c_str(), int(addr_w), address_of(p.host).c_str(), p.cores, p.load1,
                    memory_text(p.mem_available_kb).c_str(), rtt_text(p.round_trip_ms).c_str());
    } else {
      std::snprintf(buf, sizeof buf, "%-*s  %-*s  %5s  %6s  %8s  %7s  ", int(name_w),
                    p.host.name.c_str(), int(addr_w), address_of(p.host).c_str(), "-", "-", "-",
                    "-");
    }
    out << buf << untrusted::printable(status[i]) << "\n";
  }
  return out.str();
}

// One line per site: its reachable hosts and the shortest round trip to one of them from here.
std::string site_lines(const std::vector<hosts::ProbeResult>& probes) {
  struct Site {
    int hosts = 0, reachable = 0;
    double rtt = -1;
  };
  std::vector<std::pair<std::string, Site>> sites;  // in host file order
  for (const auto& p : probes) {
    if (p.host.site.empty()) continue;
    auto it = std::find_if(sites.begin(), sites.end(),
                           [&](const auto& s) { return s.first == p.host.site; });
    if (it == sites.end()) it = sites.insert(sites.end(), {p.host.site, Site{}});
    ++it->second.hosts;
    if (!p.ok) continue;
    ++it->second.reachable;
    if (p.round_trip_ms >= 0 && (it->second.rtt < 0 || p.round_trip_ms < it->second.rtt))
      it->second.rtt = p.round_trip_ms;
  }
  std::string text;
  for (const auto& [name, site] : sites) {
    text += "site " + untrusted::printable(name) + ": " + std::to_string(site.reachable) + " of " +
            std::to_string(site.hosts) + " host" + (site.hosts == 1 ? "" : "s") + " reachable";
    if (site.rtt >= 0) text += ", round trip from here " + rtt_text(site.rtt) + " ms";
    text += "\n";
  }
  // Between two sites: the shortest connect from a host of one to the first host of the other,
  // either way (the hosts' own measures, ProbeOptions::round_trip_targets).
  for (size_t i = 0; i < sites.size(); ++i)
    for (size_t j = i + 1; j < sites.size(); ++j) {
      double best = -1;
      for (const auto& p : probes) {
        if (!p.ok) continue;
        for (const auto& [to, ms] : p.site_round_trips_ms) {
          const bool between = (p.host.site == sites[i].first && to == sites[j].first) ||
                               (p.host.site == sites[j].first && to == sites[i].first);
          if (between && (best < 0 || ms < best)) best = ms;
        }
      }
      if (best >= 0)
        text += "sites " + untrusted::printable(sites[i].first) + " and " +
                untrusted::printable(sites[j].first) + ": round trip " + rtt_text(best) +
                " ms (measured by their hosts)\n";
    }
  return text;
}

// Hosts whose free capacity left differs by less than this (in cores) count as equally good:
// load averages move by that much from one minute to the next.
constexpr double kSimilarCores = 0.25;

std::string cores_text(double cores) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", cores);
  return buf;
}

// The water filling of allocate.h, by sites: each site (and all hosts without one, together)
// keeps its hosts in a heap by capacity left. A process goes to the best host of the sites already
// in use unless a host elsewhere is clearly better (kSimilarCores; any host with a whole core
// left is good enough); a new site is then the one with the most room among the equally good.
// Where no host has a site this is the plain water filling, and in every case the placement of
// k processes is the first k of the placement of more (master mode relies on it).
void place(Allocation& a, const std::vector<size_t>& order, int nprocs) {
  using Entry = std::pair<double, int>;  // (capacity left, -rank): the largest is next
  std::map<std::string, int> site_index;
  std::vector<std::string> site_names{""};  // index 0: the hosts without a site
  std::vector<int> site_of(order.size(), 0);
  for (size_t r = 0; r < order.size(); ++r) {
    const std::string& site = a.candidates[order[r]].probe.host.site;
    if (site.empty()) continue;
    auto [it, added] = site_index.emplace(site, static_cast<int>(site_names.size()));
    if (added) site_names.push_back(site);
    site_of[r] = it->second;
  }
  const size_t sites = site_names.size();
  std::vector<std::priority_queue<Entry>> heaps(sites);
  std::vector<double> left(order.size());
  // Room: processes a site can still take with a core of its own (at least 1 - kSimilarCores).
  const auto room_of = [&](size_t r) {
    const auto& c = a.candidates[order[r]];
    const double cores = std::floor(std::max(0.0, left[r] + kSimilarCores));
    return std::min(static_cast<double>(c.slots - c.count), cores);
  };
  std::vector<double> room(sites, 0);
  for (size_t r = 0; r < order.size(); ++r) {
    const auto& c = a.candidates[order[r]];
    left[r] = c.free_capacity;
    if (c.slots <= 0) continue;
    heaps[static_cast<size_t>(site_of[r])].emplace(left[r], -static_cast<int>(r));
    room[static_cast<size_t>(site_of[r])] += room_of(r);
  }
  std::vector<bool> in_use(sites, false);
  int sites_in_use = 0;
  // Each site's best host, of all sites and of the sites in use (sets: O(log sites) a process).
  using Top = std::pair<Entry, int>;  // (the site's best host, site)
  std::set<Top> tops, used_tops;
  for (size_t s = 0; s < sites; ++s)
    if (!heaps[s].empty()) tops.emplace(heaps[s].top(), static_cast<int>(s));
  const auto better = [&](int x, int y) {
    return y < 0 || heaps[size_t(x)].top() > heaps[size_t(y)].top();
  };
  for (int placed = 0; placed < nprocs; ++placed) {
    // The best host of all (hosts without a site included), and the best of the sites in use.
    const int best = tops.rbegin()->second;  // never empty: the slots add up to nprocs
    const int best_used = used_tops.empty() ? -1 : used_tops.rbegin()->second;
    const double good_enough = std::min(heaps[size_t(best)].top().first, 1.0) - kSimilarCores;
    int site = best_used;
    if (best_used < 0 || heaps[size_t(best_used)].top().first < good_enough) {
      // A host without a site when it is the best; else a site not in use yet: of those with an
      // equally good host, the one with the most room.
      site = best;
      for (size_t s = 1; best > 0 && s < sites; ++s) {
        if (in_use[s] || heaps[s].empty() || heaps[s].top().first < good_enough) continue;
        if (room[s] > room[size_t(site)] ||
            (room[s] == room[size_t(site)] && better(static_cast<int>(s), site)))
          site = static_cast<int>(s);
      }
      if (site > 0) {
        if (sites_in_use > 0) {
          std::string used;
          for (size_t s = 1; s < sites; ++s)
            if (in_use[s]) used += (used.empty() ? "" : ", ") + site_names[s];
          std::string why = best_used < 0 ? "the hosts of " + used + " had no slot left"
                                          : "on " + used + " it would have had " +
                                                cores_text(heaps[size_t(best_used)].top().first) +
                                                " of a core free, on " + site_names[size_t(site)] +
                                                " " + cores_text(heaps[size_t(site)].top().first);
          a.spread_reasons.push_back("process " + std::to_string(placed) + " went to site " +
                                     site_names[size_t(site)] + ": " + why);
        }
        in_use[size_t(site)] = true;
        used_tops.emplace(heaps[size_t(site)].top(), site);
        ++sites_in_use;
      }
    }
    const bool counted_in_use = site > 0 && in_use[size_t(site)];
    tops.erase({heaps[size_t(site)].top(), site});
    if (counted_in_use) used_tops.erase({heaps[size_t(site)].top(), site});
    auto [capacity, neg_rank] = heaps[size_t(site)].top();
    heaps[size_t(site)].pop();
    const auto r = static_cast<size_t>(-neg_rank);
    room[size_t(site)] -= room_of(r);
    auto& c = a.candidates[order[r]];
    ++c.count;
    left[r] = capacity - 1.0;
    a.placement.push_back(static_cast<int>(order[r]));
    room[size_t(site)] += room_of(r);
    if (c.count < c.slots) heaps[size_t(site)].emplace(left[r], neg_rank);
    if (!heaps[size_t(site)].empty()) {
      tops.emplace(heaps[size_t(site)].top(), site);
      if (counted_in_use) used_tops.emplace(heaps[size_t(site)].top(), site);
    }
  }
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

  place(a, order, nprocs);

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

void keep_previous_hosts(Allocation& allocation,
                         const std::vector<std::string>& previous_host_of_pid) {
  if (previous_host_of_pid.empty()) return;
  std::set<std::string> placed;
  for (const auto& sj : allocation.subjobs)
    for (const auto& h : sj.hosts) placed.insert(h.name);
  // A host that ran processes before: the lowest pid it ran.
  std::map<std::string, std::size_t> key;
  std::vector<std::size_t> orphaned;  // pids whose host has no place now
  for (std::size_t pid = 0; pid < previous_host_of_pid.size(); ++pid) {
    const std::string& host = previous_host_of_pid[pid];
    if (placed.count(host))
      key.emplace(host, pid);
    else
      orphaned.push_back(pid);
  }
  // A host new to the job: where the first orphaned pids it takes over were; after every
  // other host once they run out.
  const std::size_t after_all = previous_host_of_pid.size();
  std::size_t next_orphan = 0;
  for (const auto& sj : allocation.subjobs)
    for (const auto& h : sj.hosts) {
      if (key.count(h.name)) continue;
      if (next_orphan < orphaned.size()) {
        key[h.name] = orphaned[next_orphan];
        next_orphan += static_cast<std::size_t>(std::max(h.count, 1));
      } else {
        key[h.name] = after_all;
      }
    }
  const auto host_before = [&key](const PlacedHost& x, const PlacedHost& y) {
    return key.at(x.name) < key.at(y.name);
  };
  for (auto& sj : allocation.subjobs)
    std::stable_sort(sj.hosts.begin(), sj.hosts.end(), host_before);
  // After the sort above a subjob's first host has its lowest key.
  std::stable_sort(allocation.subjobs.begin(), allocation.subjobs.end(),
                   [&key](const PlannedSubjob& x, const PlannedSubjob& y) {
                     return key.at(x.hosts.front().name) < key.at(y.hosts.front().name);
                   });
}

int usable_slot_total(const std::vector<hosts::ProbeResult>& probes) {
  int total = 0;
  for (const auto& p : probes) total += usable_slots(p);
  return total;
}

std::vector<PlacedHost> place_spares(const Allocation& allocation, int spares,
                                     bool only_job_hosts) {
  using hosts::ProgramStatus;
  // The usable candidates by rank: those the job leaves alone, then the job's own.
  std::vector<const HostChoice*> idle, busy;
  for (const auto& c : allocation.candidates) {
    if (!c.probe.ok || c.rank < 0 || c.slots <= 0) continue;
    if (c.probe.program_status != ProgramStatus::kOk &&
        c.probe.program_status != ProgramStatus::kUnchecked)
      continue;
    (c.count > 0 ? busy : idle).push_back(&c);
  }
  const auto by_rank = [](const HostChoice* a, const HostChoice* b) { return a->rank < b->rank; };
  std::sort(idle.begin(), idle.end(), by_rank);
  std::sort(busy.begin(), busy.end(), by_rank);
  if (only_job_hosts) idle.clear();
  std::map<std::string, int> placed;
  int left = std::max(spares, 0);
  // One a host in turn over `hosts`, while room(host) allows.
  const auto fill = [&](const std::vector<const HostChoice*>& hosts, auto room) {
    for (bool any = true; left > 0 && any;) {
      any = false;
      for (const HostChoice* c : hosts) {
        if (left == 0) break;
        int& here = placed[c->probe.host.name];
        if (!room(*c, here)) continue;
        ++here;
        --left;
        any = true;
      }
    }
  };
  fill(idle, [](const HostChoice& c, int here) { return here < c.slots; });
  fill(busy, [](const HostChoice& c, int here) { return c.count + here < c.slots; });
  fill(busy, [](const HostChoice&, int) { return true; });
  std::vector<PlacedHost> result;
  for (const auto* group : {&idle, &busy})
    for (const HostChoice* c : *group)
      if (const int n = placed[c->probe.host.name]; n > 0)
        result.push_back({c->probe.host.name, n});
  return result;
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

std::string hosts_beyond_their_cores(const Allocation& allocation) {
  std::string hosts;
  for (const HostChoice& c : allocation.candidates)
    if (c.probe.cores > 0 && c.count > c.probe.cores)
      hosts += (hosts.empty() ? "" : ", ") + c.probe.host.name + " (" + std::to_string(c.count) +
               " on " + std::to_string(c.probe.cores) + " cores)";
  return hosts;
}

std::string format_probe_table(const Allocation& allocation) {
  std::vector<hosts::ProbeResult> probes;
  std::vector<std::string> status;
  // Subjob index per host name, for the table.
  std::map<std::string, size_t> subjob_of;
  for (size_t k = 0; k < allocation.subjobs.size(); ++k)
    for (const auto& h : allocation.subjobs[k].hosts) subjob_of[h.name] = k;
  double least_chosen = 1e300;  // the free capacity of the busiest host chosen
  for (const auto& c : allocation.candidates)
    if (c.count > 0) least_chosen = std::min(least_chosen, c.free_capacity);
  for (const auto& c : allocation.candidates) {
    probes.push_back(c.probe);
    if (!c.probe.ok) {
      status.push_back("not used: " + c.probe.error);
    } else if (c.count == 0) {
      const bool similar = c.free_capacity >= least_chosen - kSimilarCores;
      const bool site_chosen =
          !c.probe.host.site.empty() &&
          std::any_of(allocation.candidates.begin(), allocation.candidates.end(), [&](const auto& o) {
            return o.count > 0 && o.probe.host.site == c.probe.host.site;
          });
      status.push_back(!similar ? "0 (not needed: less free capacity than the hosts chosen)"
                       : site_chosen ? "0 (not needed: the hosts before it in order have room)"
                       : !c.probe.host.site.empty()
                           ? "0 (not needed: the job fits on fewer sites)"
                           : "0 (not needed: less free capacity than the hosts chosen)");
    } else {
      std::string s =
          std::to_string(c.count) + " (subjob " + std::to_string(subjob_of[c.probe.host.name]);
      if (!c.probe.host.site.empty()) s += ", site " + c.probe.host.site;
      status.push_back(s + ")");
    }
  }
  std::string text = render_table(probes, status) + site_lines(probes);
  for (const std::string& reason : allocation.spread_reasons)
    text += "spread across sites: " + untrusted::printable(reason) + "\n";
  return text;
}

std::string format_probe_table(const std::vector<hosts::ProbeResult>& probes) {
  std::vector<std::string> status;
  for (const auto& p : probes) status.push_back(p.ok ? "reachable" : "not used: " + p.error);
  return render_table(probes, status) + site_lines(probes);
}

}  // namespace bspg::launcher
