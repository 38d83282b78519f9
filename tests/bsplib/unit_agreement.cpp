// Agreement at a sync: one MAX reduction of a digest and its complement gives the largest and
// smallest digest; disagreements are named from gathered headers; pops agree separately.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "agreement.hpp"

using namespace bspg;

namespace {
// What MPI_Allreduce(MPI_MAX) of the encoded headers would give.
std::vector<std::uint64_t> reduce(const std::vector<Header>& headers) {
  std::vector<std::uint64_t> result(Header::kWords, 0), words(Header::kWords);
  for (const Header& h : headers) {
    h.encode(words.data());
    for (int i = 0; i < Header::kWords; ++i)
      result[static_cast<std::size_t>(i)] =
          std::max(result[static_cast<std::size_t>(i)], words[static_cast<std::size_t>(i)]);
  }
  return result;
}

Header sync_header() {
  Header h;
  h.field[Header::kCall] = static_cast<std::uint64_t>(SyncCall::Sync);
  return h;
}
}  // namespace

TEST(Agreement, IdenticalHeadersAgreeAndFlagsAreOred) {
  std::vector<Header> headers(4, sync_header());
  headers[2].flags = Header::kGets;
  headers[3].flags = Header::kMailbox;
  Agreement agreement(reduce(headers).data());
  EXPECT_TRUE(agreement.unanimous());
  EXPECT_TRUE(agreement.any(Header::kGets));
  EXPECT_TRUE(agreement.any(Header::kMailbox));
  EXPECT_FALSE(agreement.any(Header::kDirectPuts));
}

// One process whose put found its mailbox region too small: every process learns it (the regions
// grow at that sync), and the mailbox counts as used (the sync ends with its barrier).
TEST(Agreement, AMailboxTooSmallAnywhereIsSeenEverywhere) {
  std::vector<Header> headers(3, sync_header());
  headers[0].flags = Header::kMailbox;
  EXPECT_FALSE(Agreement(reduce(headers).data()).mailbox_short());
  headers[2].flags = Header::kMailbox;
  headers[2].mailbox_short = true;
  Agreement agreement(reduce(headers).data());
  EXPECT_TRUE(agreement.unanimous());
  EXPECT_TRUE(agreement.mailbox_short());
  EXPECT_TRUE(agreement.any(Header::kMailbox));
  EXPECT_FALSE(agreement.any(Header::kGets));
}

TEST(Agreement, AnyDifferenceInAFieldIsSeen) {
  for (int field = 0; field < Header::kFields; ++field) {
    std::vector<Header> headers(3, sync_header());
    headers[1].field[field] += 1;
    EXPECT_FALSE(Agreement(reduce(headers).data()).unanimous()) << "field " << field;
  }
}

// The same in a superstep with registrations and a new tag size (the digest is then a hash), for
// differences small and large, and identical such headers still agree.
TEST(Agreement, AnyDifferenceIsSeenWhenRegistrationsChange) {
  Header busy = sync_header();
  busy.field[Header::kPushCount] = 3;
  busy.field[Header::kPopCount] = 1;
  busy.field[Header::kOpOrder] = 0x5a5a1234abcdULL;
  busy.field[Header::kTagSize] = 5;
  EXPECT_TRUE(Agreement(reduce({busy, busy, busy}).data()).unanimous());
  const std::uint64_t changes[] = {1, 2, 0x100000000ULL, std::uint64_t{1} << 63};
  for (int field = 0; field < Header::kFields; ++field) {
    for (std::uint64_t change : changes) {
      Header other = busy;
      other.field[field] ^= change;
      EXPECT_FALSE(Agreement(reduce({busy, other, busy}).data()).unanimous())
          << "field " << field << " change " << change;
    }
  }
  // A header with registrations never passes for a plain sync or bsp_end.
  Header plain = sync_header(), only_push = sync_header();
  only_push.field[Header::kPushCount] = 1;
  EXPECT_FALSE(Agreement(reduce({plain, only_push}).data()).unanimous());
  Header end = sync_header();
  end.field[Header::kCall] = static_cast<std::uint64_t>(SyncCall::End);
  EXPECT_FALSE(Agreement(reduce({plain, end}).data()).unanimous());
}

TEST(Agreement, FirstProcessThatDiffersReportsWithItsPid) {
  std::vector<Header> headers(4, sync_header());
  headers[2].field[Header::kCall] = static_cast<std::uint64_t>(SyncCall::End);
  headers[3].field[Header::kPushCount] = 1;
  Disagreement verdict = find_disagreement(headers, {0, 5, 7, 9});
  ASSERT_TRUE(verdict.found);
  EXPECT_EQ(verdict.reporter, 2);
  EXPECT_STREQ(verdict.call, "bsp_end");
  EXPECT_NE(verdict.message.find("process 0 called bsp_sync while process 7 called bsp_end"),
            std::string::npos)
      << verdict.message;
}

TEST(Agreement, MessagesNameTheCallThatDisagrees) {
  struct Case {
    Header::Field field;
    const char* call;
    const char* words;
  } cases[] = {{Header::kPushCount, "bsp_push_reg", "registered"},
               {Header::kPopCount, "bsp_pop_reg", "pops"},
               {Header::kOpOrder, "bsp_pop_reg", "different order"},
               {Header::kTagSize, "bsp_set_tagsize", "sets 7 bytes"}};
  for (const Case& c : cases) {
    std::vector<Header> headers(2, sync_header());
    headers[1].field[c.field] = c.field == Header::kTagSize ? 8 : 1;
    Disagreement verdict = find_disagreement(headers, {0, 1});
    ASSERT_TRUE(verdict.found);
    EXPECT_STREQ(verdict.call, c.call);
    EXPECT_NE(verdict.message.find(c.words), std::string::npos) << verdict.message;
  }
}

TEST(Agreement, PopsAgreeIgnoringFlexibleOnes) {
  // Three processes, two pops; process 1 popped NULL flexibly in the first.
  std::vector<std::vector<std::uint64_t>> codes = {{3, 5}, {0, 5}, {3, 5}};
  std::vector<std::uint64_t> reduced(4, 0), words(4);
  for (const auto& c : codes) {
    encode_pops(c, words.data());
    for (std::size_t i = 0; i < 4; ++i) reduced[i] = std::max(reduced[i], words[i]);
  }
  PopDecision decision = decide_pops(reduced.data(), 2);
  EXPECT_TRUE(decision.agreed);
  EXPECT_EQ(decision.codes, (std::vector<std::uint64_t>{3, 5}));
}

TEST(Agreement, PopsThatNameDifferentRegistrationsDisagree) {
  std::vector<std::vector<std::uint64_t>> codes = {{3}, {4}};
  std::vector<std::uint64_t> reduced(2, 0), words(2);
  for (const auto& c : codes) {
    encode_pops(c, words.data());
    for (std::size_t i = 0; i < 2; ++i) reduced[i] = std::max(reduced[i], words[i]);
  }
  EXPECT_FALSE(decide_pops(reduced.data(), 1).agreed);
  Disagreement verdict = find_pop_disagreement(
      {3, 4}, 1, {0, 1}, [](std::uint64_t code) { return std::to_string(code); });
  ASSERT_TRUE(verdict.found);
  EXPECT_EQ(verdict.reporter, 1);
  EXPECT_NE(verdict.message.find("process 0 pops 3, process 1 pops 4"), std::string::npos)
      << verdict.message;
}

TEST(Agreement, EverybodyFlexibleLeavesThePopUndecided) {
  std::vector<std::uint64_t> words(2);
  encode_pops({0}, words.data());
  PopDecision decision = decide_pops(words.data(), 1);
  EXPECT_TRUE(decision.agreed);
  EXPECT_EQ(decision.codes, std::vector<std::uint64_t>{0});
}
