// The summary: one screen saying where the time went and which steps and processes to look at.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "ring.h"
#include "test_support.h"

namespace bspprof_test {
namespace {

std::size_t lines(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

TEST(Summary, Ring) {
  ScratchDir dir;
  write_ring(dir.path());
  const MergeResult result = merge(dir.path(), false, sample_params());
  ASSERT_EQ(result.status, 0);
  const std::string& s = result.summary;
  EXPECT_LE(lines(s), 30u) << s;
  EXPECT_NE(s.find("p = 4, 3 steps (2 sync, 1 end), 1 attempt\n"), std::string::npos) << s;
  EXPECT_NE(s.find("time: 10.500 ms from the first bsp_begin to the last sync's return"),
            std::string::npos)
      << s;
  // Per step: compute 1+1+3+1 ms, waits 2+2+0+2 ms, communication 4 * 0.5 ms.
  EXPECT_NE(s.find("time of the processes, summed over them (42.000 ms):"), std::string::npos) << s;
  EXPECT_NE(s.find("  compute         42.9%  18.000 ms"), std::string::npos) << s;
  EXPECT_NE(s.find("  communication   14.3%  6.000 ms"), std::string::npos) << s;
  EXPECT_NE(s.find("  waiting         42.9%  18.000 ms"), std::string::npos) << s;
  EXPECT_NE(s.find("costliest steps"), std::string::npos);
  EXPECT_NE(s.find("  superstep 0 (sync): 3.500 ms, h = 64 B, critical p2 (compute 3.000 ms)"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("  superstep 0 (sync): 2.00x (p2 3.000 ms, mean 1.500 ms)"), std::string::npos)
      << s;
  EXPECT_NE(s.find("last to call the sync (of 3 steps of 2+ processes): p2 100.0% (3)\n"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("restarts: none"), std::string::npos);
  EXPECT_NE(
      s.find("written: " + dir.path() + "/supersteps.csv, " + dir.path() + "/profile.json, " +
             dir.path() + "/traffic.csv, " + dir.path() + "/traffic.gp, " + dir.path() +
             "/profile.dat, " + dir.path() + "/profile.waits.dat, " + dir.path() + "/profile.gp\n"),
      std::string::npos)
      << s;
}

// Many restarts, damaged files and missing processes still fit on one screen.
TEST(Summary, StaysOnOneScreen) {
  ScratchDir dir;
  for (int attempt = 0; attempt < 8; ++attempt)
    for (int pid = 0; pid < 6; pid += 1 + attempt % 2) {
      RawWriter w(dir.path(), attempt, 0, pid, 6, 100.0 * attempt);
      for (int s = 0; s < 10; ++s) w.world(s, 100.0 * attempt + s + 0.5, 100.0 * attempt + s + 1);
      w.bytes("cut", 3);
    }
  const MergeResult result = merge(dir.path());
  ASSERT_EQ(result.status, 0);
  EXPECT_LE(lines(result.summary), 30u) << result.summary;
  EXPECT_NE(result.summary.find("restarts: 7: attempt 1 began at 100.000 s (step 10)"),
            std::string::npos)
      << result.summary;
}

}  // namespace
}  // namespace bspprof_test
