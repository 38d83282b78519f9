// A file cut short by a crash: its whole records are used, the cut tail is left out and named.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "ring.h"
#include "test_support.h"

namespace bspprof_test {
namespace {

void cut(const std::string& path, std::uintmax_t bytes_off) {
  const std::uintmax_t size = std::filesystem::file_size(path);
  std::filesystem::resize_file(path, size - bytes_off);
}

// The ring with process 1's file cut in the PeerCount of its last record.
TEST(Truncated, InThePeerCounts) {
  ScratchDir dir;
  write_ring(dir.path());
  cut(dir.raw() + "/" + raw_name(0, 0, 1), 10);
  const MergeResult result = merge(dir.path());
  ASSERT_EQ(result.status, 0) << result.errors;
  EXPECT_EQ(result.errors, "");
  const Csv csv = read_csv(dir.path() + "/supersteps.csv");
  ASSERT_EQ(csv.rows.size(), static_cast<std::size_t>(kProcs * kRingSupersteps - 1));
  // The last step has processes 0, 2 and 3: process 0's put to 1 still counts as its out.
  const std::size_t last = csv.rows.size() - 3;
  EXPECT_EQ(csv.text(last, "pid"), "0");
  EXPECT_EQ(csv.text(last + 1, "pid"), "2");
  EXPECT_EQ(csv.text(last + 2, "pid"), "3");
  EXPECT_EQ(csv.text(last, "bytes_out"), std::to_string(kRingBytes));
  EXPECT_EQ(csv.text(last + 1, "bytes_in"), "0");  // process 1's put is not known
  EXPECT_NE(result.summary.find("1 file ends in a cut record (a crash?): "
                                "a0.s0.p1.bspprof (78 bytes of a record)"),
            std::string::npos)
      << result.summary;
}

TEST(Truncated, InTheSyncRecord) {
  ScratchDir dir;
  write_ring(dir.path());
  cut(dir.raw() + "/" + raw_name(0, 0, 3), 40 + 20);  // all the PeerCount, half the record
  const MergeResult result = merge(dir.path());
  ASSERT_EQ(result.status, 0);
  EXPECT_NE(result.summary.find("a0.s0.p3.bspprof (28 bytes of a record)"), std::string::npos)
      << result.summary;
  EXPECT_EQ(read_csv(dir.path() + "/supersteps.csv").rows.size(),
            static_cast<std::size_t>(kProcs * kRingSupersteps - 1));
}

TEST(Truncated, InTheHeader) {
  ScratchDir dir;
  write_ring(dir.path());
  cut(dir.raw() + "/" + raw_name(0, 0, 0),
      std::filesystem::file_size(dir.raw() + "/" + raw_name(0, 0, 0)) - 50);
  const MergeResult result = merge(dir.path());
  ASSERT_EQ(result.status, 0);
  EXPECT_NE(
      result.errors.find("a0.s0.p0.bspprof: too short for a header (50 of 120 bytes); left out"),
      std::string::npos)
      << result.errors;
  EXPECT_NE(result.summary.find("attempt 0 section 0: no usable file of process 0"),
            std::string::npos)
      << result.summary;
  EXPECT_EQ(read_csv(dir.path() + "/supersteps.csv").rows.size(),
            static_cast<std::size_t>((kProcs - 1) * kRingSupersteps));
}

void append(const std::string& path, const void* bytes, std::size_t n) {
  std::ofstream out(path, std::ios::binary | std::ios::app);
  out.write(static_cast<const char*>(bytes), static_cast<std::streamsize>(n));
}

// A process that ended without closing its file (killed, crashed) leaves the space its mapping
// reserved ahead as zeros: the records before it are whole, and nothing is called cut or damaged.
TEST(Truncated, ZeroTailOfAKilledProcess) {
  ScratchDir dir;
  write_ring(dir.path());
  const std::string zeros(70000, '\0');
  append(dir.raw() + "/" + raw_name(0, 0, 2), zeros.data(), zeros.size());
  const MergeResult result = merge(dir.path());
  ASSERT_EQ(result.status, 0) << result.errors;
  EXPECT_EQ(result.errors, "");
  EXPECT_EQ(result.summary.find("cut"), std::string::npos) << result.summary;
  EXPECT_EQ(read_csv(dir.path() + "/supersteps.csv").rows.size(),
            static_cast<std::size_t>(kProcs * kRingSupersteps));
}

// Killed while copying a record: its kind (written last) is still 0; the record is left out as
// a cut one, never read as a damaged file.
TEST(Truncated, RecordWithoutItsKind) {
  ScratchDir dir;
  write_ring(dir.path());
  bspg::profile::SyncRecord half{};
  half.group = -1;
  half.superstep = kRingSupersteps;
  half.group_size = kProcs;
  half.call_s = 1.0;
  append(dir.raw() + "/" + raw_name(0, 0, 1), &half, sizeof half);
  const std::string zeros(4096, '\0');
  append(dir.raw() + "/" + raw_name(0, 0, 1), zeros.data(), zeros.size());
  const MergeResult result = merge(dir.path());
  ASSERT_EQ(result.status, 0) << result.errors;
  EXPECT_EQ(result.errors, "");
  EXPECT_NE(result.summary.find("a0.s0.p1.bspprof (48 bytes of a record)"), std::string::npos)
      << result.summary;
  EXPECT_EQ(read_csv(dir.path() + "/supersteps.csv").rows.size(),
            static_cast<std::size_t>(kProcs * kRingSupersteps));
}

}  // namespace
}  // namespace bspprof_test
