// traffic.csv: who sent whom how much over the whole profile, in the data's direction (a get's
// bytes go from the process read to the reader), summed over steps; traffic.gp only where some
// process sent another anything.
#include <gtest/gtest.h>

#include "test_support.h"

namespace bspprof_test {
namespace {

TEST(Traffic, PairsSummedOverStepsInTheDataDirection) {
  ScratchDir dir;
  {
    RawWriter p0(dir.path(), 0, 0, 0, 3, 0.0), p1(dir.path(), 0, 0, 1, 3, 0.0),
        p2(dir.path(), 0, 0, 2, 3, 0.0);
    p0.world(0, 0.1, 0.2, {put(1, 100, 2), send(2, 24)});
    p1.world(0, 0.1, 0.2, {get(2, 64)});  // 2 -> 1
    p2.world(0, 0.1, 0.2);
    p0.world(1, 0.3, 0.4, {put(1, 50)});
    p1.world(1, 0.3, 0.4);
    p2.world(1, 0.3, 0.4, {put(2, 8)});  // to itself
  }
  const MergeResult result = merge(dir.path());
  ASSERT_EQ(result.status, 0) << result.errors;
  EXPECT_EQ(read_file(dir.path() + "/traffic.csv"),
            "from,to,bytes,messages\n"
            "0,1,150,3\n"
            "0,2,24,1\n"
            "2,1,64,1\n"
            "2,2,8,1\n");
  const std::string script = read_file(dir.path() + "/traffic.gp");
  EXPECT_NE(script.find("set output 'traffic.png'"), std::string::npos);
  EXPECT_NE(script.find("p = 3, 4 pairs"), std::string::npos) << script;
  EXPECT_NE(result.summary.find("/traffic.csv, " + dir.path() + "/traffic.gp"), std::string::npos)
      << result.summary;
}

TEST(Traffic, NoPictureWithoutTraffic) {
  ScratchDir dir;
  {
    RawWriter p0(dir.path(), 0, 0, 0, 2, 0.0), p1(dir.path(), 0, 0, 1, 2, 0.0);
    p0.world(0, 0.1, 0.2);
    p1.world(0, 0.1, 0.2);
  }
  const MergeResult result = merge(dir.path());
  ASSERT_EQ(result.status, 0) << result.errors;
  EXPECT_EQ(read_file(dir.path() + "/traffic.csv"), "from,to,bytes,messages\n");
  EXPECT_FALSE(file_exists(dir.path() + "/traffic.gp"));
  EXPECT_NE(result.summary.find("no traffic picture: no process sent another anything"),
            std::string::npos)
      << result.summary;
}

}  // namespace
}  // namespace bspprof_test
