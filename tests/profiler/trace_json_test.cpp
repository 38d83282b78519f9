// profile.json: valid JSON in Chrome's trace format, a track per process with its slices.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <map>
#include <nlohmann/json.hpp>

#include "outputs.h"
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

// The slices of every process in the trace, by superstep: pid -> superstep -> slices.
std::map<int, std::map<int, int>> slices_by_superstep(const YAML::Node& trace) {
  std::map<int, std::map<int, int>> slices;
  for (const YAML::Node& event : trace["traceEvents"])
    if (event["ph"].as<std::string>() == "X")
      ++slices[event["pid"].as<int>()][event["args"]["superstep"].as<int>()];
  return slices;
}

// A long job's trace holds its first steps only, and stays JSON; the other outputs and the
// summary still cover every step, and the summary says the trace was cut.
TEST(TraceJson, CappedToTheFirstSteps) {
  constexpr int kSteps = 10, kTraced = 4;
  ScratchDir dir;
  write_ring(dir.path(), kSteps);
  const MergeResult result = merge(dir.path(), false, "/nonexistent/bspbench.dat", kTraced);
  ASSERT_EQ(result.status, 0) << result.errors;
  const std::map<int, std::map<int, int>> slices = slices_by_superstep(load_trace(dir.path()));
  ASSERT_EQ(slices.size(), static_cast<std::size_t>(kProcs));
  for (const auto& [pid, steps] : slices) {
    SCOPED_TRACE("pid " + std::to_string(pid));
    std::map<int, int> expected;
    for (int s = 0; s < kTraced; ++s) expected[s] = pid == kSlowPid ? 2 : 3;
    EXPECT_EQ(steps, expected);
  }
  EXPECT_EQ(read_csv(dir.path() + "/supersteps.csv").rows.size(),
            static_cast<std::size_t>(kSteps * kProcs));
  EXPECT_NE(result.summary.find("p = 4, 10 steps (9 sync, 1 end)"), std::string::npos)
      << result.summary;
  EXPECT_NE(result.summary.find("\ntrace: the first 4 of 10 steps in profile.json (bspprof "
                                "--trace-steps 0 " +
                                dir.path() + " for all)\n"),
            std::string::npos)
      << result.summary;
}

TEST(TraceJson, NoCapOrCapNotReachedWritesEveryStep) {
  constexpr int kSteps = 10;
  for (const std::uint64_t trace_steps :
       {std::uint64_t{0}, std::uint64_t{kSteps}, bspg::profile::MergeOptions{}.trace_steps}) {
    SCOPED_TRACE("trace_steps " + std::to_string(trace_steps));
    ScratchDir dir;
    write_ring(dir.path(), kSteps);
    const MergeResult result = merge(dir.path(), false, "/nonexistent/bspbench.dat", trace_steps);
    ASSERT_EQ(result.status, 0) << result.errors;
    const std::map<int, std::map<int, int>> slices = slices_by_superstep(load_trace(dir.path()));
    ASSERT_EQ(slices.size(), static_cast<std::size_t>(kProcs));
    for (const auto& [pid, steps] : slices) {
      EXPECT_EQ(steps.size(), static_cast<std::size_t>(kSteps)) << "pid " << pid;
      EXPECT_EQ(steps.rbegin()->first, kSteps - 1) << "pid " << pid;
    }
    EXPECT_EQ(result.summary.find("trace:"), std::string::npos) << result.summary;
  }
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

// The whole file read by a strict JSON parser (nlohmann's), and every event with what
// Perfetto's importer of legacy JSON traces reads: "ph", "name", "pid" and "tid", a numeric
// "ts", and on a complete ("X") event a "dur" >= 0. Returns the events by phase.
std::map<std::string, int> expect_perfetto_readable(const std::string& path) {
  std::map<std::string, int> phases;
  const nlohmann::json trace = nlohmann::json::parse(read_file(path), nullptr, false);
  EXPECT_FALSE(trace.is_discarded()) << path << " is not JSON";
  if (trace.is_discarded()) return phases;
  EXPECT_TRUE(trace.is_object());
  EXPECT_EQ(trace.value("displayTimeUnit", ""), "ms");
  EXPECT_TRUE(trace.contains("traceEvents") && trace["traceEvents"].is_array());
  if (!trace.contains("traceEvents") || !trace["traceEvents"].is_array()) return phases;
  for (const nlohmann::json& event : trace["traceEvents"]) {
    SCOPED_TRACE(event.dump());
    if (!event.is_object() || !event.contains("ph") || !event["ph"].is_string()) {
      ADD_FAILURE() << "an event that is not an object with a \"ph\"";
      continue;
    }
    EXPECT_TRUE(event.contains("name") && event["name"].is_string());
    EXPECT_TRUE(event.contains("pid") && event["pid"].is_number_integer());
    EXPECT_TRUE(event.contains("tid") && event["tid"].is_number_integer());
    EXPECT_TRUE(event.contains("ts") && event["ts"].is_number());
    const std::string ph = event["ph"].get<std::string>();
    ++phases[ph];
    if (ph == "X") {
      const bool timed = event.contains("dur") && event["dur"].is_number();
      EXPECT_TRUE(timed);
      if (timed) {
        EXPECT_GE(event["dur"].get<double>(), 0);
      }
    }
  }
  return phases;
}

TEST(TraceJson, ReadableAsPerfettoReadsLegacyJson) {
  ScratchDir dir;
  write_ring(dir.path());
  ASSERT_EQ(merge(dir.path()).status, 0);
  std::map<std::string, int> phases = expect_perfetto_readable(dir.path() + "/profile.json");
  EXPECT_EQ(phases["M"], 2 * kProcs);  // process_name and process_sort_index
  // Compute, wait and communication; the slow process never waits.
  EXPECT_EQ(phases["X"], 3 * kRingSupersteps * kProcs - kRingSupersteps);

  // A restart adds an instant ("i") event, and the slices an "attempt".
  ScratchDir restarted;
  for (int pid = 0; pid < 2; ++pid) {
    RawWriter first(restarted.path(), 0, 0, pid, 2, 50.0);
    first.world(0, 51.0, 51.5, {}, SyncKind::Checkpoint);
    RawWriter second(restarted.path(), 1, 0, pid, 2, 80.0, "spare",
                     [](FileHeader& h) { h.first_superstep = 1; });
    second.world(1, 81.0, 81.5, {}, SyncKind::End);
  }
  ASSERT_EQ(merge(restarted.path()).status, 0);
  phases = expect_perfetto_readable(restarted.path() + "/profile.json");
  EXPECT_EQ(phases["i"], 1);
  EXPECT_EQ(phases["X"], 2 * 2 * 2);  // compute and communication, 2 processes, 2 steps
}

// The names in the trace are text from the raw files' headers. bspprof makes them printable
// first, but the trace itself must stay JSON whatever a name holds: written here straight,
// with quotes, backslashes, control characters and a byte that is not UTF-8.
TEST(TraceJson, AnyNameStaysJson) {
  ScratchDir dir;
  bspg::profile::ProfileScan scan;
  scan.attempts = {{0, 0.0}};
  bspg::profile::SectionFiles section;
  section.nprocs = 3;
  const std::string hosts[] = {"a\"b\\c\x1b[2J\n\t\x01\x7f", "caf\xc3\xa9", "bad\xff"};
  for (int pid = 0; pid < 3; ++pid) {
    bspg::profile::RawFile file;
    file.header.pid = pid;
    file.host = hosts[pid];
    section.files.push_back(file);
  }
  scan.sections.push_back(section);
  bspg::profile::TraceOutput trace;
  const std::string path = dir.path() + "/profile.json";
  ASSERT_TRUE(trace.open(path, scan)) << trace.error();
  ASSERT_TRUE(trace.close()) << trace.error();

  expect_perfetto_readable(path);
  const std::string text = read_file(path);
  for (char c : text)  // every control character escaped; the lines end with the events
    EXPECT_TRUE(static_cast<unsigned char>(c) >= 0x20 || c == '\n') << int(c);
  const nlohmann::json parsed = nlohmann::json::parse(text, nullptr, false);
  ASSERT_FALSE(parsed.is_discarded()) << text;
  std::map<int, std::string> names;
  for (const nlohmann::json& event : parsed["traceEvents"])
    if (event["name"] == "process_name")
      names[event["pid"].get<int>()] = event["args"]["name"].get<std::string>();
  EXPECT_EQ(names[0], "process 0 (" + hosts[0] + ")");
  EXPECT_EQ(names[1], "process 1 (caf\xc3\xa9)");
  EXPECT_EQ(names[2], "process 2 (bad\xef\xbf\xbd)");  // U+FFFD for the stray byte
}

}  // namespace
}  // namespace bspprof_test
