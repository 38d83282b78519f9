// CopyChooser: large copies on one node take the way (through the cache or around it) that its
// own timings found cheaper, try the other now and then, and follow a change. MidCopyChooser:
// the same below them, between memcpy and bspg's own moves. copy_for_reader:
// the transport's chunk copy copies every byte.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "copy.hpp"

using namespace bspg;

namespace {
// Which way each of the next n copies takes.
template <typename Chooser>
std::vector<bool> next_choices(Chooser& chooser, unsigned n) {
  std::vector<bool> ways;
  for (unsigned i = 0; i < n; ++i) ways.push_back(chooser.choose());
  return ways;
}

unsigned count_streaming(const std::vector<bool>& ways) {
  unsigned n = 0;
  for (bool w : ways) n += w ? 1 : 0;
  return n;
}
}  // namespace

TEST(CopyChooser, MeasuresBothWaysTwiceFirst) {
  CopyChooser chooser;
  // The first copy of each way also pays for fresh pages: its second copy's time counts.
  for (bool way : {false, false, true, true}) {
    EXPECT_EQ(chooser.choose(), way);
    chooser.record(way, way ? 0.1 : 0.2);
  }
  EXPECT_TRUE(chooser.choose());
}

// Both ways measured twice, at these costs per byte.
static void measured(CopyChooser& chooser, double through_cache, double around_it) {
  for (int i = 0; i < 2; ++i) chooser.record(false, through_cache);
  for (int i = 0; i < 2; ++i) chooser.record(true, around_it);
}

TEST(CopyChooser, AFirstSlowCopyIsForgotten) {
  CopyChooser chooser;
  chooser.record(false, 5.0);  // page faults
  chooser.record(false, 0.05);
  for (int i = 0; i < 2; ++i) chooser.record(true, 0.10);
  EXPECT_EQ(count_streaming(next_choices(chooser, 2 * CopyChooser::kRetryEvery)), 2u);
}

TEST(CopyChooser, TakesTheCheaperWayAndRetriesTheOther) {
  CopyChooser chooser;
  measured(chooser, 0.20, 0.10);
  const std::vector<bool> ways = next_choices(chooser, 4 * CopyChooser::kRetryEvery);
  EXPECT_EQ(count_streaming(ways), 4 * CopyChooser::kRetryEvery - 4);

  CopyChooser other;
  measured(other, 0.05, 0.10);
  EXPECT_EQ(count_streaming(next_choices(other, 4 * CopyChooser::kRetryEvery)), 4u);
}

TEST(CopyChooser, FollowsAChange) {
  CopyChooser chooser;
  measured(chooser, 0.05, 0.10);
  // The cores stop sharing a cache: copies through it get four times as slow.
  for (int i = 0; i < 8; ++i) chooser.record(false, 0.20);
  EXPECT_GT(count_streaming(next_choices(chooser, CopyChooser::kRetryEvery)),
            CopyChooser::kRetryEvery / 2);
}

TEST(CopyChooser, OneSlowCopyDoesNotTurnIt) {
  CopyChooser chooser;
  measured(chooser, 0.10, 0.20);
  chooser.record(false, 100.0);  // preempted in the middle of a copy
  EXPECT_EQ(count_streaming(next_choices(chooser, CopyChooser::kRetryEvery)), 1u);
}

TEST(CopyChooser, EachSizeClassChoosesForItself) {
  CopyChooser chooser;
  const std::size_t one_mib = std::size_t{1} << 20, sixteen_mib = std::size_t{16} << 20;
  EXPECT_NE(CopyChooser::class_of(one_mib), CopyChooser::class_of(sixteen_mib));
  EXPECT_EQ(CopyChooser::class_of(kChosenCopyBytes), 0);
  EXPECT_EQ(CopyChooser::class_of(std::size_t{1} << 30), CopyChooser::kClasses - 1);
  // 1 MiB fits a cache: through it is cheaper. 16 MiB does not: around it is.
  for (int i = 0; i < 2; ++i) {
    chooser.record(false, 0.05, one_mib);
    chooser.record(true, 0.10, one_mib);
    chooser.record(false, 0.30, sixteen_mib);
    chooser.record(true, 0.10, sixteen_mib);
  }
  unsigned around_small = 0, around_large = 0;
  for (unsigned i = 0; i < 4 * CopyChooser::kRetryEvery; ++i) {
    around_small += chooser.choose(one_mib) ? 1 : 0;
    around_large += chooser.choose(sixteen_mib) ? 1 : 0;
  }
  EXPECT_EQ(around_small, 4u);
  EXPECT_EQ(around_large, 4 * CopyChooser::kRetryEvery - 4);
}

TEST(CopyChooser, CopiesEveryByteEitherWay) {
  CopyChooser chooser;
  const std::size_t n = kChosenCopyBytes + 13;  // neither end on a cache line
  std::vector<unsigned char> src(n + 1), dst(n + 64, 0xAA);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>(i * 7 + 3);
  for (int copy = 0; copy < 5; ++copy) {  // through the cache twice, around it twice, the cheaper
    std::fill(dst.begin(), dst.end(), 0xAA);
    chooser.copy(dst.data() + 5, src.data() + 1, n);
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(dst[i + 5], src[i + 1]) << "copy " << copy;
    for (std::size_t i = 0; i < 5; ++i) ASSERT_EQ(dst[i], 0xAA);
    for (std::size_t i = n + 5; i < dst.size(); ++i) ASSERT_EQ(dst[i], 0xAA);
  }
}

// From 64 KiB to 512 KiB the choice is between the C library's memcpy and bspg's own moves
// through the cache (the C library's `rep movsb` is slow at some alignments on some processors):
// each class learns for itself, and every byte arrives either way, from and to any alignment.
TEST(MidCopyChooser, ItsClassesLieBelowTheLargeOnes) {
  EXPECT_EQ(MidCopyChooser::class_of(kMidChosenBytes), 0);
  EXPECT_EQ(MidCopyChooser::class_of(kChosenCopyBytes - 1), MidCopyChooser::kClasses - 1);
  EXPECT_LT(kMidChosenBytes, kChosenCopyBytes);
  MidCopyChooser chooser;
  const std::size_t small = kMidChosenBytes, large = kChosenCopyBytes / 2;
  for (int i = 0; i < 2; ++i) {
    chooser.record(false, 0.40, small);  // memcpy slow here (rep movsb at a bad offset)
    chooser.record(true, 0.10, small);
    chooser.record(false, 0.05, large);
    chooser.record(true, 0.10, large);
  }
  unsigned own_small = 0, own_large = 0;
  for (unsigned i = 0; i < 4 * MidCopyChooser::kRetryEvery; ++i) {
    own_small += chooser.choose(small) ? 1 : 0;
    own_large += chooser.choose(large) ? 1 : 0;
  }
  EXPECT_EQ(own_small, 4 * MidCopyChooser::kRetryEvery - 4);
  EXPECT_EQ(own_large, 4u);
}

TEST(MidCopyChooser, KeepsMemcpyUnlessItsOwnMovesAreClearlyCheaper) {
  MidCopyChooser chooser;
  for (int i = 0; i < 2; ++i) {
    chooser.record(false, 0.12);  // memcpy a little dearer: not enough
    chooser.record(true, 0.10);
  }
  EXPECT_EQ(count_streaming(next_choices(chooser, 4 * MidCopyChooser::kRetryEvery)), 4u);
}

TEST(MidCopyChooser, CopiesEveryByteEitherWay) {
  MidCopyChooser chooser;
  for (std::size_t n :
       {kMidChosenBytes, kMidChosenBytes + 13, std::size_t{200000}, kChosenCopyBytes - 1}) {
    std::vector<unsigned char> src(n + 64), dst(n + 128, 0xAA);
    for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>(i * 7 + 3);
    for (std::size_t from : {0, 1, 4, 12, 63}) {
      for (int copy = 0; copy < 5; ++copy) {  // memcpy twice, own moves twice, the cheaper
        std::fill(dst.begin(), dst.end(), 0xAA);
        const std::size_t to = (from * 5 + 3) % 64;
        chooser.copy(dst.data() + to, src.data() + from, n);
        for (std::size_t i = 0; i < n; ++i)
          ASSERT_EQ(dst[i + to], src[i + from])
              << "n " << n << " from " << from << " copy " << copy;
        for (std::size_t i = 0; i < to; ++i) ASSERT_EQ(dst[i], 0xAA);
        for (std::size_t i = n + to; i < dst.size(); ++i) ASSERT_EQ(dst[i], 0xAA);
      }
    }
  }
}

// The chunk copy into another process's receive buffer: every byte, and not one more, at sizes
// around its 64-byte steps and on both sides of the size where it hands over to memcpy, from and
// to any alignment.
TEST(CopyForReader, CopiesEveryByteAndNoMore) {
  const std::size_t sizes[] = {0,
                               1,
                               7,
                               8,
                               63,
                               64,
                               65,
                               127,
                               128,
                               129,
                               1000,
                               4096,
                               4100,
                               kReaderCopyBytes - 1,
                               kReaderCopyBytes,
                               kReaderCopyBytes + 9};
  std::vector<unsigned char> src(kReaderCopyBytes + 80), dst(kReaderCopyBytes + 160);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>(i * 13 + 1);
  for (std::size_t n : sizes) {
    for (std::size_t from : {0, 3, 8}) {
      for (std::size_t to : {0, 5, 64}) {
        std::fill(dst.begin(), dst.end(), 0xAA);
        copy_for_reader(dst.data() + to, src.data() + from, n);
        for (std::size_t i = 0; i < n; ++i)
          ASSERT_EQ(dst[to + i], src[from + i]) << "n " << n << " byte " << i;
        for (std::size_t i = 0; i < to; ++i) ASSERT_EQ(dst[i], 0xAA) << "n " << n;
        for (std::size_t i = to + n; i < dst.size(); ++i) ASSERT_EQ(dst[i], 0xAA) << "n " << n;
      }
    }
  }
}
