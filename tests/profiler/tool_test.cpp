// The bspprof command: its options, usage errors (exit status 2), --help and --version.
#include <gtest/gtest.h>

#include <cstdlib>

#include "ring.h"
#include "test_support.h"

namespace bspprof_test {
namespace {

void expect_usage_error(const std::vector<std::string>& args, const std::string& message) {
  const ToolResult result = run_tool(args);
  EXPECT_EQ(result.status, 2) << result.output;
  EXPECT_NE(result.output.find("bspprof: " + message + "\n"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("Try 'bspprof --help'"), std::string::npos);
}

TEST(Tool, UsageErrors) {
  expect_usage_error({}, "which profile directory?");
  expect_usage_error({"--frobnicate", "/tmp"}, "unknown option '--frobnicate'");
  expect_usage_error({"/tmp", "--params"}, "--params needs a file name");
  expect_usage_error({"--params=", "/tmp"}, "--params needs a file name");
  expect_usage_error({"/tmp/a", "/tmp/b"}, "one profile directory only, not also '/tmp/b'");
  expect_usage_error({"/tmp", "--trace-steps"}, "--trace-steps needs a number of steps");
  for (const char* bad : {"x", "", "-1", "+3", " 3", "3x", "1e5", "18446744073709551616"})
    expect_usage_error(
        {"--trace-steps", bad, "/tmp"},
        std::string("--trace-steps needs a whole number >= 0 (0: all steps), not '") + bad + "'");
  expect_usage_error({"--trace-steps=x", "/tmp"},
                     "--trace-steps needs a whole number >= 0 (0: all steps), not 'x'");
  expect_usage_error({"/tmp", "-x"}, "unknown option '-x'");
  expect_usage_error({"-hq", "/tmp"}, "unknown option '-hq'");
  expect_usage_error({"-quiet", "/tmp"}, "unknown option '-quiet'");
  expect_usage_error({"--quiet=yes", "/tmp"}, "option --quiet takes no value");
  // Names are written in full: getopt_long's abbreviations are refused, naming the option meant.
  expect_usage_error({"--no-pl", "/tmp"}, "unknown option '--no-pl'; did you mean --no-plot?");
  expect_usage_error({"--trace=5", "/tmp"},
                     "unknown option '--trace=5'; did you mean --trace-steps?");
  expect_usage_error({"/tmp", "--param"}, "unknown option '--param'; did you mean --params?");
  // After "--" everything is a directory.
  expect_usage_error({"--", "/tmp", "--quiet"}, "one profile directory only, not also '--quiet'");
}

// Options may follow the directory, also where POSIXLY_CORRECT would stop getopt at it.
TEST(Tool, OptionsAfterTheDirectory) {
  ScratchDir dir;
  write_ring(dir.path());
  for (const bool posix : {false, true}) {
    if (posix) setenv("POSIXLY_CORRECT", "1", 1);
    ToolResult result = run_tool({dir.path(), "--quiet", "--no-plot", "--trace-steps=2"});
    EXPECT_EQ(result.status, 0) << result.output;
    EXPECT_EQ(result.output, "");
    const std::string trace = read_file(dir.path() + "/profile.json");
    EXPECT_NE(trace.find("\"superstep\":1,"), std::string::npos);
    EXPECT_EQ(trace.find("\"superstep\":2,"), std::string::npos);
    result = run_tool({"--quiet", dir.path(), "--no-plot", "--params", sample_params()});
    EXPECT_EQ(result.status, 0) << result.output;
    EXPECT_EQ(result.output, "");
  }
  unsetenv("POSIXLY_CORRECT");
}

TEST(Tool, TraceSteps) {
  ScratchDir dir;
  write_ring(dir.path(), 10);
  ToolResult result = run_tool({"--no-plot", "--trace-steps", "3", dir.path()});
  EXPECT_EQ(result.status, 0) << result.output;
  EXPECT_NE(result.output.find("\ntrace: the first 3 of 10 steps in profile.json (bspprof "
                               "--trace-steps 0 " +
                               dir.path() + " for all)\n"),
            std::string::npos)
      << result.output;
  const std::string trace = read_file(dir.path() + "/profile.json");
  EXPECT_NE(trace.find("\"superstep\":2,"), std::string::npos);
  EXPECT_EQ(trace.find("\"superstep\":3,"), std::string::npos);

  for (const char* all : {"--trace-steps=0", "--trace-steps=18446744073709551615"}) {
    result = run_tool({"--no-plot", all, dir.path()});
    EXPECT_EQ(result.status, 0) << result.output;
    EXPECT_EQ(result.output.find("trace:"), std::string::npos) << result.output;
    EXPECT_NE(read_file(dir.path() + "/profile.json").find("\"superstep\":9,"), std::string::npos);
  }
}

TEST(Tool, Help) {
  const ToolResult result = run_tool({"--help"});
  EXPECT_EQ(result.status, 0);
  for (const char* section : {"\nNAME\n", "\nSYNOPSIS\n", "\nDESCRIPTION\n", "\nOPTIONS\n",
                              "\nFILES\n", "\nEXIT STATUS\n", "\nEXAMPLES\n", "--params FILE",
                              "--trace-steps N", "--no-plot", "--quiet"})
    EXPECT_NE(("\n" + result.output).find(section), std::string::npos) << section;
}

TEST(Tool, Version) {
  const ToolResult result = run_tool({"--version"});
  EXPECT_EQ(result.status, 0);
  EXPECT_EQ(result.output.rfind("bspprof (bspg) ", 0), 0u) << result.output;
}

TEST(Tool, NoProfile) {
  ScratchDir dir;
  const ToolResult result = run_tool({dir.path()});
  EXPECT_EQ(result.status, 3);
  EXPECT_NE(result.output.find("no readable profile"), std::string::npos);
}

TEST(Tool, MergesWithSummaryOrQuietly) {
  ScratchDir dir;
  write_ring(dir.path());
  ToolResult result = run_tool({"--no-plot", "--params", sample_params(), dir.path()});
  EXPECT_EQ(result.status, 0) << result.output;
  EXPECT_NE(result.output.find("written: " + dir.path() + "/supersteps.csv"), std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("BSP model w + g*h + l: g = 0.5 us/word, l = 20 us"),
            std::string::npos)
      << result.output;
  EXPECT_FALSE(file_exists(dir.path() + "/profile.png"));

  result = run_tool({"--quiet", "--no-plot", "--", dir.path()});
  EXPECT_EQ(result.status, 0);
  EXPECT_EQ(result.output, "");
}

}  // namespace
}  // namespace bspprof_test
