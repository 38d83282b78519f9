// PageLender in one process: a lent range reads back from where it was lent, comes back whole at
// give_back, is put back at once when touched (by the program or the kernel), and costs nothing
// when unmapped meanwhile. Skipped where this process may not use userfaultfd.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "lending.hpp"

using namespace bspg;

namespace {
constexpr std::size_t kBytes = std::size_t{1} << 20;

bool may_lend() {
  const long fd = syscall(SYS_userfaultfd, O_CLOEXEC);
  if (fd < 0) return false;
  close(static_cast<int>(fd));
  return true;
}

char* fresh_range(std::size_t bytes, char fill) {
  void* at = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  EXPECT_NE(at, MAP_FAILED);
  std::memset(at, fill, bytes);
  return static_cast<char*>(at);
}

bool resident(const char* at) {
  unsigned char in = 0;
  mincore(const_cast<char*>(at), 4096, &in);
  return (in & 1) != 0;
}
}  // namespace

TEST(PageLender, LentPagesAreReadWhereLentAndComeBack) {
  if (!may_lend()) GTEST_SKIP() << "no userfaultfd for this process";
  PageLender lender;
  lender.open_alone(PageLender::Mode::On);
  char* source = fresh_range(kBytes, 'a');
  const char* holding = lender.lend(source, kBytes);
  ASSERT_NE(holding, nullptr);
  EXPECT_FALSE(resident(source));  // the pages moved, not their bytes
  EXPECT_EQ(lender.lend(source, kBytes), holding) << "the same range lent twice is one lending";
  EXPECT_EQ(lender.lend(source + 4096, 4096), nullptr) << "part of a lent range is refused";
  std::vector<char> got(kBytes);
  lender.read(0, holding, got.data(), kBytes);
  EXPECT_EQ(got, std::vector<char>(kBytes, 'a'));
  lender.give_back();
  EXPECT_TRUE(resident(source));
  EXPECT_EQ(source[0], 'a');
  EXPECT_EQ(source[kBytes - 1], 'a');
  const PageLender::Counts counts = lender.counts();
  EXPECT_EQ(counts.lent, 1u);
  EXPECT_EQ(counts.restored, 0u);
  EXPECT_EQ(counts.refused, 1u);
  lender.close();
  munmap(source, kBytes);
}

TEST(PageLender, TouchedRangeComesBackAtOnceAndTheHoldingAreaKeepsTheOldBytes) {
  if (!may_lend()) GTEST_SKIP() << "no userfaultfd for this process";
  PageLender lender;
  lender.open_alone(PageLender::Mode::On);
  char* source = fresh_range(kBytes, 'b');
  const char* holding = lender.lend(source, kBytes);
  ASSERT_NE(holding, nullptr);
  EXPECT_EQ(source[kBytes / 2], 'b');  // a read: every page back
  source[10] = 'x';
  // The kernel's write into the range (read() from a pipe) is served as well.
  int pipes[2];
  ASSERT_EQ(pipe(pipes), 0);
  ASSERT_EQ(write(pipes[1], "yyyy", 4), 4);
  ASSERT_EQ(read(pipes[0], source + 4096, 4), 4);
  close(pipes[0]);
  close(pipes[1]);
  std::vector<char> got(kBytes);
  lender.read(0, holding, got.data(), kBytes);
  EXPECT_EQ(got, std::vector<char>(kBytes, 'b')) << "the receivers still see the bytes as lent";
  lender.give_back();
  EXPECT_EQ(source[10], 'x');
  EXPECT_EQ(std::memcmp(source + 4096, "yyyy", 4), 0);
  EXPECT_EQ(source[kBytes - 1], 'b');
  EXPECT_EQ(lender.counts().restored, 1u);
  lender.close();
  munmap(source, kBytes);
}

TEST(PageLender, UnmappedRangeIsNotGivenBack) {
  if (!may_lend()) GTEST_SKIP() << "no userfaultfd for this process";
  PageLender lender;
  lender.open_alone(PageLender::Mode::On);
  char* source = fresh_range(kBytes, 'c');
  const char* holding = lender.lend(source, kBytes);
  ASSERT_NE(holding, nullptr);
  munmap(source, kBytes);
  // Something else now lies where the source was; giving back must leave it alone.
  char* other = static_cast<char*>(
      mmap(source, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0));
  ASSERT_EQ(other, source);
  std::memset(other, 'd', kBytes);
  std::vector<char> got(kBytes);
  lender.read(0, holding, got.data(), kBytes);
  EXPECT_EQ(got, std::vector<char>(kBytes, 'c'));
  lender.give_back();
  EXPECT_EQ(other[0], 'd');
  EXPECT_EQ(other[kBytes - 1], 'd');
  EXPECT_EQ(lender.counts().gone, 1u);
  lender.close();
  munmap(other, kBytes);
}

TEST(PageLender, OffLendsNothing) {
  PageLender lender;
  lender.open_alone(PageLender::Mode::Off);
  EXPECT_FALSE(lender.worth(std::size_t{16} << 20, 1.0));
  char* source = fresh_range(kBytes, 'e');
  EXPECT_EQ(lender.lend(source, kBytes), nullptr);
  munmap(source, kBytes);
}

TEST(PageLender, AutoLendsWhereItsOwnLendingsCostLessThanTheCopyAtTheCall) {
  if (!may_lend()) GTEST_SKIP() << "no userfaultfd for this process";
  PageLender lender;
  lender.open_alone(PageLender::Mode::Auto);
  EXPECT_FALSE(lender.worth(PageLender::kMinLendBytes - 1, 1e3));
  EXPECT_FALSE(lender.worth(kBytes, 0)) << "the copy's cost not known yet: copied first";
  EXPECT_TRUE(lender.worth(kBytes, 1e3)) << "a size class lends to learn what lending costs";
  char* source = fresh_range(kBytes, 'g');
  for (int i = 0; i < 2; ++i) {
    ASSERT_NE(lender.lend(source, kBytes), nullptr);
    lender.give_back();
  }
  const double lending = lender.lend_cost_per_byte(kBytes);
  EXPECT_GT(lending, 0);
  EXPECT_EQ(lender.lend_cost_per_byte(std::size_t{64} << 20), 0) << "each size class learns apart";
  // A copy at the call far dearer than lending: lent, but for one put in kRetryEvery; far
  // cheaper: copied, but for one put in kRetryEvery.
  int lent_when_dear = 0, lent_when_cheap = 0;
  const int puts = 4 * static_cast<int>(PageLender::kRetryEvery);
  for (int i = 0; i < puts; ++i) lent_when_dear += lender.worth(kBytes, 1e6 * lending + 1e3);
  for (int i = 0; i < puts; ++i) lent_when_cheap += lender.worth(kBytes, 1e-12);
  EXPECT_EQ(lent_when_dear, puts - 4);
  EXPECT_EQ(lent_when_cheap, 4);
  // A program that touches its source before the sync pays the copy back into it too.
  const double untouched = lender.lend_cost_per_byte(kBytes);
  ASSERT_NE(lender.lend(source, kBytes), nullptr);
  source[0] = 'h';
  lender.give_back();
  EXPECT_EQ(lender.counts().restored, 1u);
  EXPECT_EQ(source[0], 'h');
  EXPECT_GT(lender.lend_cost_per_byte(kBytes), untouched);
  lender.close();
  munmap(source, kBytes);
}

namespace {
// Mappings of this process without access (what a lender's reserves of address space are; the
// allocator's, which a sanitizer's run makes as it goes, are readable): they must not grow with
// every lending.
int reserved_mappings() {
  FILE* maps = std::fopen("/proc/self/maps", "r");
  if (maps == nullptr) return -1;
  char line[512];
  int count = 0;
  while (std::fgets(line, sizeof line, maps) != nullptr)
    if (std::strstr(line, " ---p ") != nullptr) ++count;
  std::fclose(maps);
  return count;
}
}  // namespace

TEST(PageLender, LargeRangesComeBackWholeRoundAfterRoundWithoutLeakingAddressSpace) {
  if (!may_lend()) GTEST_SKIP() << "no userfaultfd for this process";
  PageLender lender;
  lender.open_alone(PageLender::Mode::On);
  // 6 MiB that start one page past a 2 MiB boundary (they hold whole 2 MiB pages, which lend
  // through a reserve), and 1 MiB (which does not).
  constexpr std::size_t kHuge = std::size_t{2} << 20, kLarge = 3 * kHuge;
  char* area = fresh_range(kLarge + 2 * kHuge, 0);
  char* large = reinterpret_cast<char*>(
      ((reinterpret_cast<std::uintptr_t>(area) + kHuge - 1) & ~(kHuge - 1)) + 4096);
  char* small = fresh_range(kBytes, 0);
  std::vector<char> got(kLarge);
  int reserved_after_first = 0;
  for (int round = 0; round < 24; ++round) {
    const char fill = static_cast<char>('A' + round);
    std::memset(large, fill, kLarge);
    std::memset(small, fill + 1, kBytes);
    const char* held_large = lender.lend(large, kLarge);
    const char* held_small = lender.lend(small, kBytes);
    ASSERT_NE(held_large, nullptr);
    ASSERT_NE(held_small, nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(held_large) % kHuge,
              reinterpret_cast<std::uintptr_t>(large) % kHuge)
        << "the holding area keeps the offset in a 2 MiB page";
    got.assign(kLarge, 0);
    lender.read(0, held_large, got.data(), kLarge);
    EXPECT_EQ(std::count(got.begin(), got.end(), fill), static_cast<long>(kLarge));
    if (round % 3 == 1) large[kHuge] = '!';  // touched: comes back at once, by copy
    got.assign(kBytes, 0);
    lender.read(0, held_small, got.data(), kBytes);
    EXPECT_EQ(std::count(got.begin(), got.begin() + kBytes, static_cast<char>(fill + 1)),
              static_cast<long>(kBytes));
    lender.give_back();
    EXPECT_EQ(large[0], fill);
    EXPECT_EQ(large[kHuge], round % 3 == 1 ? '!' : fill);
    EXPECT_EQ(large[kLarge - 1], fill);
    EXPECT_EQ(small[kBytes - 1], static_cast<char>(fill + 1));
    if (round == 0) reserved_after_first = reserved_mappings();
  }
  EXPECT_EQ(reserved_mappings(), reserved_after_first) << "reserves are used again";
  EXPECT_EQ(lender.kept_reserve_bytes(), kLarge + kHuge) << "one reserve, for the large range";
  EXPECT_EQ(lender.counts().lent, 48u);
  lender.close();
  EXPECT_EQ(lender.kept_reserve_bytes(), 0u) << "and gone with the lender";
  munmap(small, kBytes);
  munmap(area, kLarge + 2 * kHuge);
}

TEST(PageLender, HpputSourcesAreReadWhereTheyLieOnlyFromTheLendingSizeAndNotWhenOff) {
  PageLender on, off, chosen;
  on.open_alone(PageLender::Mode::On);
  off.open_alone(PageLender::Mode::Off);
  chosen.open_alone(PageLender::Mode::Auto);
  EXPECT_TRUE(on.reads_hpput(PageLender::kMinLendBytes));
  EXPECT_FALSE(on.reads_hpput(PageLender::kMinLendBytes - 1));
  EXPECT_FALSE(off.reads_hpput(std::size_t{1} << 20));
  EXPECT_FALSE(chosen.reads_hpput(PageLender::kMinLendBytes - 1));
  // Auto chooses by its timings, once: the same answer for every size from the lending size on.
  const bool chose = chosen.reads_hpput(PageLender::kMinLendBytes);
  EXPECT_EQ(chosen.reads_hpput(std::size_t{1} << 20), chose);
}
