// profile.json: valid JSON in Chrome's trace format, a track per process with its slices.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <map>

#include "ring.h"
#include "test_support.h"

namespace bspprof_test {
namespace {

YAML::Node load_trace(const std::string& dir) {
  const std::string text = read_file(dir + "/profile.json");
  YAML::Node trace = YAML::Load(text);  // JSON is YAML
  EXPECT_TRUE(trace.IsMap());
  EXPECT_EQ(trace["displayTimeUnit"].as<std::string>(), "ms");
  EXPECT_TRUE(trace["traceEvents"].IsSequence());
  return trace;
}

TEST(TraceJson, EveryProcessHasItsTrackAndSlices) {
  ScratchDir dir;
  write_ring(dir.path());
  ASSERT_EQ(merge(dir.path()).status, 0);
  const YAML::Node trace = load_trace(dir.path());

  std::map<int, std::string> names;
  std::map<int, std::map<std::string, int>> slices;  // pid -> name -> count
  for (const YAML::Node& event : trace["traceEvents"]) {
    const std::string ph = event["ph"].as<std::string>();
    const int pid = event["pid"].as<int>();
    if (ph == "M" && event["name"].as<std::string>() == "process_name")
      names[pid] = event["args"]["name"].as<std::string>();
    if (ph != "X") continue;
    const std::string name = event["name"].as<std::string>();
    ++slices[pid][name];
    EXPECT_GT(event["dur"].as<double>(), 0) << name;
    const YAML::Node args = event["args"];
    for (const char* key :
         {"superstep", "kind", "group", "group_first", "bytes_out", "bytes_in", "h_bytes"})
      EXPECT_TRUE(args[key].IsDefined()) << key;
    EXPECT_EQ(args["h_bytes"].as<unsigned>(), kRingBytes);
    EXPECT_EQ(args["group"].as<int>(), -1);
    EXPECT_EQ(args["group_first"].as<int>(), -1);
  }
  for (int pid = 0; pid < kProcs; ++pid) {
    SCOPED_TRACE("pid " + std::to_string(pid));
    EXPECT_EQ(names[pid], "process " + std::to_string(pid) + " (" + host_name(pid) + ")");
    EXPECT_EQ(slices[pid]["compute"], kRingSupersteps);
    EXPECT_EQ(slices[pid]["communication"], kRingSupersteps);
    // The slow process waits for no one: slices of no duration are left out.
    EXPECT_EQ(slices[pid]["wait"], pid == kSlowPid ? 0 : kRingSupersteps);
  }
}

TEST(TraceJson, SlicesSitOnTheJobClockInMicroseconds) {
  ScratchDir dir;
  write_ring(dir.path());
  ASSERT_EQ(merge(dir.path()).status, 0);
  const YAML::Node trace = load_trace(dir.path());
  const double step_us = (kSlowCompute + kSyncWork) * 1e6;
  int checked = 0;
  for (const YAML::Node& event : trace["traceEvents"]) {
    if (event["ph"].as<std::string>() != "X" || event["pid"].as<int>() != 0) continue;
    const int superstep = event["args"]["superstep"].as<int>();
    const std::string name = event["name"].as<std::string>();
    const double ts = event["ts"].as<double>(), dur = event["dur"].as<double>();
    const double step_start = superstep * step_us;
    if (name == "compute") {
      EXPECT_NEAR(ts, step_start, 0.01);
      EXPECT_NEAR(dur, kCompute * 1e6, 0.01);
    } else if (name == "wait") {
      EXPECT_NEAR(ts, step_start + kCompute * 1e6, 0.01);
      EXPECT_NEAR(dur, (kSlowCompute - kCompute) * 1e6, 0.01);
    } else {
      EXPECT_EQ(name, "communication");
      EXPECT_NEAR(ts, step_start + kSlowCompute * 1e6, 0.01);
      EXPECT_NEAR(dur, kSyncWork * 1e6, 0.01);
    }
    ++checked;
  }
  EXPECT_EQ(checked, 3 * kRingSupersteps);
}

// Host names are the processes' own: quotes, backslashes and control bytes must not break JSON.
TEST(TraceJson, HostNamesAreEscaped) {
  ScratchDir dir;
  {
    RawWriter p0(dir.path(), 0, 0, 0, 2, 1.0, "a\"b\\c\x1b[2J");
    RawWriter p1(dir.path(), 0, 0, 1, 2, 1.0, "caf\xc3\xa9");
    p0.world(0, 1.1, 1.2);
    p1.world(0, 1.1, 1.2);
  }
  ASSERT_EQ(merge(dir.path()).status, 0);
  const YAML::Node trace = load_trace(dir.path());
  std::map<int, std::string> names;
  for (const YAML::Node& event : trace["traceEvents"])
    if (event["name"].as<std::string>() == "process_name")
      names[event["pid"].as<int>()] = event["args"]["name"].as<std::string>();
  EXPECT_EQ(names[0], "process 0 (a\"b\\c?[2J)");
  EXPECT_EQ(names[1],
            "process 1 (caf?"
            "?)");
}

}  // namespace
}  // namespace bspprof_test
