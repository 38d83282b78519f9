// supersteps.csv of the ring: every row's times, traffic and h-relation.
#include <gtest/gtest.h>

#include "ring.h"
#include "test_support.h"

namespace bspprof_test {
namespace {

constexpr double kClose = 1e-9;

TEST(CsvRows, RingRowByRow) {
  ScratchDir dir;
  write_ring(dir.path());
  const MergeResult result = merge(dir.path());
  ASSERT_EQ(result.status, 0) << result.errors;
  EXPECT_EQ(result.errors, "");

  const Csv csv = read_csv(dir.path() + "/supersteps.csv");
  const std::string start =
      "attempt,section,superstep,group,group_first,group_step,kind,pid,host,start_s,"
      "compute_s,sync_s,wait_s,comm_s,bytes_out,bytes_in,messages_out,messages_in,h_bytes\n"
      "0,0,0,-1,-1,0,sync,0,node0,0.001,0.001,0.0025,0.002,0.0005,64,64,1,1,64\n";
  EXPECT_EQ(read_file(dir.path() + "/supersteps.csv").substr(0, start.size()), start);
  ASSERT_EQ(csv.rows.size(), static_cast<std::size_t>(kProcs * kRingSupersteps));

  const double step_time = kSlowCompute + kSyncWork;
  for (int s = 0; s < kRingSupersteps; ++s)
    for (int pid = 0; pid < kProcs; ++pid) {
      SCOPED_TRACE("superstep " + std::to_string(s) + " pid " + std::to_string(pid));
      const std::size_t row = static_cast<std::size_t>(s * kProcs + pid);
      const bool slow = pid == kSlowPid;
      const double compute = slow ? kSlowCompute : kCompute;
      EXPECT_EQ(csv.text(row, "attempt"), "0");
      EXPECT_EQ(csv.text(row, "section"), "0");
      EXPECT_EQ(csv.text(row, "superstep"), std::to_string(s));
      EXPECT_EQ(csv.text(row, "group"), "-1");
      EXPECT_EQ(csv.text(row, "group_first"), "-1");
      EXPECT_EQ(csv.text(row, "group_step"), "0");
      EXPECT_EQ(csv.text(row, "kind"), s + 1 == kRingSupersteps ? "end" : "sync");
      EXPECT_EQ(csv.text(row, "pid"), std::to_string(pid));
      EXPECT_EQ(csv.text(row, "host"), host_name(pid));
      EXPECT_NEAR(csv.number(row, "start_s"), s * step_time + compute, kClose);
      EXPECT_NEAR(csv.number(row, "compute_s"), compute, kClose);
      EXPECT_NEAR(csv.number(row, "sync_s"), kSlowCompute - compute + kSyncWork, kClose);
      EXPECT_NEAR(csv.number(row, "wait_s"), kSlowCompute - compute, kClose);
      EXPECT_NEAR(csv.number(row, "comm_s"), kSyncWork, kClose);
      EXPECT_EQ(csv.text(row, "bytes_out"), std::to_string(kRingBytes));
      EXPECT_EQ(csv.text(row, "bytes_in"), std::to_string(kRingBytes));
      EXPECT_EQ(csv.text(row, "messages_out"), "1");
      EXPECT_EQ(csv.text(row, "messages_in"), "1");
      EXPECT_EQ(csv.text(row, "h_bytes"), std::to_string(kRingBytes));
    }
}

// One process sends more than the others receive: h is the largest of anyone's in or out, on
// every row of the step; sends count like puts.
TEST(CsvRows, HRelationIsTheLargestInOrOut) {
  ScratchDir dir;
  {
    RawWriter p0(dir.path(), 0, 0, 0, 3, 10.0), p1(dir.path(), 0, 0, 1, 3, 10.0),
        p2(dir.path(), 0, 0, 2, 3, 10.0);
    p0.world(0, 10.1, 10.2, {send(1, 100, 2), send(2, 100, 3)});
    p1.world(0, 10.1, 10.2, {put(2, 30)});
    p2.world(0, 10.1, 10.2);
  }
  ASSERT_EQ(merge(dir.path()).status, 0);
  const Csv csv = read_csv(dir.path() + "/supersteps.csv");
  ASSERT_EQ(csv.rows.size(), 3u);
  EXPECT_EQ(csv.text(0, "bytes_out"), "200");
  EXPECT_EQ(csv.text(0, "messages_out"), "5");
  EXPECT_EQ(csv.text(1, "bytes_in"), "100");
  EXPECT_EQ(csv.text(1, "bytes_out"), "30");
  EXPECT_EQ(csv.text(2, "bytes_in"), "130");
  EXPECT_EQ(csv.text(2, "messages_in"), "4");
  for (std::size_t row = 0; row < 3; ++row) EXPECT_EQ(csv.text(row, "h_bytes"), "200");
}

// A host name with a comma and a quote is one quoted field.
TEST(CsvRows, HostNamesAreQuotedWhereNeeded) {
  ScratchDir dir;
  {
    RawWriter p0(dir.path(), 0, 0, 0, 1, 1.0, "rack \"a\",7");
    p0.world(0, 1.5, 1.75);
  }
  ASSERT_EQ(merge(dir.path()).status, 0);
  EXPECT_NE(read_file(dir.path() + "/supersteps.csv").find(",\"rack \"\"a\"\",7\","),
            std::string::npos);
  EXPECT_EQ(read_csv(dir.path() + "/supersteps.csv").text(0, "host"), "rack \"a\",7");
}

}  // namespace
}  // namespace bspprof_test
