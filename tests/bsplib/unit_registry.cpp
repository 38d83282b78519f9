// Registration table: slot numbering, stacking of one address, pops, pending state.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "registry.hpp"

using bspg::Registry;

namespace {
// What two processes would all-gather: each registered `count` areas given as (address, size).
std::vector<std::uint64_t> gathered(const std::vector<std::vector<std::pair<std::uintptr_t, std::int64_t>>>& per_process) {
  std::vector<std::uint64_t> words;
  for (const auto& areas : per_process)
    for (const auto& [address, size] : areas) {
      words.push_back(address);
      words.push_back(static_cast<std::uint64_t>(size));
    }
  return words;
}
}  // namespace

TEST(Registry, PushTakesEffectOnlyAtApply) {
  Registry registry(2);
  int a[4];
  registry.push(a, 16);
  EXPECT_EQ(registry.lookup(a), -1);
  EXPECT_TRUE(registry.is_pending_push(a));
  registry.apply(gathered({{{reinterpret_cast<std::uintptr_t>(a), 16}}, {{0x1000, 8}}}));
  int slot = registry.lookup(a);
  ASSERT_GE(slot, 0);
  EXPECT_FALSE(registry.is_pending_push(a));
  EXPECT_EQ(registry.size(slot, 0), 16);
  EXPECT_EQ(registry.size(slot, 1), 8);  // the remote process's own size
  EXPECT_EQ(registry.address(slot, 1), reinterpret_cast<char*>(0x1000));
}

TEST(Registry, SameAddressTwiceStacksAndPopRemovesMostRecent) {
  Registry registry(1);
  char buffer[64];
  registry.push(buffer, 8);
  registry.apply(gathered({{{reinterpret_cast<std::uintptr_t>(buffer), 8}}}));
  registry.push(buffer, 64);
  registry.apply(gathered({{{reinterpret_cast<std::uintptr_t>(buffer), 64}}}));
  EXPECT_EQ(registry.size(registry.lookup(buffer), 0), 64);
  ASSERT_EQ(registry.pop(buffer), Registry::PopResult::Ok);
  registry.apply({});
  EXPECT_EQ(registry.size(registry.lookup(buffer), 0), 8);
  ASSERT_EQ(registry.pop(buffer), Registry::PopResult::Ok);
  registry.apply({});
  EXPECT_EQ(registry.lookup(buffer), -1);
  EXPECT_EQ(registry.live_slots(), 0u);
}

TEST(Registry, TwoPopsOfOneAddressInOneSuperstepTakeBothRegistrations) {
  Registry registry(1);
  char buffer[8];
  registry.push(buffer, 4);
  registry.push(buffer, 8);
  registry.apply(gathered({{{reinterpret_cast<std::uintptr_t>(buffer), 4}, {reinterpret_cast<std::uintptr_t>(buffer), 8}}}));
  EXPECT_EQ(registry.pop(buffer), Registry::PopResult::Ok);
  EXPECT_EQ(registry.pop(buffer), Registry::PopResult::Ok);
  EXPECT_EQ(registry.pop(buffer), Registry::PopResult::NotRegistered);  // a third has nothing left
}

TEST(Registry, PopOfUnknownOrPendingAddressIsRefused) {
  Registry registry(1);
  int a = 0, b = 0;
  EXPECT_EQ(registry.pop(&a), Registry::PopResult::NotRegistered);
  registry.push(&b, 4);
  EXPECT_EQ(registry.pop(&b), Registry::PopResult::OnlyPending);
}

TEST(Registry, NullRegistrationsWithSizeZeroAreSlotsToo) {
  Registry registry(2);
  int real[2];
  registry.push(nullptr, 0);  // this process has no such array
  registry.apply(gathered({{{0, 0}}, {{reinterpret_cast<std::uintptr_t>(real), 8}}}));
  int slot = registry.lookup(nullptr);
  ASSERT_GE(slot, 0);
  EXPECT_EQ(registry.size(slot, 0), 0);
  EXPECT_EQ(registry.size(slot, 1), 8);
}

TEST(Registry, FreedSlotsAreReusedLowestFirstSoEveryProcessAgrees) {
  Registry registry(1);
  int a = 0, b = 0, c = 0, d = 0;
  for (int* x : {&a, &b, &c}) registry.push(x, 4);
  registry.apply(gathered({{{reinterpret_cast<std::uintptr_t>(&a), 4}, {reinterpret_cast<std::uintptr_t>(&b), 4}, {reinterpret_cast<std::uintptr_t>(&c), 4}}}));
  EXPECT_EQ(registry.lookup(&a), 0);
  EXPECT_EQ(registry.lookup(&b), 1);
  EXPECT_EQ(registry.lookup(&c), 2);
  registry.pop(&c);
  registry.pop(&a);
  registry.apply({});
  registry.push(&d, 4);
  registry.apply(gathered({{{reinterpret_cast<std::uintptr_t>(&d), 4}}}));
  EXPECT_EQ(registry.lookup(&d), 0);
  EXPECT_EQ(registry.lookup(&b), 1);
}

TEST(Registry, PopDigestDependsOnOrder) {
  Registry first(1), second(1);
  int a = 0, b = 0;
  auto words = gathered({{{reinterpret_cast<std::uintptr_t>(&a), 4}, {reinterpret_cast<std::uintptr_t>(&b), 4}}});
  for (Registry* r : {&first, &second}) {
    r->push(&a, 4);
    r->push(&b, 4);
    r->apply(words);
  }
  first.pop(&a);
  first.pop(&b);
  second.pop(&b);
  second.pop(&a);
  EXPECT_NE(first.pending_pop_digest(), second.pending_pop_digest());
}

TEST(Registry, HundredsOfRegistrationsKeepTheirSlots) {
  Registry registry(1);
  std::vector<int> areas(500);
  std::vector<std::pair<std::uintptr_t, std::int64_t>> mine;
  for (int& x : areas) {
    registry.push(&x, 4);
    mine.push_back({reinterpret_cast<std::uintptr_t>(&x), 4});
  }
  registry.apply(gathered({mine}));
  for (std::size_t i = 0; i < areas.size(); ++i) EXPECT_EQ(registry.lookup(&areas[i]), static_cast<int>(i));
}
