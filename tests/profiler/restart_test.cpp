// Two attempts: the attempt column, one track per process across both, and the restart marked.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "test_support.h"

namespace bspprof_test {
namespace {

constexpr double kFirstBegin = 50.0;
constexpr double kSecondBegin = 80.0;

// Attempt 0 ran supersteps 0..2 and died; attempt 1 resumed from the checkpoint at superstep 2
// on another host and ended.
void write_restarted_job(const std::string& dir) {
  for (int pid = 0; pid < 2; ++pid) {
    RawWriter first(dir, 0, 0, pid, 2, kFirstBegin);
    first.world(0, 51.0, 51.5);
    first.world(1, 52.0, 52.5, {}, SyncKind::Checkpoint);
    first.world(2, 53.0, 53.5);
    RawWriter second(dir, 1, 0, pid, 2, kSecondBegin + 0.01 * pid, "spare" + std::to_string(pid),
                     [](FileHeader& h) { h.first_superstep = 2; });
    second.world(2, 81.0, 81.5);
    second.world(3, 82.0, 82.5, {}, SyncKind::End);
  }
}

TEST(Restart, AttemptColumnAndOrder) {
  ScratchDir dir;
  write_restarted_job(dir.path());
  const MergeResult result = merge(dir.path());
  ASSERT_EQ(result.status, 0) << result.errors;
  const Csv csv = read_csv(dir.path() + "/supersteps.csv");
  ASSERT_EQ(csv.rows.size(), 10u);
  const char* expected[][3] = {{"0", "0", "sync"},
                               {"0", "1", "checkpoint"},
                               {"0", "2", "sync"},
                               {"1", "2", "sync"},
                               {"1", "3", "end"}};
  for (std::size_t row = 0; row < 10; ++row) {
    SCOPED_TRACE("row " + std::to_string(row));
    EXPECT_EQ(csv.text(row, "attempt"), expected[row / 2][0]);
    EXPECT_EQ(csv.text(row, "superstep"), expected[row / 2][1]);
    EXPECT_EQ(csv.text(row, "kind"), expected[row / 2][2]);
    EXPECT_EQ(csv.text(row, "pid"), std::to_string(row % 2));
  }
  // start_s counts from the first attempt's bsp_begin; compute from this attempt's.
  EXPECT_NEAR(csv.number(6, "start_s"), 81.0 - kFirstBegin, 1e-9);
  EXPECT_NEAR(csv.number(6, "compute_s"), 81.0 - kSecondBegin, 1e-9);
  EXPECT_EQ(csv.text(6, "host"), "spare0");
  EXPECT_NE(result.summary.find("restarts: 1: attempt 1 began at 30.000 s (step 3)"),
            std::string::npos)
      << result.summary;
}

// As bspg writes it: attempt 1 redoes the program's setup sync (superstep 0), then bspg_resume
// numbers its supersteps on from the checkpoint's (2, then 3): one axis across the attempts.
TEST(Restart, SetUpAgainThenNumberedOnFromTheCheckpoint) {
  ScratchDir dir;
  for (int pid = 0; pid < 2; ++pid) {
    RawWriter first(dir.path(), 0, 0, pid, 2, kFirstBegin);
    first.world(0, 51.0, 51.5);
    first.world(1, 52.0, 52.5, {}, SyncKind::Checkpoint);
    first.world(2, 53.0, 53.5);
    RawWriter second(dir.path(), 1, 0, pid, 2, kSecondBegin, "",
                     [](FileHeader& h) { h.first_superstep = 2; });
    second.world(0, 80.5, 80.6);
    second.world(2, 81.0, 81.5);
    second.world(3, 82.0, 82.5, {}, SyncKind::End);
  }
  const MergeResult result = merge(dir.path());
  ASSERT_EQ(result.status, 0) << result.errors;
  EXPECT_EQ(result.errors, "");
  const Csv csv = read_csv(dir.path() + "/supersteps.csv");
  ASSERT_EQ(csv.rows.size(), 12u);
  const char* expected[][2] = {{"0", "0"}, {"0", "1"}, {"0", "2"},
                               {"1", "0"}, {"1", "2"}, {"1", "3"}};
  for (std::size_t row = 0; row < 12; ++row) {
    SCOPED_TRACE("row " + std::to_string(row));
    EXPECT_EQ(csv.text(row, "attempt"), expected[row / 2][0]);
    EXPECT_EQ(csv.text(row, "superstep"), expected[row / 2][1]);
  }
  // The first step after resuming computed from the setup sync's return.
  EXPECT_NEAR(csv.number(8, "compute_s"), 81.0 - 80.6, 1e-9);
  EXPECT_NE(result.summary.find("restarts: 1: attempt 1 began at 30.000 s (step 3)"),
            std::string::npos)
      << result.summary;
}

TEST(Restart, MarkedInTheTrace) {
  ScratchDir dir;
  write_restarted_job(dir.path());
  ASSERT_EQ(merge(dir.path()).status, 0);
  const YAML::Node trace = YAML::Load(read_file(dir.path() + "/profile.json"));
  int restarts = 0;
  std::map<int, std::string> names;
  for (const YAML::Node& event : trace["traceEvents"]) {
    const std::string name = event["name"].as<std::string>();
    if (name == "process_name")
      names[event["pid"].as<int>()] = event["args"]["name"].as<std::string>();
    if (event["ph"].as<std::string>() != "i") continue;
    ++restarts;
    EXPECT_EQ(name, "restart 1");
    EXPECT_EQ(event["s"].as<std::string>(), "g");
    EXPECT_NEAR(event["ts"].as<double>(), (kSecondBegin - kFirstBegin) * 1e6, 1e-3);
  }
  EXPECT_EQ(restarts, 1);
  // One track per process, named with both its hosts.
  EXPECT_EQ(names.size(), 2u);
  EXPECT_EQ(names[0], "process 0 (node0, spare0)");
  EXPECT_EQ(names[1], "process 1 (node1, spare1)");
}

// With the trace cut, a restart is marked only if a traced step comes after it (attempt 1
// begins with step 3).
TEST(Restart, MarkedInACutTraceBeforeATracedStep) {
  for (const std::uint64_t trace_steps : {std::uint64_t{3}, std::uint64_t{4}}) {
    SCOPED_TRACE("trace_steps " + std::to_string(trace_steps));
    ScratchDir dir;
    write_restarted_job(dir.path());
    const MergeResult result = merge(dir.path(), false, "/nonexistent/bspbench.dat", trace_steps);
    ASSERT_EQ(result.status, 0) << result.errors;
    const YAML::Node trace = YAML::Load(read_file(dir.path() + "/profile.json"));
    int restarts = 0, slices_of_attempt_1 = 0;
    for (const YAML::Node& event : trace["traceEvents"]) {
      const std::string ph = event["ph"].as<std::string>();
      if (ph == "i") ++restarts;
      if (ph == "X" && event["args"]["attempt"].as<int>() == 1) ++slices_of_attempt_1;
    }
    EXPECT_EQ(restarts, trace_steps == 3 ? 0 : 1);
    EXPECT_EQ(slices_of_attempt_1 > 0, trace_steps == 4);
    EXPECT_NE(
        result.summary.find("trace: the first " + std::to_string(trace_steps) + " of 5 steps"),
        std::string::npos)
        << result.summary;
  }
}

TEST(Restart, MarkedInThePlot) {
  ScratchDir dir;
  write_restarted_job(dir.path());
  ASSERT_EQ(merge(dir.path()).status, 0);
  const std::string script = read_file(dir.path() + "/profile.gp");
  EXPECT_NE(script.find("set arrow 1 from 2.5, graph 0 to 2.5, graph 1 nohead"), std::string::npos)
      << script;
  EXPECT_NE(script.find("'restart 1' at 2.5"), std::string::npos);
}

}  // namespace
}  // namespace bspprof_test
