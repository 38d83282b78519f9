// The bspprof command: its options, usage errors (exit status 2), --help and --version.
#include <gtest/gtest.h>

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
}

TEST(Tool, Help) {
  const ToolResult result = run_tool({"--help"});
  EXPECT_EQ(result.status, 0);
  for (const char* section :
       {"\nNAME\n", "\nSYNOPSIS\n", "\nDESCRIPTION\n", "\nOPTIONS\n", "\nFILES\n",
        "\nEXIT STATUS\n", "\nEXAMPLES\n", "--params FILE", "--no-plot", "--quiet"})
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
