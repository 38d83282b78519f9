// Damaged and foreign files: a clear message naming the file, the rest still merged, no crash.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstring>
#include <fstream>

#include "bspprof.h"
#include "ring.h"
#include "test_support.h"

namespace bspprof_test {
namespace {

// The ring, plus process 0's file replaced by one made with edit.
MergeResult ring_with_bad_header(const ScratchDir& dir,
                                 const std::function<void(FileHeader&)>& edit) {
  write_ring(dir.path());
  {
    RawWriter bad(dir.path(), 0, 0, 0, kProcs, kRingBegin, "", edit);
    bad.world(0, kRingBegin + 1, kRingBegin + 2);
  }
  return merge(dir.path());
}

void expect_left_out(const MergeResult& result, const std::string& dir, const std::string& why) {
  EXPECT_EQ(result.status, 0);
  EXPECT_NE(result.errors.find("bspprof: " + dir + "/raw/a0.s0.p0.bspprof: " + why + "; left out"),
            std::string::npos)
      << result.errors;
  EXPECT_NE(result.summary.find("1 file left out"), std::string::npos) << result.summary;
  const Csv csv = read_csv(dir + "/supersteps.csv");
  EXPECT_EQ(csv.rows.size(), static_cast<std::size_t>((kProcs - 1) * kRingSupersteps));
}

TEST(BadFiles, WrongMagic) {
  ScratchDir dir;
  const MergeResult result =
      ring_with_bad_header(dir, [](FileHeader& h) { std::memcpy(h.magic, "NOTBSPG!", 8); });
  expect_left_out(result, dir.path(), "not a bspg profile file (wrong magic number)");
}

TEST(BadFiles, WrongVersion) {
  ScratchDir dir;
  const MergeResult result = ring_with_bad_header(dir, [](FileHeader& h) { h.version = 9; });
  expect_left_out(result, dir.path(), "format version 9, but this bspprof reads version 1");
}

TEST(BadFiles, NprocsDisagrees) {
  ScratchDir dir;
  const MergeResult result = ring_with_bad_header(dir, [](FileHeader& h) { h.nprocs = 5; });
  expect_left_out(result, dir.path(),
                  "it says nprocs 5, but the other files of attempt 0 section 0 say 4");
}

TEST(BadFiles, AbsurdNprocs) {
  ScratchDir dir;
  const MergeResult result = ring_with_bad_header(dir, [](FileHeader& h) { h.nprocs = -3; });
  expect_left_out(result, dir.path(), "nprocs -3 is not a process count (1 to 1048576)");
}

TEST(BadFiles, PidOutOfRange) {
  ScratchDir dir;
  const MergeResult result = ring_with_bad_header(dir, [](FileHeader& h) { h.pid = 4; });
  expect_left_out(result, dir.path(), "pid 4 is not a process of 4");
}

TEST(BadFiles, HeaderDisagreesWithName) {
  ScratchDir dir;
  const MergeResult result = ring_with_bad_header(dir, [](FileHeader& h) { h.pid = 1; });
  expect_left_out(result, dir.path(),
                  "its header says attempt 0, section 0, pid 1, which its name does not");
}

// A damaged record: the records before it are used.
void damaged_record_test(const std::function<void(RawWriter&)>& write_bad, const std::string& why) {
  ScratchDir dir;
  write_ring(dir.path());
  {
    RawWriter p0(dir.path(), 0, 0, 0, kProcs, kRingBegin);
    p0.world(0, kRingBegin + kCompute, kRingBegin + kSlowCompute + kSyncWork, {put(1, kRingBytes)});
    write_bad(p0);
  }
  const MergeResult result = merge(dir.path());
  EXPECT_EQ(result.status, 0);
  EXPECT_NE(result.errors.find("bspprof: " + dir.raw() +
                               "/a0.s0.p0.bspprof: record 1 (byte 208): " + why +
                               "; only the 1 records before it are used"),
            std::string::npos)
      << result.errors;
  EXPECT_NE(result.summary.find("1 file has a damaged record"), std::string::npos);
  const Csv csv = read_csv(dir.path() + "/supersteps.csv");
  EXPECT_EQ(csv.rows.size(), static_cast<std::size_t>(kProcs * kRingSupersteps - 2));
  EXPECT_EQ(csv.text(0, "pid"), "0");
  EXPECT_EQ(csv.text(4, "pid"), "1");
}

TEST(BadFiles, PeerOutOfRange) {
  damaged_record_test([](RawWriter& w) { w.world(1, kRingBegin + 1, kRingBegin + 2, {put(7, 1)}); },
                      "peer 7 is not a process of 4");
}

TEST(BadFiles, AbsurdPeerCount) {
  damaged_record_test(
      [](RawWriter& w) {
        SyncRecord record{};
        record.kind = 1;
        record.group = -1;
        record.superstep = 1;
        record.call_s = kRingBegin + 1;
        record.return_s = kRingBegin + 2;
        record.group_size = 4;
        record.n_peers = 4000000000u;
        w.bytes(&record, sizeof record);
      },
      "n_peers 4000000000 is more than the 4 processes");
}

TEST(BadFiles, UnknownKind) {
  damaged_record_test(
      [](RawWriter& w) {
        w.sync(static_cast<SyncKind>(77), -1, -1, 1, 0, kRingBegin + 1, kRingBegin + 2, 4);
      },
      "unknown sync kind 77");
}

// A group sync whose group's lowest pid is no process: the records before it are used.
TEST(BadFiles, GroupFirstOutOfRange) {
  damaged_record_test(
      [](RawWriter& w) {
        w.sync(SyncKind::GroupSync, 1, 4, 1, 0, kRingBegin + 1, kRingBegin + 2, 2);
      },
      "group_first 4 is not a process of 4");
}

TEST(BadFiles, GroupFirstMissing) {
  damaged_record_test(
      [](RawWriter& w) {
        w.sync(SyncKind::GroupSync, 1, -1, 1, 0, kRingBegin + 1, kRingBegin + 2, 2);
      },
      "group_first -1 is not a process of 4");
}

TEST(BadFiles, SuperstepGoesBack) {
  damaged_record_test([](RawWriter& w) { w.world(0, kRingBegin + 1, kRingBegin + 2); },
                      "a second sync ends superstep 0");
}

TEST(BadFiles, ReturnBeforeCall) {
  damaged_record_test([](RawWriter& w) { w.world(1, kRingBegin + 2, kRingBegin + 1); },
                      "the sync returned before it was called");
}

// Names bspg does not write, garbage, an empty file and a FIFO: reported, nothing hangs.
TEST(BadFiles, StrangeFilesInRaw) {
  ScratchDir dir;
  write_ring(dir.path());
  std::ofstream(dir.raw() + "/notes.txt") << "ignored: not a .bspprof file\n";
  std::ofstream(dir.raw() + "/a0.s0.p01.bspprof") << "leading zero";
  std::ofstream(dir.raw() + "/a1.s0.p0.bspprof") << std::string(500, 'x');
  std::ofstream(dir.raw() + "/a1.s0.p1.bspprof");
  ASSERT_EQ(mkfifo((dir.raw() + "/a1.s0.p2.bspprof").c_str(), 0600), 0);
  const MergeResult result = merge(dir.path());
  EXPECT_EQ(result.status, 0);
  EXPECT_NE(result.errors.find("a0.s0.p01.bspprof: not a name bspg writes"), std::string::npos);
  EXPECT_NE(result.errors.find("a1.s0.p0.bspprof: not a bspg profile file (wrong magic number)"),
            std::string::npos);
  EXPECT_NE(result.errors.find("a1.s0.p1.bspprof: empty: not even a header"), std::string::npos);
  EXPECT_NE(result.errors.find("a1.s0.p2.bspprof: not a regular file"), std::string::npos);
  EXPECT_EQ(result.errors.find("notes.txt"), std::string::npos);
  EXPECT_NE(result.summary.find("4 files left out"), std::string::npos) << result.summary;
  EXPECT_EQ(read_csv(dir.path() + "/supersteps.csv").rows.size(),
            static_cast<std::size_t>(kProcs * kRingSupersteps));
}

// Nothing usable at all: exit status 3, and nothing written.
TEST(BadFiles, NothingUsable) {
  ScratchDir dir;
  {
    RawWriter bad(dir.path(), 0, 0, 0, 2, 1.0, "",
                  [](FileHeader& h) { std::memcpy(h.magic, "ELF\x7f\0\0\0\0", 8); });
  }
  const MergeResult result = merge(dir.path());
  EXPECT_EQ(result.status, bspg::profile::kNoProfile);
  EXPECT_NE(result.errors.find("wrong magic number"), std::string::npos);
  EXPECT_NE(result.errors.find("no readable profile in " + dir.path() + "/raw"), std::string::npos);
  EXPECT_FALSE(file_exists(dir.path() + "/supersteps.csv"));
  EXPECT_FALSE(file_exists(dir.path() + "/profile.json"));
}

}  // namespace
}  // namespace bspprof_test
