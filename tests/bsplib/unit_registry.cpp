// Registration table: slot numbering, stacking of one address, pops in call order, NULL pops.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "registry.hpp"

using bspg::Registry;

namespace {
// What two processes would all-gather: each registered `count` areas given as (address, size).
std::vector<std::uint64_t> gathered(
    const std::vector<std::vector<std::pair<std::uintptr_t, std::int64_t>>>& per_process) {
  std::vector<std::uint64_t> words;
  for (const auto& areas : per_process)
    for (const auto& [address, size] : areas) {
      words.push_back(address);
      words.push_back(static_cast<std::uint64_t>(size));
    }
  return words;
}
// Applies a superstep in which no process popped flexibly (its own pop codes are the decision).
Registry::Change apply_superstep(Registry& registry, const std::vector<std::uint64_t>& words) {
  return registry.apply(registry.pop_codes(), words);
}
}  // namespace

TEST(Registry, PushTakesEffectOnlyAtApply) {
  Registry registry(2);
  int a[4] = {};
  registry.push(a, 16);
  EXPECT_EQ(registry.lookup(a), -1);
  EXPECT_TRUE(registry.is_pending_push(a));
  apply_superstep(registry, gathered({{{reinterpret_cast<std::uintptr_t>(a), 16}}, {{0x1000, 8}}}));
  int slot = registry.lookup(a);
  ASSERT_GE(slot, 0);
  EXPECT_FALSE(registry.is_pending_push(a));
  EXPECT_EQ(registry.size(slot, 0), 16);
  EXPECT_EQ(registry.size(slot, 1), 8);  // the remote process's own size
  EXPECT_EQ(registry.address(slot, 1), reinterpret_cast<char*>(0x1000));
}

TEST(Registry, SameAddressTwiceStacksAndPopRemovesMostRecent) {
  Registry registry(1);
  char buffer[64] = {};
  registry.push(buffer, 8);
  apply_superstep(registry, gathered({{{reinterpret_cast<std::uintptr_t>(buffer), 8}}}));
  registry.push(buffer, 64);
  apply_superstep(registry, gathered({{{reinterpret_cast<std::uintptr_t>(buffer), 64}}}));
  EXPECT_EQ(registry.size(registry.lookup(buffer), 0), 64);
  ASSERT_EQ(registry.pop(buffer), true);
  apply_superstep(registry, {});
  EXPECT_EQ(registry.size(registry.lookup(buffer), 0), 8);
  ASSERT_EQ(registry.pop(buffer), true);
  apply_superstep(registry, {});
  EXPECT_EQ(registry.lookup(buffer), -1);
  EXPECT_EQ(registry.live_slots(), 0u);
}

TEST(Registry, TwoPopsOfOneAddressInOneSuperstepTakeBothRegistrations) {
  Registry registry(1);
  char buffer[8] = {};
  registry.push(buffer, 4);
  registry.push(buffer, 8);
  apply_superstep(registry, gathered({{{reinterpret_cast<std::uintptr_t>(buffer), 4},
                                       {reinterpret_cast<std::uintptr_t>(buffer), 8}}}));
  EXPECT_EQ(registry.pop(buffer), true);
  EXPECT_EQ(registry.pop(buffer), true);
  EXPECT_EQ(registry.pop(buffer), false);  // a third has nothing left
}

TEST(Registry, PopOfUnknownAddressIsRefused) {
  Registry registry(1);
  int a = 0;
  EXPECT_FALSE(registry.pop(&a));
}

// Issue: a push and a pop of one area in the same superstep both take effect, in call order.
TEST(Registry, PushAndPopInOneSuperstepTakeEffectInCallOrder) {
  Registry registry(1);
  int a = 0, b = 0;
  registry.push(&b, 4);
  ASSERT_TRUE(registry.pop(&b));   // names the push above
  EXPECT_FALSE(registry.pop(&b));  // nothing left to pop
  registry.push(&a, 4);
  EXPECT_EQ(registry.pop_codes(), std::vector<std::uint64_t>{Registry::kPendingPush | 1});
  Registry::Change change =
      apply_superstep(registry, gathered({{{reinterpret_cast<std::uintptr_t>(&b), 4},
                                           {reinterpret_cast<std::uintptr_t>(&a), 4}}}));
  EXPECT_TRUE(change.error.empty());
  EXPECT_EQ(registry.lookup(&b), -1);
  EXPECT_EQ(registry.lookup(&a), 0);  // b's slot was freed before a's push took the lowest
  EXPECT_EQ(registry.live_slots(), 1u);
}

TEST(Registry, PopThenPushOfOneAreaReplacesItsRegistration) {
  Registry registry(1);
  int a[4] = {};
  registry.push(a, 8);
  apply_superstep(registry, gathered({{{reinterpret_cast<std::uintptr_t>(a), 8}}}));
  ASSERT_TRUE(registry.pop(a));
  registry.push(a, 16);
  apply_superstep(registry, gathered({{{reinterpret_cast<std::uintptr_t>(a), 16}}}));
  ASSERT_EQ(registry.lookup(a), 0);
  EXPECT_EQ(registry.size(0, 0), 16);
}

// Issue: a process that registered NULL twice pops whichever NULL registration the others pop.
TEST(Registry, FlexibleNullPopTakesWhatTheOthersPop) {
  Registry registry(2);
  int x = 0, y = 0;
  registry.push(nullptr, 0);  // slot 0: "x" elsewhere
  registry.push(nullptr, 0);  // slot 1: "y" elsewhere
  apply_superstep(registry, gathered({{{0, 0}, {0, 0}},
                                      {{reinterpret_cast<std::uintptr_t>(&x), 4},
                                       {reinterpret_cast<std::uintptr_t>(&y), 4}}}));
  ASSERT_TRUE(registry.pop(nullptr));
  EXPECT_EQ(registry.pop_codes(), std::vector<std::uint64_t>{0});  // flexible
  // The others pop x (slot 0), the first registration, not the most recent.
  Registry::Change change = registry.apply({1}, {});
  EXPECT_TRUE(change.error.empty()) << change.error;
  EXPECT_EQ(registry.lookup(nullptr), 1);
  EXPECT_EQ(registry.size(1, 1), 4);
  EXPECT_EQ(registry.address(1, 1), reinterpret_cast<char*>(&y));
}

TEST(Registry, FlexibleNullPopCannotTakeARealArea) {
  Registry registry(2);
  int a = 0, other = 0;
  registry.push(nullptr, 0);
  registry.push(nullptr, 0);
  registry.push(&a, 4);
  apply_superstep(registry, gathered({{{0, 0}, {0, 0}, {reinterpret_cast<std::uintptr_t>(&a), 4}},
                                      {{reinterpret_cast<std::uintptr_t>(&other), 4},
                                       {reinterpret_cast<std::uintptr_t>(&other), 4},
                                       {reinterpret_cast<std::uintptr_t>(&other), 4}}}));
  ASSERT_TRUE(registry.pop(nullptr));
  Registry::Change change = registry.apply({3}, {});  // the others name slot 2: a here, not NULL
  EXPECT_NE(change.error.find("did not register as NULL"), std::string::npos) << change.error;
}

TEST(Registry, SingleNullRegistrationIsPoppedDefinitely) {
  Registry registry(1);
  registry.push(nullptr, 0);
  apply_superstep(registry, gathered({{{0, 0}}}));
  ASSERT_TRUE(registry.pop(nullptr));
  EXPECT_EQ(registry.pop_codes(), std::vector<std::uint64_t>{1});
}

TEST(Registry, OverlapsLocalSeesRegisteredAreasOnly) {
  Registry registry(1);
  char area[64] = {}, elsewhere[64] = {};
  registry.push(area, 64);
  apply_superstep(registry, gathered({{{reinterpret_cast<std::uintptr_t>(area), 64}}}));
  EXPECT_TRUE(registry.overlaps_local(area + 60, 16));
  EXPECT_FALSE(registry.overlaps_local(elsewhere, 64));
}

TEST(Registry, NullRegistrationsWithSizeZeroAreSlotsToo) {
  Registry registry(2);
  int real[2] = {};
  registry.push(nullptr, 0);  // this process has no such array
  apply_superstep(registry, gathered({{{0, 0}}, {{reinterpret_cast<std::uintptr_t>(real), 8}}}));
  int slot = registry.lookup(nullptr);
  ASSERT_GE(slot, 0);
  EXPECT_EQ(registry.size(slot, 0), 0);
  EXPECT_EQ(registry.size(slot, 1), 8);
}

TEST(Registry, FreedSlotsAreReusedLowestFirstSoEveryProcessAgrees) {
  Registry registry(1);
  int a = 0, b = 0, c = 0, d = 0;
  for (int* x : {&a, &b, &c}) registry.push(x, 4);
  apply_superstep(registry, gathered({{{reinterpret_cast<std::uintptr_t>(&a), 4},
                                       {reinterpret_cast<std::uintptr_t>(&b), 4},
                                       {reinterpret_cast<std::uintptr_t>(&c), 4}}}));
  EXPECT_EQ(registry.lookup(&a), 0);
  EXPECT_EQ(registry.lookup(&b), 1);
  EXPECT_EQ(registry.lookup(&c), 2);
  registry.pop(&c);
  registry.pop(&a);
  apply_superstep(registry, {});
  registry.push(&d, 4);
  apply_superstep(registry, gathered({{{reinterpret_cast<std::uintptr_t>(&d), 4}}}));
  EXPECT_EQ(registry.lookup(&d), 0);
  EXPECT_EQ(registry.lookup(&b), 1);
}

TEST(Registry, PopsNameTheirRegistrationsAndOrderHasADigest) {
  Registry first(1), second(1);
  int a = 0, b = 0;
  auto words = gathered(
      {{{reinterpret_cast<std::uintptr_t>(&a), 4}, {reinterpret_cast<std::uintptr_t>(&b), 4}}});
  for (Registry* r : {&first, &second}) {
    r->push(&a, 4);
    r->push(&b, 4);
    apply_superstep(*r, words);
  }
  first.pop(&a);
  first.pop(&b);
  second.pop(&b);
  second.pop(&a);
  EXPECT_EQ(first.pop_codes(), (std::vector<std::uint64_t>{1, 2}));
  EXPECT_EQ(second.pop_codes(), (std::vector<std::uint64_t>{2, 1}));
  Registry third(1);
  third.push(&a, 4);
  third.pop(&a);
  Registry fourth(1);
  fourth.pop(&a);  // refused (nothing registered): no op recorded
  fourth.push(&a, 4);
  EXPECT_NE(third.op_order_digest(), fourth.op_order_digest());
}

TEST(Registry, HundredsOfRegistrationsKeepTheirSlots) {
  Registry registry(1);
  std::vector<int> areas(500);
  std::vector<std::pair<std::uintptr_t, std::int64_t>> mine;
  for (int& x : areas) {
    registry.push(&x, 4);
    mine.push_back({reinterpret_cast<std::uintptr_t>(&x), 4});
  }
  apply_superstep(registry, gathered({mine}));
  for (std::size_t i = 0; i < areas.size(); ++i)
    EXPECT_EQ(registry.lookup(&areas[i]), static_cast<int>(i));
}
