// A get moves data from the process read to the getter: out for the server, in for the getter.
#include <gtest/gtest.h>

#include "test_support.h"

namespace bspprof_test {
namespace {

TEST(Gets, CountAtTheServerAsOut) {
  ScratchDir dir;
  {
    RawWriter p0(dir.path(), 0, 0, 0, 2, 5.0), p1(dir.path(), 0, 0, 1, 2, 5.0);
    p0.world(0, 5.1, 5.3, {get(1, 100, 2)});
    p1.world(0, 5.2, 5.3);
  }
  const MergeResult result = merge(dir.path());
  ASSERT_EQ(result.status, 0) << result.errors;
  const Csv csv = read_csv(dir.path() + "/supersteps.csv");
  ASSERT_EQ(csv.rows.size(), 2u);
  EXPECT_EQ(csv.text(0, "bytes_out"), "0");
  EXPECT_EQ(csv.text(0, "bytes_in"), "100");
  EXPECT_EQ(csv.text(0, "messages_out"), "0");
  EXPECT_EQ(csv.text(0, "messages_in"), "2");
  EXPECT_EQ(csv.text(1, "bytes_out"), "100");
  EXPECT_EQ(csv.text(1, "bytes_in"), "0");
  EXPECT_EQ(csv.text(1, "messages_out"), "2");
  EXPECT_EQ(csv.text(1, "messages_in"), "0");
  EXPECT_EQ(csv.text(0, "h_bytes"), "100");
  EXPECT_EQ(csv.text(1, "h_bytes"), "100");
}

// Traffic of a process with itself counts both out and in.
TEST(Gets, SelfTrafficCountsOutAndIn) {
  ScratchDir dir;
  {
    RawWriter p0(dir.path(), 0, 0, 0, 2, 5.0), p1(dir.path(), 0, 0, 1, 2, 5.0);
    PeerCount both = put(0, 10);
    both.get_messages = 1;
    both.get_bytes = 6;
    p0.world(0, 5.1, 5.3, {both});
    p1.world(0, 5.2, 5.3);
  }
  ASSERT_EQ(merge(dir.path()).status, 0);
  const Csv csv = read_csv(dir.path() + "/supersteps.csv");
  EXPECT_EQ(csv.text(0, "bytes_out"), "16");
  EXPECT_EQ(csv.text(0, "bytes_in"), "16");
  EXPECT_EQ(csv.text(0, "messages_out"), "2");
  EXPECT_EQ(csv.text(0, "messages_in"), "2");
  EXPECT_EQ(csv.text(1, "bytes_out"), "0");
  EXPECT_EQ(csv.text(1, "h_bytes"), "16");
}

}  // namespace
}  // namespace bspprof_test
