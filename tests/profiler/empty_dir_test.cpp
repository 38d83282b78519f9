// No profile to merge: exit status 3 with a message that says why, and nothing written.
#include <gtest/gtest.h>

#include <filesystem>

#include "bspprof.h"
#include "test_support.h"

namespace bspprof_test {
namespace {

TEST(EmptyDir, EmptyRawDirectory) {
  ScratchDir dir;
  const MergeResult result = merge(dir.path());
  EXPECT_EQ(result.status, bspg::profile::kNoProfile);
  EXPECT_EQ(result.errors, "bspprof: no readable profile in " + dir.raw() +
                               " (no usable a<attempt>.s<section>.p<pid>.bspprof file)\n");
  EXPECT_EQ(result.summary, "");
  EXPECT_FALSE(file_exists(dir.path() + "/supersteps.csv"));
}

TEST(EmptyDir, NoRawDirectory) {
  ScratchDir dir;
  std::filesystem::remove(dir.raw());
  const MergeResult result = merge(dir.path());
  EXPECT_EQ(result.status, bspg::profile::kNoProfile);
  EXPECT_NE(
      result.errors.find("no profile in " + dir.path() + ": " + dir.raw() + " does not exist"),
      std::string::npos)
      << result.errors;
}

TEST(EmptyDir, NoSuchDirectory) {
  const MergeResult result = merge("/nonexistent/bspprof-profile");
  EXPECT_EQ(result.status, bspg::profile::kNoProfile);
  EXPECT_EQ(result.errors, "bspprof: /nonexistent/bspprof-profile: no such directory\n");
}

// Headers but no sync (every process died in its first superstep): merged, with no plot.
TEST(EmptyDir, HeadersOnly) {
  ScratchDir dir;
  { RawWriter p0(dir.path(), 0, 0, 0, 1, 3.0); }
  const MergeResult result = merge(dir.path(), true);
  EXPECT_EQ(result.status, 0) << result.errors;
  EXPECT_NE(result.summary.find("no syncs were recorded"), std::string::npos);
  EXPECT_NE(result.summary.find("no plot: no syncs were recorded"), std::string::npos);
  EXPECT_EQ(read_csv(dir.path() + "/supersteps.csv").rows.size(), 0u);
  EXPECT_FALSE(file_exists(dir.path() + "/profile.png"));
}

}  // namespace
}  // namespace bspprof_test
