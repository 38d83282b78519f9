// allocate_test.cpp - ranking and placement of processes on probed hosts.
#include "allocate.h"

#include <gtest/gtest.h>

using bspg::hosts::ProbeResult;
using namespace bspg::launcher;

namespace {

ProbeResult host(const std::string& name, int cores, double load, long long mem_kb = 4'000'000,
                 int slots = 0, const std::string& site = "") {
  ProbeResult p;
  p.host.name = name;
  p.host.address = "127.0.9." + name.substr(name.size() - 1);
  p.host.slots = slots;
  p.host.site = site;
  p.ok = true;
  p.hostname = name;
  p.cores = cores;
  p.load1 = p.load5 = p.load15 = load;
  p.mem_available_kb = mem_kb;
  return p;
}

ProbeResult down(const std::string& name, const std::string& why) {
  ProbeResult p;
  p.host.name = name;
  p.ok = false;
  p.error = why;
  return p;
}

// name -> processes placed, for every candidate.
std::map<std::string, int> counts(const Allocation& a) {
  std::map<std::string, int> m;
  for (const auto& c : a.candidates) m[c.probe.host.name] = c.count;
  return m;
}

}  // namespace

TEST(Allocate, ChoosesTheLeastLoadedHosts) {
  // The end-to-end scenario: loads 3.5, 0.2, 2.0, 0.1, two slots each, -p 4.
  auto a = allocate({host("emu1", 2, 3.5, 0, 2), host("emu2", 2, 0.2, 0, 2),
                     host("emu3", 2, 2.0, 0, 2), host("emu4", 2, 0.1, 0, 2)},
                    4);
  EXPECT_EQ(counts(a),
            (std::map<std::string, int>{{"emu1", 0}, {"emu2", 2}, {"emu3", 0}, {"emu4", 2}}));
  // Two subjobs, the least loaded host first.
  ASSERT_EQ(a.subjobs.size(), 2u);
  EXPECT_EQ(a.subjobs[0].hosts[0].name, "emu4");
  EXPECT_EQ(a.subjobs[1].hosts[0].name, "emu2");
  EXPECT_EQ(a.candidates[3].rank, 0);
  EXPECT_EQ(a.candidates[1].rank, 1);
  EXPECT_EQ(a.candidates[2].rank, 2);
  EXPECT_EQ(a.candidates[0].rank, 3);
}

TEST(Allocate, LightlyLoadedHostGetsMoreProcesses) {
  // 8 cores idle vs 8 cores with load 6: the idle one fills to its free capacity first.
  auto a = allocate({host("busy1", 8, 6.0), host("idle2", 8, 0.0)}, 10);
  EXPECT_EQ(counts(a)["idle2"], 8);
  EXPECT_EQ(counts(a)["busy1"], 2);
}

TEST(Allocate, BeyondFreeCapacityHostsTakeTurns) {
  // Free capacities 1 and 0, slots 4 each: a1 first, then (both at 0 left) they alternate.
  auto a = allocate({host("a1", 2, 1.0, 0, 4), host("b2", 2, 2.0, 0, 4)}, 6);
  EXPECT_EQ(counts(a)["a1"], 4);
  EXPECT_EQ(counts(a)["b2"], 2);
  auto b = allocate({host("a1", 2, 1.0, 0, 4), host("b2", 2, 2.0, 0, 4)}, 3);
  EXPECT_EQ(counts(b)["a1"], 2);
  EXPECT_EQ(counts(b)["b2"], 1);
}

TEST(Allocate, FullyLoadedHostBeforeOverloadedOne) {
  // emu2 (the idlest) is down: emu4 fills its 2 slots, then emu3 (load 2.0 on 2 cores)
  // is preferred to emu1 (load 3.5) for both remaining processes.
  auto a = allocate({host("emu1", 2, 3.5, 0, 2), down("emu2", "connection refused"),
                     host("emu3", 2, 2.0, 0, 2), host("emu4", 2, 0.1, 0, 2)},
                    4);
  EXPECT_EQ(counts(a),
            (std::map<std::string, int>{{"emu1", 0}, {"emu2", 0}, {"emu3", 2}, {"emu4", 2}}));
}

TEST(Allocate, FractionalLoadsShareByWhatIsLeft) {
  // 4 cores each, loads 0.5 and 2.5 (free 3.5 and 1.5): 4 processes -> 3 and 1 (the second
  // host only gets one once the first has less left than it), 6 -> 4 and 2.
  auto a = allocate({host("h1", 4, 0.5), host("h2", 4, 2.5)}, 4);
  EXPECT_EQ(counts(a)["h1"], 3);
  EXPECT_EQ(counts(a)["h2"], 1);
  auto b = allocate({host("h1", 4, 0.5), host("h2", 4, 2.5)}, 6);
  EXPECT_EQ(counts(b)["h1"], 4);
  EXPECT_EQ(counts(b)["h2"], 2);
}

TEST(Allocate, SlotsAreRespected) {
  // A 16-core idle host limited to 3 slots in the host file.
  auto a = allocate({host("big1", 16, 0.0, 0, 3), host("small2", 2, 0.0, 0, 2)}, 5);
  EXPECT_EQ(counts(a)["big1"], 3);
  EXPECT_EQ(counts(a)["small2"], 2);
  for (const auto& c : a.candidates) EXPECT_LE(c.count, c.slots);
}

TEST(Allocate, SlotsDefaultToCores) {
  auto a = allocate({host("h1", 3, 0.0)}, 3);
  EXPECT_EQ(a.candidates[0].slots, 3);
  EXPECT_THROW(allocate({host("h1", 3, 0.0)}, 4), AllocationError);
}

TEST(Allocate, UnreachableHostsAreSkipped) {
  auto a = allocate(
      {down("emu1", "connection refused"), host("emu2", 2, 1.0, 0, 2), host("emu3", 2, 0.5, 0, 2)},
      3);
  EXPECT_EQ(counts(a), (std::map<std::string, int>{{"emu1", 0}, {"emu2", 1}, {"emu3", 2}}));
  EXPECT_EQ(a.candidates[0].rank, -1);
  std::string table = format_probe_table(a);
  EXPECT_NE(table.find("emu1"), std::string::npos);
  EXPECT_NE(table.find("not used: connection refused"), std::string::npos);
}

TEST(Allocate, NotEnoughCapacityNamesWhatWasFound) {
  try {
    allocate({host("emu1", 2, 0.0, 0, 2), down("emu2", "timed out after 5.0 s"),
              host("emu3", 2, 0.0, 0, 1)},
             4);
    FAIL() << "expected AllocationError";
  } catch (const AllocationError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("4 processes requested"), std::string::npos) << msg;
    EXPECT_NE(msg.find("3 slots"), std::string::npos) << msg;
    EXPECT_NE(msg.find("emu1: 2"), std::string::npos) << msg;
    EXPECT_NE(msg.find("emu3: 1"), std::string::npos) << msg;
    EXPECT_NE(msg.find("1 unreachable"), std::string::npos) << msg;
  }
  try {
    allocate({down("a", "connection refused"), down("b", "connection refused")}, 1);
    FAIL() << "expected AllocationError";
  } catch (const AllocationError& e) {
    EXPECT_NE(std::string(e.what()).find("none of the 2 candidate hosts is reachable"),
              std::string::npos)
        << e.what();
  }
}

TEST(Allocate, TiesBrokenByMemoryThenHostFileOrder) {
  // Same free capacity: more free memory first; same memory: host file order.
  std::vector<ProbeResult> same = {host("h1", 2, 0.0, 1000, 2), host("h2", 2, 0.0, 5000, 2),
                                   host("h3", 2, 0.0, 1000, 2)};
  auto a = allocate(same, 1);
  EXPECT_EQ(counts(a), (std::map<std::string, int>{{"h1", 0}, {"h2", 1}, {"h3", 0}}));
  EXPECT_EQ(a.candidates[1].rank, 0);
  EXPECT_EQ(a.candidates[0].rank, 1);
  EXPECT_EQ(a.candidates[2].rank, 2);
  EXPECT_EQ(counts(allocate(same, 2)),
            (std::map<std::string, int>{{"h1", 1}, {"h2", 1}, {"h3", 0}}));
  EXPECT_EQ(counts(allocate(same, 4)),
            (std::map<std::string, int>{{"h1", 1}, {"h2", 2}, {"h3", 1}}));
  // Deterministic: the same input gives the same result every time.
  for (int i = 0; i < 5; ++i) EXPECT_EQ(counts(allocate(same, 4)), counts(allocate(same, 4)));
}

TEST(Allocate, SitesFormOneSubjob) {
  auto a = allocate({host("a1", 2, 0.5, 0, 2, "lab-a"), host("b1", 2, 0.0, 0, 2, "lab-b"),
                     host("a2", 2, 0.0, 0, 2, "lab-a"), host("solo4", 2, 1.0, 0, 2)},
                    7);
  // Ranks: b1 (2.0 free), a2 (2.0, later in the file), a1 (1.5), solo4 (1.0).
  ASSERT_EQ(a.subjobs.size(), 3u);
  EXPECT_EQ(a.subjobs[0].site, "lab-b");
  EXPECT_EQ(a.subjobs[0].count, 2);
  EXPECT_EQ(a.subjobs[1].site, "lab-a");
  ASSERT_EQ(a.subjobs[1].hosts.size(), 2u);
  EXPECT_EQ(a.subjobs[1].hosts[0].name, "a2");
  EXPECT_EQ(a.subjobs[1].hosts[1].name, "a1");
  EXPECT_EQ(a.subjobs[1].count, 4);
  EXPECT_EQ(a.subjobs[2].site, "");
  EXPECT_EQ(a.subjobs[2].hosts[0].name, "solo4");
  EXPECT_EQ(a.subjobs[2].count, 1);
}

TEST(Allocate, HostsWithNothingPlacedAreNoSubjob) {
  auto a = allocate({host("h1", 4, 0.0), host("h2", 4, 3.0)}, 2);
  ASSERT_EQ(a.subjobs.size(), 1u);
  EXPECT_EQ(a.subjobs[0].hosts[0].name, "h1");
  EXPECT_NE(format_probe_table(a).find("0 (not needed"), std::string::npos);
}

TEST(Allocate, RejectsNonPositiveCounts) {
  EXPECT_THROW(allocate({host("h1", 2, 0.0)}, 0), AllocationError);
}

TEST(SubjobsFor, HostsAndSitesBecomeRslSubjobs) {
  auto a = allocate({host("a1", 2, 0.0, 0, 2, "lab-a"), host("a2", 2, 0.0, 0, 2, "lab-a"),
                     host("c3", 2, 0.5, 0, 2)},
                    5);
  auto subjobs = subjobs_for(a, "/bin/prog", {"x", "y z"}, "/work");
  ASSERT_EQ(subjobs.size(), 2u);
  EXPECT_EQ(subjobs[0].contact, "lab-a");
  EXPECT_EQ(subjobs[0].count, 4);
  EXPECT_EQ(subjobs[0].hosts, (std::vector<std::string>{"a1:2", "a2:2"}));
  EXPECT_EQ(subjobs[0].label, "subjob 0");
  EXPECT_EQ(subjobs[0].environment,
            (std::vector<std::pair<std::string, std::string>>{{"BSPG_SUBJOB", "0"}}));
  EXPECT_EQ(subjobs[1].contact, "c3");
  EXPECT_EQ(subjobs[1].count, 1);
  EXPECT_TRUE(subjobs[1].hosts.empty());
  EXPECT_EQ(subjobs[1].label, "subjob 1");
  EXPECT_EQ(subjobs[1].executable, "/bin/prog");
  EXPECT_EQ(subjobs[1].arguments, (std::vector<std::string>{"x", "y z"}));
  EXPECT_EQ(subjobs[1].directory, "/work");
  // The RSL text says the same and reads back identically.
  auto text = bspg::rsl::write_allocation(subjobs);
  EXPECT_EQ(bspg::rsl::read_allocation(text), subjobs);
}

TEST(Allocate, FewerProcessesGoWhereTheFirstOfMoreGo) {
  // Master mode relies on it: bsp_begin(P) takes the first P slots of the whole allocation.
  std::vector<ProbeResult> probes = {host("emu1", 2, 3.5, 0, 2), host("emu2", 2, 0.2, 0, 2),
                                     host("emu3", 2, 2.0, 0, 3), host("emu4", 2, 0.1, 0, 2)};
  int total = usable_slot_total(probes);
  EXPECT_EQ(total, 9);
  Allocation all = allocate(probes, total);
  ASSERT_EQ(all.placement.size(), 9u);
  // The least loaded host first; a host's share follows its free capacity.
  EXPECT_EQ(all.candidates[static_cast<size_t>(all.placement[0])].probe.host.name, "emu4");
  for (int k = 1; k <= total; ++k) {
    std::map<std::string, int> prefix;
    for (const auto& c : all.candidates) prefix[c.probe.host.name] = 0;
    for (int i = 0; i < k; ++i) {
      auto placed = static_cast<size_t>(all.placement[static_cast<size_t>(i)]);
      ++prefix[all.candidates[placed].probe.host.name];
    }
    EXPECT_EQ(counts(allocate(probes, k)), prefix) << "first " << k << " processes";
  }
  EXPECT_EQ(usable_slot_total({down("emu9", "refused"), host("emu2", 3, 0.0)}), 3);
}

// What program_problem says when 8 processes go to h1 and h2 (h3 is busy: not chosen) and the
// probe found the program in these states there.
ProgramProblem problem_with(bspg::hosts::ProgramStatus h1, bspg::hosts::ProgramStatus h2,
                            bspg::hosts::ProgramStatus h3) {
  std::vector<ProbeResult> probes{host("h1", 4, 0.0), host("h2", 4, 0.0), host("h3", 4, 3.9)};
  probes[0].program_status = h1;
  probes[1].program_status = h2;
  probes[2].program_status = h3;
  return program_problem(allocate(probes, 8), "/opt/prog");
}

TEST(ProgramProblem, ChosenHostsWithoutTheProgramAreNamed) {
  using S = bspg::hosts::ProgramStatus;
  EXPECT_EQ(problem_with(S::kOk, S::kOk, S::kOk).exit_status, 0);
  EXPECT_EQ(problem_with(S::kOk, S::kOk, S::kNotFound).exit_status, 0);   // h3 is not chosen
  EXPECT_EQ(problem_with(S::kUnchecked, S::kOk, S::kOk).exit_status, 0);  // nothing checked
  const ProgramProblem missing = problem_with(S::kNotFound, S::kNotFound, S::kOk);
  EXPECT_EQ(missing.exit_status, 127);
  EXPECT_EQ(missing.message,
            "h1, h2: program /opt/prog not found there (--stage copies it to the hosts)");
  const ProgramProblem not_executable = problem_with(S::kOk, S::kNotExecutable, S::kOk);
  EXPECT_EQ(not_executable.exit_status, 126);
  EXPECT_EQ(not_executable.message,
            "h2: /opt/prog is not executable there (--stage copies it with its exec bits)");
  EXPECT_EQ(problem_with(S::kOk, S::kNotRegularFile, S::kOk).message,
            "h2: /opt/prog is not a regular file there");
}

TEST(ProbeTable, ShowsWhatHostsAnsweredEscaped) {
  std::vector<ProbeResult> probes{host("h1", 4, 0.0),
                                  down("h2", "command failed: \x1b[2J\x1b]0;owned\x07")};
  const std::string table = format_probe_table(allocate(probes, 1));
  EXPECT_EQ(table.find('\x1b'), std::string::npos) << table;
  EXPECT_NE(table.find("not used: command failed: \\x1b[2J\\x1b]0;owned\\x07"), std::string::npos)
      << table;
}

// Two sites of two idle 2-core hosts; site b's a little less loaded.
std::vector<ProbeResult> two_sites() {
  return {host("a1", 2, 0.10, 0, 0, "a"), host("a2", 2, 0.10, 0, 0, "a"),
          host("b3", 2, 0.05, 0, 0, "b"), host("b4", 2, 0.05, 0, 0, "b")};
}

TEST(AllocateSites, SimilarHostsFillTheFewestSites) {
  for (int p = 1; p <= 4; ++p) {
    Allocation a = allocate(two_sites(), p);
    ASSERT_EQ(a.subjobs.size(), 1u) << "p = " << p;
    EXPECT_EQ(a.subjobs[0].site, "b");
    EXPECT_EQ(a.subjobs[0].count, p);
    EXPECT_TRUE(a.spread_reasons.empty());
  }
  // p = 2: one process on each host of the site, not two on one host.
  EXPECT_EQ(counts(allocate(two_sites(), 2)),
            (std::map<std::string, int>{{"a1", 0}, {"a2", 0}, {"b3", 1}, {"b4", 1}}));
}

TEST(AllocateSites, TheSiteWithMoreRoomIsTakenFirst) {
  // a1 is the least loaded host, but site b has room for all three processes.
  Allocation a = allocate(
      {host("a1", 2, 0.0, 0, 0, "a"), host("b2", 2, 0.1, 0, 0, "b"), host("b3", 2, 0.1, 0, 0, "b")},
      3);
  ASSERT_EQ(a.subjobs.size(), 1u);
  EXPECT_EQ(a.subjobs[0].site, "b");
  EXPECT_EQ(a.subjobs[0].count, 3);
}

TEST(AllocateSites, AFullSiteSpreadsTheJobAndSaysWhy) {
  Allocation a = allocate(two_sites(), 5);
  ASSERT_EQ(a.subjobs.size(), 2u);
  EXPECT_EQ(a.subjobs[0].site, "b");
  EXPECT_EQ(a.subjobs[0].count, 4);
  EXPECT_EQ(a.subjobs[1].count, 1);
  ASSERT_EQ(a.spread_reasons.size(), 1u);
  EXPECT_EQ(a.spread_reasons[0], "process 4 went to site a: the hosts of b had no slot left");
  EXPECT_NE(format_probe_table(a).find("spread across sites: process 4 went to site a"),
            std::string::npos);
}

TEST(AllocateSites, ABusierSiteSpreadsTheJobAndSaysWhy) {
  // b1 has two idle cores and four slots, a1 two cores at load 0.1: the third process would
  // have no core left on b1.
  Allocation a = allocate({host("a1", 2, 0.1, 0, 0, "a"), host("b1", 2, 0.0, 0, 4, "b")}, 3);
  EXPECT_EQ(counts(a), (std::map<std::string, int>{{"a1", 1}, {"b1", 2}}));
  ASSERT_EQ(a.spread_reasons.size(), 1u);
  EXPECT_EQ(a.spread_reasons[0],
            "process 2 went to site a: on b it would have had 0.00 of a core free, on a 1.90");
}

TEST(AllocateSites, ClearlyLessLoadedHostsWinOverFewerSites) {
  // Site a's hosts are busy (0.5 of 2 cores free): one process each on b's idle hosts first.
  Allocation a = allocate(
      {host("a1", 2, 1.5, 0, 0, "a"), host("a2", 2, 1.5, 0, 0, "a"), host("b3", 2, 0.0, 0, 0, "b")},
      2);
  EXPECT_EQ(counts(a), (std::map<std::string, int>{{"a1", 0}, {"a2", 0}, {"b3", 2}}));
  // A third goes to a (0.5 free) rather than to b3 (0 free), and the table says why.
  a = allocate(
      {host("a1", 2, 1.5, 0, 0, "a"), host("a2", 2, 1.5, 0, 0, "a"), host("b3", 2, 0.0, 0, 3, "b")},
      3);
  EXPECT_EQ(counts(a), (std::map<std::string, int>{{"a1", 1}, {"a2", 0}, {"b3", 2}}));
  ASSERT_EQ(a.spread_reasons.size(), 1u);
}

TEST(AllocateSites, FewerProcessesGoWhereTheFirstOfMoreGo) {
  std::vector<ProbeResult> probes = two_sites();
  probes.push_back(host("solo5", 4, 1.0));
  probes.push_back(host("c6", 2, 0.5, 0, 0, "c"));
  const int total = usable_slot_total(probes);
  Allocation all = allocate(probes, total);
  for (int k = 1; k <= total; ++k) {
    std::map<std::string, int> prefix;
    for (const auto& c : all.candidates) prefix[c.probe.host.name] = 0;
    for (int i = 0; i < k; ++i)
      ++prefix[all.candidates[static_cast<size_t>(all.placement[static_cast<size_t>(i)])]
                   .probe.host.name];
    EXPECT_EQ(counts(allocate(probes, k)), prefix) << "first " << k << " processes";
  }
}

TEST(ProbeTable, ShowsRoundTripsAndSites) {
  std::vector<ProbeResult> probes = two_sites();
  probes[0].round_trip_ms = 50.24;
  probes[1].round_trip_ms = 51.0;
  probes[2].round_trip_ms = 0.052;
  probes.push_back(down("b5", "connection refused"));
  probes.back().host.site = "b";
  const std::string table = format_probe_table(allocate(probes, 2));
  EXPECT_NE(table.find("RTT-MS"), std::string::npos) << table;
  EXPECT_NE(table.find("   50.2  "), std::string::npos) << table;
  EXPECT_NE(table.find("site a: 2 of 2 hosts reachable, round trip from here 50.2 ms\n"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("site b: 2 of 3 hosts reachable, round trip from here 0.05 ms\n"),
            std::string::npos)
      << table;
  EXPECT_EQ(table.find("spread across"), std::string::npos) << table;
  EXPECT_NE(table.find("0 (not needed: the job fits on fewer sites)"), std::string::npos) << table;
  EXPECT_EQ(table.find("sites a and b"), std::string::npos) << table;  // nothing measured
}

TEST(ProbeTable, ShowsTheShortestRoundTripBetweenSitesEitherWay) {
  std::vector<ProbeResult> probes = two_sites();
  probes[0].site_round_trips_ms = {{"a", 0.2}, {"b", 51.5}};
  probes[1].site_round_trips_ms = {{"b", 50.4}};
  probes[2].site_round_trips_ms = {{"a", 50.9}};
  probes[2].ok = true;
  const std::string table = format_probe_table(allocate(probes, 2));
  EXPECT_NE(table.find("sites a and b: round trip 50.4 ms (measured by their hosts)\n"),
            std::string::npos)
      << table;
}

TEST(Allocate, HostsBeyondTheirCoresAreNamedWhateverTheirSlots) {
  // Slots above the cores (a host file's choice): the processes placed beyond the cores are named.
  auto a = allocate({host("emu1", 2, 0.0, 4'000'000, 4), host("emu2", 2, 0.0, 4'000'000, 3),
                     host("emu3", 4, 0.0, 4'000'000, 4)},
                    9);
  EXPECT_EQ(counts(a), (std::map<std::string, int>{{"emu1", 3}, {"emu2", 2}, {"emu3", 4}}));
  EXPECT_EQ(hosts_beyond_their_cores(a), "emu1 (3 on 2 cores)");
  // Within the cores everywhere: nothing to say.
  EXPECT_EQ(hosts_beyond_their_cores(allocate({host("emu1", 2, 0.0), host("emu2", 2, 1.0)}, 3)),
            "");
}

namespace {

// The host of each pid, as the plan's subjobs place them (pids in subjob order, then host order).
std::vector<std::string> pid_hosts(const Allocation& a) {
  std::vector<std::string> hosts;
  for (const auto& sj : a.subjobs)
    for (const auto& h : sj.hosts)
      hosts.insert(hosts.end(), static_cast<std::size_t>(h.count), h.name);
  return hosts;
}

}  // namespace

TEST(KeepPreviousHosts, EachProcessStaysWhereItRanAndTheNewHostTakesTheLostPlace) {
  // The job ran pid 0 on emu2, 1 on emu3, 2 on emu4, 3 on emu1; emu4 was lost and emu5 is new.
  auto a = allocate({host("emu1", 1, 0.0, 0, 1), host("emu2", 1, 0.0, 0, 1),
                     host("emu3", 1, 0.0, 0, 1), down("emu4", "lost"), host("emu5", 1, 0.0, 0, 1)},
                    4);
  ASSERT_EQ(pid_hosts(a), (std::vector<std::string>{"emu1", "emu2", "emu3", "emu5"}));
  keep_previous_hosts(a, {"emu2", "emu3", "emu4", "emu1"});
  EXPECT_EQ(pid_hosts(a), (std::vector<std::string>{"emu2", "emu3", "emu5", "emu1"}));
  // Each subjob keeps its host and count: only the order changed.
  for (const auto& sj : a.subjobs) EXPECT_EQ(sj.count, sj.hosts.front().count);
}

TEST(KeepPreviousHosts, HostsOfSeveralProcessesKeepTheirBlocks) {
  // Pids 0-1 on h1, 2-3 on h2, 4-5 on h3; h3 lost, h4 new and the least loaded.
  auto a = allocate({host("h1", 2, 1.0, 0, 2), host("h2", 2, 0.5, 0, 2), down("h3", "lost"),
                     host("h4", 2, 0.0, 0, 2)},
                    6);
  keep_previous_hosts(a, {"h1", "h1", "h2", "h2", "h3", "h3"});
  EXPECT_EQ(pid_hosts(a), (std::vector<std::string>{"h1", "h1", "h2", "h2", "h4", "h4"}));
}

TEST(KeepPreviousHosts, ASiteStaysOneSubjobWhereverItsHostsGo) {
  // Pid 0 ran on a2 and pid 1 on a1, of site lab, pids 2-3 on the lone host s; a1 was lost, and
  // a3 of lab is new.
  auto a = allocate({down("a1", "lost"), host("a2", 1, 0.5, 0, 1, "lab"),
                     host("a3", 1, 0.0, 0, 1, "lab"), host("s", 2, 0.9, 0, 2)},
                    4);
  ASSERT_EQ(pid_hosts(a), (std::vector<std::string>{"s", "s", "a3", "a2"}));
  keep_previous_hosts(a, {"a2", "a1", "s", "s"});
  EXPECT_EQ(pid_hosts(a), (std::vector<std::string>{"a2", "a3", "s", "s"}));
  ASSERT_EQ(a.subjobs.size(), 2u);
  EXPECT_EQ(a.subjobs[0].site, "lab");
  EXPECT_EQ(a.subjobs[0].count, 2);
}

TEST(KeepPreviousHosts, NoPreviousPlacementChangesNothing) {
  auto a = allocate({host("h1", 2, 1.0), host("h2", 2, 0.0), host("h3", 2, 0.5)}, 5);
  const std::vector<std::string> before = pid_hosts(a);
  keep_previous_hosts(a, {});
  EXPECT_EQ(pid_hosts(a), before);
}

TEST(KeepPreviousHosts, NewHostsBeyondTheLostPlacesComeLast) {
  // A job that ran 2 processes on h1 restarts with 6 (--resume with more hosts): h1 keeps
  // pids 0-1, the new hosts come after it.
  auto a =
      allocate({host("h1", 2, 1.5, 0, 2), host("h2", 2, 0.0, 0, 2), host("h3", 2, 0.0, 0, 2)}, 6);
  keep_previous_hosts(a, {"h1", "h1"});
  const std::vector<std::string> hosts = pid_hosts(a);
  ASSERT_EQ(hosts.size(), 6u);
  EXPECT_EQ(hosts[0], "h1");
  EXPECT_EQ(hosts[1], "h1");
}
