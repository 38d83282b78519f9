// Schedule matrix: offsets, window sizes, send order and the verdict on disagreeing processes.
#include <gtest/gtest.h>

#include <set>

#include "schedule.hpp"

using bspg::Schedule;

namespace {
void set_row(Schedule& schedule, int pid, std::initializer_list<std::uint64_t> streams,
             std::initializer_list<std::uint64_t> replies = {}) {
  std::uint64_t* row = schedule.matrix() + static_cast<std::size_t>(pid) * schedule.row_words();
  row[Schedule::kCall] = static_cast<std::uint64_t>(bspg::SyncCall::Sync);
  int d = 0;
  for (std::uint64_t bytes : streams) row[Schedule::stream_word(d++)] = bytes;
  d = 0;
  for (std::uint64_t bytes : replies) row[Schedule::reply_word(d++)] = bytes;
}
}  // namespace

TEST(Schedule, EmptySuperstepHasNoData) {
  Schedule schedule(3);
  for (int pid = 0; pid < 3; ++pid) set_row(schedule, pid, {0, 0, 0});
  EXPECT_FALSE(schedule.any_data());
  EXPECT_FALSE(schedule.any_gets());
  EXPECT_FALSE(schedule.check().found);
}

TEST(Schedule, StreamsLandAfterThoseOfLowerPids) {
  Schedule schedule(3);
  set_row(schedule, 0, {8, 16, 24});
  set_row(schedule, 1, {32, 0, 40});
  set_row(schedule, 2, {48, 56, 0});
  EXPECT_TRUE(schedule.any_data());
  EXPECT_EQ(schedule.stream_offset(0, 2), 0u);
  EXPECT_EQ(schedule.stream_offset(1, 2), 24u);
  EXPECT_EQ(schedule.stream_offset(2, 2), 64u);
  EXPECT_EQ(schedule.incoming_stream_bytes(0), 88u);
  EXPECT_EQ(schedule.window_bytes_needed(1), 72u);
}

TEST(Schedule, RepliesFollowTheStreamsAlignedTo8) {
  Schedule schedule(2);
  set_row(schedule, 0, {0, 12}, {0, 100});  // process 0 asks process 1 for 100 bytes
  set_row(schedule, 1, {4, 0}, {0, 0});
  EXPECT_TRUE(schedule.any_gets());
  EXPECT_TRUE(schedule.gets_for(1));
  EXPECT_FALSE(schedule.gets_for(0));
  EXPECT_EQ(schedule.reply_bytes(0, 1), 100u);
  EXPECT_EQ(schedule.incoming_stream_bytes(0), 8u);  // 4 rounded up
  EXPECT_EQ(schedule.reply_offset(0, 1), 8u);
  EXPECT_EQ(schedule.window_bytes_needed(0), 108u);
}

TEST(Schedule, SendOrderVisitsEveryProcessOnceAndNobodyIsFlooded) {
  const int p = 5;
  Schedule schedule(p);
  for (int k = 0; k < p; ++k) {
    std::set<int> targets_this_step;
    for (int src = 0; src < p; ++src) targets_this_step.insert(schedule.send_target(src, k));
    EXPECT_EQ(targets_this_step.size(), static_cast<std::size_t>(p)) << "step " << k;
  }
  for (int src = 0; src < p; ++src) {
    std::set<int> all;
    for (int k = 0; k < p; ++k) all.insert(schedule.send_target(src, k));
    EXPECT_EQ(all.size(), static_cast<std::size_t>(p));
    EXPECT_EQ(schedule.send_target(src, p - 1), src);  // itself last
  }
}

TEST(Schedule, DisagreeingCallsAreReportedByTheFirstDifferentProcess) {
  Schedule schedule(3);
  for (int pid = 0; pid < 3; ++pid) set_row(schedule, pid, {0, 0, 0});
  schedule.matrix()[2 * schedule.row_words() + Schedule::kCall] = static_cast<std::uint64_t>(bspg::SyncCall::End);
  Schedule::Disagreement verdict = schedule.check();
  ASSERT_TRUE(verdict.found);
  EXPECT_EQ(verdict.reporter, 2);
  EXPECT_STREQ(verdict.call, "bsp_end");
  EXPECT_NE(verdict.message.find("processes disagree"), std::string::npos);
  EXPECT_NE(verdict.message.find("process 0 called bsp_sync while process 2 called bsp_end"), std::string::npos);
}

TEST(Schedule, DisagreeingRegistrationsPopsAndTagSizesAreFound) {
  struct Case {
    int field;
    std::uint64_t value;
    const char* call;
  } cases[] = {{Schedule::kPushCount, 1, "bsp_push_reg"},
               {Schedule::kPopDigest, 42, "bsp_pop_reg"},
               {Schedule::kTagSize, 5, "bsp_set_tagsize"}};
  for (const Case& c : cases) {
    Schedule schedule(2);
    set_row(schedule, 0, {0, 0});
    set_row(schedule, 1, {0, 0});
    schedule.matrix()[schedule.row_words() + c.field] = c.value;
    Schedule::Disagreement verdict = schedule.check();
    ASSERT_TRUE(verdict.found) << c.call;
    EXPECT_STREQ(verdict.call, c.call);
    EXPECT_EQ(verdict.reporter, 1);
    EXPECT_NE(verdict.message.find("processes disagree"), std::string::npos) << verdict.message;
  }
}
