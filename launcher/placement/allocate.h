// allocate.h - from probe results and N to hosts and subjobs (pure logic, unit-tested).
//
// Policy (also in bsprun --help):
//   * only hosts whose probe succeeded are used; slots = the host file's slots, else the
//     probed core count;
//   * hosts are ranked by free capacity = cores - load1 (descending), then by available
//     memory (descending), then by host file order;
//   * processes are placed one at a time, each on the host with the most free capacity
//     left (free capacity minus the processes already placed there), ties going to the
//     better ranked host, never more than a host's slots ("water filling"). An idle host
//     thus takes processes until it is as busy as the next one, then they alternate: a
//     lightly loaded host gets more processes than a busy one, and a host with no free
//     cores only gets processes once the others are as loaded or full.
//   * by sites: a process goes to the best host of the sites already used unless a host of
//     another site has clearly more free capacity left (by a quarter of a core or more, where
//     the best of those used has less than a whole core left); of the sites that are equally
//     good, the one with the most room (free cores within its slots) is taken first. A job thus
//     fills the fewest sites among hosts of similar free capacity, and spreads where one site is
//     full or clearly busier (Allocation::spread_reasons says why). Hosts without a site are
//     always candidates; without sites this is the plain water filling;
//   * if the slots of all reachable hosts add up to less than N nothing is placed;
//   * chosen hosts of one site form one subjob; any other host is a subjob of its own.
//     Subjobs are ordered by their best ranked host, hosts inside a site by rank (at a
//     restart, by where the processes ran before: keep_previous_hosts).
#ifndef BSPG_LAUNCHER_ALLOCATE_H
#define BSPG_LAUNCHER_ALLOCATE_H

#include <stdexcept>
#include <string>
#include <vector>

#include "hosts.h"
#include "rsl.h"

namespace bspg::launcher {

// One candidate host, as the table shows it.
struct HostChoice {
  hosts::ProbeResult probe;
  int slots = 0;             // usable slots (0 when unreachable)
  double free_capacity = 0;  // cores - load1
  int rank = -1;             // 0 = least loaded; -1 when unreachable
  int count = 0;             // processes placed here
};

struct PlacedHost {
  std::string name;  // host file name
  int count = 0;
};

struct PlannedSubjob {
  std::string site;               // empty: a single host outside any site
  std::vector<PlacedHost> hosts;  // in rank order; never empty
  int count = 0;                  // sum of hosts[i].count
};

struct Allocation {
  std::vector<HostChoice> candidates;  // host file order
  std::vector<PlannedSubjob> subjobs;
  int nprocs = 0;
  std::vector<int> placement;  // candidate index of each process, in the order they were placed
  // Why the job spans more sites than it had to: one line per site taken after the first ("process
  // 5 went to site b: on a it would have had 0.40 of a core free, on b 1.90"); empty otherwise.
  std::vector<std::string> spread_reasons;
};

// Not enough capacity (or nothing reachable); what() says what was found.
struct AllocationError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Places nprocs processes on the probed hosts (probes in host file order). Throws AllocationError.
// Placing fewer processes places a prefix of `placement`: the first k processes of an
// allocation of n > k go where an allocation of k puts them.
Allocation allocate(const std::vector<hosts::ProbeResult>& probes, int nprocs);

// A restart's placement (the hosts stay those allocate() chose, with their counts): orders the
// subjobs, and the hosts inside each, so that as many processes as it can keep the host they ran on
// (previous_host_of_pid[pid], a name or ""), and a host new to the job takes the places of the
// processes lost with their hosts, in pid order. Each process's checkpoint then lies where it
// restarts and only the lost ones' shards travel. A host that held processes is placed by the
// lowest pid it held; ties keep allocate()'s order. Unchanged for an empty previous placement.
void keep_previous_hosts(Allocation& allocation,
                         const std::vector<std::string>& previous_host_of_pid);

// The slots of the reachable hosts: the most processes allocate() can place.
int usable_slot_total(const std::vector<hosts::ProbeResult>& probes);

// Recovery in place (bsprun --spares K): where the K spare processes go. First the reachable
// candidates the job does not use (a lost host then takes no spare with it), by rank (least
// loaded first), one spare a host in turn, within each host's slots; where those are too few,
// the job's own hosts, by rank, within the slots the job leaves free; then, beyond their slots,
// the job's hosts in turn. With only_job_hosts (the program is staged on the job's hosts alone)
// the job's hosts only. A candidate whose probe found the program missing or unusable takes
// none. In candidate rank order; empty for K = 0.
std::vector<PlacedHost> place_spares(const Allocation& allocation, int spares,
                                     bool only_job_hosts = false);

// The RSL subjobs for an allocation: contact = the host's name (for a site: the site's name,
// with hosts=("h:n" ...)), label "subjob k", environment BSPG_SUBJOB=k. directory may be empty.
std::vector<rsl::Subjob> subjobs_for(const Allocation& allocation, const std::string& executable,
                                     const std::vector<std::string>& arguments,
                                     const std::string& directory);

// A chosen host where the probe found the program missing or unusable (ProbeOptions::program):
// exit_status 127 (not found) or 126 (not a regular file, not executable) and one line naming
// the hosts and the cause; exit_status 0 when every chosen host has it or it was not checked.
struct ProgramProblem {
  int exit_status = 0;
  std::string message;
};
ProgramProblem program_problem(const Allocation& allocation, const std::string& program);

// "" or one line naming the chosen hosts that run more processes than they have cores (whatever
// their slots), as "emu1 (4 on 2 cores), emu2 (3 on 2 cores)".
std::string hosts_beyond_their_cores(const Allocation& allocation);

// The probe table for stderr: one line per candidate in host file order with host, address,
// cores, load, free memory and the chosen count, or why it was not used (hosts' answers are
// shown escaped: untrusted::printable).
std::string format_probe_table(const Allocation& allocation);
// The same table before allocation (used when allocation fails).
std::string format_probe_table(const std::vector<hosts::ProbeResult>& probes);

}  // namespace bspg::launcher

#endif
