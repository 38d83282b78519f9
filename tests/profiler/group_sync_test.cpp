// Group syncs: matched across the processes of each group, between the world syncs.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <map>
#include <memory>
#include <vector>

#include "test_support.h"

namespace bspprof_test {
namespace {

std::vector<std::unique_ptr<RawWriter>> four_processes(const std::string& dir) {
  std::vector<std::unique_ptr<RawWriter>> files;
  for (int pid = 0; pid < 4; ++pid)
    files.push_back(std::make_unique<RawWriter>(dir, 0, 0, pid, 4, 0.0));
  return files;
}

// bspg_group_split(pid / 2): groups {0,1} and {2,3}, both with handle 1, told apart by their
// lowest pids 0 and 2. Two group supersteps in which partners exchange, then a world sync.
TEST(GroupSync, GroupsOfOneSplitAreToldApart) {
  ScratchDir dir;
  {
    auto files = four_processes(dir.path());
    for (int pid = 0; pid < 4; ++pid) {
      const int partner = pid ^ 1;
      const double late = pid == 3 ? 0.2 : 0.0;  // process 3 computes longer in group steps
      const int first = pid & ~1;
      files[pid]->sync(SyncKind::GroupSync, 1, first, 0, 0, 1.0 + late, 1.25, 2,
                       {put(partner, 8 * (pid + 1))});
      files[pid]->sync(SyncKind::GroupSync, 1, first, 0, 1, 2.0 + late, 2.25, 2, {put(partner, 8)});
      files[pid]->world(0, 3.0, 3.5);
    }
  }
  const MergeResult result = merge(dir.path());
  ASSERT_EQ(result.status, 0) << result.errors;
  const Csv csv = read_csv(dir.path() + "/supersteps.csv");
  // Group step 0 of {0,1}, then of {2,3}; group step 1 likewise; then the world sync.
  ASSERT_EQ(csv.rows.size(), 12u);
  const int expected_pid[] = {0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3};
  for (std::size_t row = 0; row < 12; ++row) {
    SCOPED_TRACE("row " + std::to_string(row));
    EXPECT_EQ(csv.text(row, "pid"), std::to_string(expected_pid[row]));
    EXPECT_EQ(csv.text(row, "superstep"), "0");
    EXPECT_EQ(csv.text(row, "kind"), row < 8 ? "group_sync" : "sync");
    EXPECT_EQ(csv.text(row, "group"), row < 8 ? "1" : "-1");
    EXPECT_EQ(csv.text(row, "group_first"), row < 8 ? (row % 4 < 2 ? "0" : "2") : "-1");
    EXPECT_EQ(csv.text(row, "group_step"), row < 4 ? "0" : row < 8 ? "1" : "0");
  }
  // Each group's h is its own: {0,1} exchange 8 and 16 bytes, {2,3} 24 and 32.
  EXPECT_EQ(csv.text(0, "h_bytes"), "16");
  EXPECT_EQ(csv.text(2, "h_bytes"), "32");
  // Process 2 waits for process 3 only; processes 0 and 1 wait for no one.
  EXPECT_NEAR(csv.number(0, "wait_s"), 0, 1e-9);
  EXPECT_NEAR(csv.number(1, "wait_s"), 0, 1e-9);
  EXPECT_NEAR(csv.number(2, "wait_s"), 0.2, 1e-9);
  EXPECT_NEAR(csv.number(3, "wait_s"), 0, 1e-9);
  // Compute is measured from the process's previous sync, group or world.
  EXPECT_NEAR(csv.number(4, "compute_s"), 0.75, 1e-9);
  EXPECT_NEAR(csv.number(8, "compute_s"), 0.75, 1e-9);
  EXPECT_NEAR(csv.number(11, "compute_s"), 0.75, 1e-9);
}

// A group whose members exchange nothing: the only group of its handle, so one step.
TEST(GroupSync, SilentSingleGroupIsOneStep) {
  ScratchDir dir;
  {
    auto files = four_processes(dir.path());
    for (int pid = 0; pid < 4; ++pid) {
      if (pid != 3) files[pid]->sync(SyncKind::GroupSync, 2, 0, 0, 0, 1.0 + 0.1 * pid, 1.5, 3);
      files[pid]->world(0, 2.0, 2.5);
    }
  }
  ASSERT_EQ(merge(dir.path()).status, 0);
  const Csv csv = read_csv(dir.path() + "/supersteps.csv");
  ASSERT_EQ(csv.rows.size(), 7u);
  EXPECT_NEAR(csv.number(0, "wait_s"), 0.2, 1e-9);
  EXPECT_NEAR(csv.number(1, "wait_s"), 0.1, 1e-9);
  EXPECT_NEAR(csv.number(2, "wait_s"), 0, 1e-9);
}

// bspg_group_split(pid % 2): groups {0,2} and {1,3}, both with handle 1, in which no process
// puts, gets or sends anything. Each group is still one step of its two members, told apart by
// the lowest pid each record names: the process that called first waits for its partner.
TEST(GroupSync, SilentGroupsOfOneSplitAreOneStepEach) {
  ScratchDir dir;
  {
    auto files = four_processes(dir.path());
    const double call[] = {1.0, 1.1, 1.3, 1.2};
    for (int pid = 0; pid < 4; ++pid) {
      files[pid]->sync(SyncKind::GroupSync, 1, pid % 2, 0, 0, call[pid], 1.5, 2);
      files[pid]->world(0, 2.0, 2.5);
    }
  }
  const MergeResult result = merge(dir.path());
  ASSERT_EQ(result.status, 0) << result.errors;
  EXPECT_EQ(result.errors, "");
  const Csv csv = read_csv(dir.path() + "/supersteps.csv");
  ASSERT_EQ(csv.rows.size(), 8u);
  // The step of {0,2} (lowest pid 0), then that of {1,3}, then the world sync.
  const char* expected_pid[] = {"0", "2", "1", "3"};
  const char* expected_first[] = {"0", "0", "1", "1"};
  const double expected_wait[] = {0.3, 0, 0.1, 0};
  for (std::size_t row = 0; row < 4; ++row) {
    SCOPED_TRACE("row " + std::to_string(row));
    EXPECT_EQ(csv.text(row, "pid"), expected_pid[row]);
    EXPECT_EQ(csv.text(row, "kind"), "group_sync");
    EXPECT_EQ(csv.text(row, "group"), "1");
    EXPECT_EQ(csv.text(row, "group_first"), expected_first[row]);
    EXPECT_EQ(csv.text(row, "h_bytes"), "0");
    EXPECT_NEAR(csv.number(row, "wait_s"), expected_wait[row], 1e-9);
  }
  for (std::size_t row = 4; row < 8; ++row) EXPECT_EQ(csv.text(row, "group_first"), "-1");

  // The trace names the group of every slice by handle and lowest pid.
  const YAML::Node trace = YAML::Load(read_file(dir.path() + "/profile.json"));
  std::map<int, int> waits;  // pid -> group_first of its group sync's wait slice
  for (const YAML::Node& event : trace["traceEvents"]) {
    if (event["ph"].as<std::string>() != "X" || event["name"].as<std::string>() != "wait") continue;
    const YAML::Node args = event["args"];
    if (args["kind"].as<std::string>() != "group_sync") continue;
    EXPECT_EQ(args["group"].as<int>(), 1);
    waits[event["pid"].as<int>()] = args["group_first"].as<int>();
  }
  EXPECT_EQ(waits, (std::map<int, int>{{0, 0}, {1, 1}}));  // 2 and 3 called last: no wait
}

// A group sync naming a lowest pid that is no process of the job is a damaged record: the
// file's records before it are used, and the message names the file.
TEST(GroupSync, DamagedGroupFirst) {
  ScratchDir dir;
  {
    auto files = four_processes(dir.path());
    for (int pid = 0; pid < 4; ++pid) {
      const int first = pid & ~1;
      for (std::uint64_t s = 0; s < 2; ++s) {
        const double t = 10.0 * static_cast<double>(s);
        files[pid]->sync(SyncKind::GroupSync, 1, s == 1 && pid == 3 ? 7 : first, s, 0, t + 1, t + 2,
                         2);
        files[pid]->world(s, t + 3, t + 4);
      }
    }
  }
  const MergeResult result = merge(dir.path());
  ASSERT_EQ(result.status, 0) << result.errors;
  EXPECT_NE(result.errors.find("bspprof: " + dir.raw() +
                               "/a0.s0.p3.bspprof: record 2 (byte 216): group_first 7 is not a "
                               "process of 4; only the 2 records before it are used"),
            std::string::npos)
      << result.errors;
  EXPECT_NE(result.summary.find("1 file has a damaged record"), std::string::npos)
      << result.summary;
  const Csv csv = read_csv(dir.path() + "/supersteps.csv");
  // Superstep 0 whole (4 group rows, 4 world rows); in superstep 1 process 3 is gone: {0,1},
  // then process 2 alone in its group, then the world sync of 0, 1 and 2.
  ASSERT_EQ(csv.rows.size(), 14u);
  const char* expected_pid[] = {"0", "1", "2", "0", "1", "2"};
  const char* expected_first[] = {"0", "0", "2", "-1", "-1", "-1"};
  for (std::size_t row = 8; row < 14; ++row) {
    SCOPED_TRACE("row " + std::to_string(row));
    EXPECT_EQ(csv.text(row, "superstep"), "1");
    EXPECT_EQ(csv.text(row, "pid"), expected_pid[row - 8]);
    EXPECT_EQ(csv.text(row, "group_first"), expected_first[row - 8]);
  }
}

// Group syncs in the supersteps after a world sync, and group steps counted afresh in each.
TEST(GroupSync, AcrossSupersteps) {
  ScratchDir dir;
  {
    auto files = four_processes(dir.path());
    for (int pid = 0; pid < 4; ++pid) {
      const std::vector<PeerCount> to_partner = {put(pid ^ 1, 4)};
      for (std::uint64_t s = 0; s < 3; ++s) {
        const double t = 10.0 * static_cast<double>(s);
        files[pid]->sync(SyncKind::GroupSync, 1, pid & ~1, s, 0, t + 1, t + 2, 2, to_partner);
        files[pid]->world(s, t + 3, t + 4, {}, s == 2 ? SyncKind::End : SyncKind::Sync);
      }
    }
  }
  ASSERT_EQ(merge(dir.path()).status, 0);
  const Csv csv = read_csv(dir.path() + "/supersteps.csv");
  ASSERT_EQ(csv.rows.size(), 24u);
  for (std::size_t row = 0; row < 24; ++row) {
    const std::size_t in_superstep = row % 8;
    EXPECT_EQ(csv.text(row, "superstep"), std::to_string(row / 8));
    EXPECT_EQ(csv.text(row, "group"), in_superstep < 4 ? "1" : "-1");
    EXPECT_EQ(csv.text(row, "group_first"), in_superstep < 4 ? (row % 4 < 2 ? "0" : "2") : "-1");
    EXPECT_EQ(csv.text(row, "h_bytes"), in_superstep < 4 ? "4" : "0");
  }
  EXPECT_EQ(csv.text(23, "kind"), "end");
}

}  // namespace
}  // namespace bspprof_test
