// Stream records: what the packers write, the reader gives back, in order, with alignment.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "records.hpp"

using namespace bspg;

namespace {
struct Seen {
  std::vector<std::string> events;
  bool payloads_aligned = true;
};

bool read_back(const ByteBuffer& stream, Seen& seen) {
  return unpack_stream(
      stream.data(), stream.size(),
      [&](int slot, std::uint32_t offset, const char* payload, std::uint32_t n) {
        seen.events.push_back("put " + std::to_string(slot) + " " + std::to_string(offset) + " " +
                              std::string(payload, n));
      },
      [&](int slot, std::uint32_t offset, std::uint32_t n) {
        seen.events.push_back("get " + std::to_string(slot) + " " + std::to_string(offset) + " " +
                              std::to_string(n));
      },
      [&](const char* tag, std::uint32_t tag_n, const char* payload, std::uint32_t n) {
        if (reinterpret_cast<std::uintptr_t>(payload) % 8) seen.payloads_aligned = false;
        seen.events.push_back("msg " + std::string(tag, tag_n) + " " + std::string(payload, n));
      });
}
}  // namespace

TEST(Records, RecordsComeBackInOrder) {
  ByteBuffer stream;
  pack_put(stream, 3, 16, "abc", 3);
  pack_get(stream, 7, 8, 100);
  pack_message(stream, "T1", 2, "hello", 5);
  pack_put(stream, 0, 0, "x", 1);
  pack_message(stream, "", 0, "", 0);
  pad_to_8(stream);
  EXPECT_EQ(stream.size() % 8, 0u);
  Seen seen;
  ASSERT_TRUE(read_back(stream, seen));
  std::vector<std::string> expected = {"put 3 16 abc", "get 7 8 100", "msg T1 hello", "put 0 0 x",
                                       "msg  "};
  EXPECT_EQ(seen.events, expected);
}

TEST(Records, MessagePayloadsAre8AlignedAfterOddPuts) {
  ByteBuffer stream;
  for (std::uint32_t n = 1; n < 20; ++n) {
    std::string payload(n, 'p');
    pack_put(stream, 1, 0, payload.data(), n);
    pack_message(stream, "tag", 3, payload.data(), n);
  }
  pad_to_8(stream);
  // The buffer itself comes from realloc (16-aligned); in the window streams start 8-aligned.
  ASSERT_EQ(reinterpret_cast<std::uintptr_t>(stream.data()) % 8, 0u);
  Seen seen;
  ASSERT_TRUE(read_back(stream, seen));
  EXPECT_EQ(seen.events.size(), 38u);
  EXPECT_TRUE(seen.payloads_aligned);
}

TEST(Records, TruncatedOrCorruptStreamsAreRejected) {
  ByteBuffer stream;
  pack_put(stream, 2, 0, "12345678", 8);
  Seen seen;
  EXPECT_FALSE(unpack_stream(
      stream.data(), stream.size() - 4, [](int, std::uint32_t, const char*, std::uint32_t) {},
      [](int, std::uint32_t, std::uint32_t) {},
      [](const char*, std::uint32_t, const char*, std::uint32_t) {}));
  std::uint32_t bad_kind = 3u | 5u << 2;  // a short message whose tag would be 5 bytes long
  std::memcpy(stream.data(), &bad_kind, 4);
  EXPECT_FALSE(read_back(stream, seen));
}

TEST(Records, LargePayloadsGrowTheBuffer) {
  ByteBuffer stream;
  std::vector<char> big(5 << 20, 'z');
  pack_put(stream, 9, 123, big.data(), static_cast<std::uint32_t>(big.size()));
  std::uint64_t total = 0;
  ASSERT_TRUE(unpack_stream(
      stream.data(), stream.size(),
      [&](int slot, std::uint32_t offset, const char* payload, std::uint32_t n) {
        EXPECT_EQ(slot, 9);
        EXPECT_EQ(offset, 123u);
        EXPECT_EQ(payload[n - 1], 'z');
        total += n;
      },
      [](int, std::uint32_t, std::uint32_t) {},
      [](const char*, std::uint32_t, const char*, std::uint32_t) {}));
  EXPECT_EQ(total, big.size());
}

// bsp_hpsend: the payload stays in user memory; placed where it belongs, the receiver reads an
// ordinary message (as the transport places externals when the stream moves).
TEST(Records, UnbufferedMessagePayloadIsPlacedWhereTheCopyWouldBe) {
  Stream stream;
  pack_put(stream.records(), 1, 4, "ab", 2);
  std::string payload(1500, 'q');
  pack_message_unbuffered(stream, "TG", 2, payload.data(),
                          static_cast<std::uint32_t>(payload.size()));
  pack_message(stream.records(), "T2", 2, "xyz", 3);
  pad_to_8(stream.records());
  ASSERT_EQ(stream.externals().size(), 1u);
  // Lay the stream out as the transport does.
  std::string laid;
  std::size_t from = Stream::kHeadroom;
  for (const Stream::External& e : stream.externals()) {
    laid.append(stream.buffer() + from, e.buffer_offset - from);
    laid.append(e.data, e.bytes);
    laid.append(e.padded - e.bytes, '\0');
    from = e.buffer_offset;
  }
  laid.append(stream.buffer() + from, stream.buffer_size() - from);
  ASSERT_EQ(laid.size(), stream.length());
  std::vector<char> aligned(laid.begin(), laid.end());
  std::vector<std::string> events;
  ASSERT_TRUE(unpack_stream(
      aligned.data(), aligned.size(),
      [&](int, std::uint32_t, const char* p, std::uint32_t n) {
        events.push_back("put " + std::string(p, n));
      },
      [](int, std::uint32_t, std::uint32_t) {},
      [&](const char* tag, std::uint32_t tn, const char* p, std::uint32_t n) {
        events.push_back("msg " + std::string(tag, tn) + " " + std::to_string(n) + " " +
                         std::string(p, n).substr(0, 3));
      }));
  EXPECT_EQ(events, (std::vector<std::string>{"put ab", "msg TG 1500 qqq", "msg T2 3 xyz"}));
}

namespace {
// The stream's records without the headroom, read back.
std::vector<std::string> events_of(Stream& stream) {
  ByteBuffer copy;
  copy.append(stream.buffer() + Stream::kHeadroom, stream.buffer_size() - Stream::kHeadroom);
  Seen seen;
  EXPECT_TRUE(read_back(copy, seen));
  return seen.events;
}
}  // namespace

TEST(Records, PutsToConsecutiveWordsOfOneAreaBecomeOneRecord) {
  Stream s;
  pack_put(s, 3, 0, "abcd", 4);
  pack_put(s, 3, 4, "efgh", 4);
  pack_put(s, 3, 8, "ijklmnop", 8);
  EXPECT_EQ(events_of(s), (std::vector<std::string>{"put 3 0 abcdefghijklmnop"}));
  EXPECT_EQ(s.buffer_size() - Stream::kHeadroom, kHeaderBytes + 16);
}

TEST(Records, OnlyWhatContinuesTheLastRecordIsMerged) {
  Stream s;
  pack_put(s, 1, 0, "abcd", 4);
  pack_put(s, 2, 4, "efgh", 4);      // another area
  pack_put(s, 2, 12, "ijkl", 4);     // a gap
  pack_put(s, 2, 8, "mnop", 4);      // backwards
  pack_put(s, 2, 12, "qrs", 3);      // continues the last record, odd length: padded, last
  pack_put(s, 2, 15, "t", 1);        // continues it, but after padding: a record of its own
  pack_get(s.records(), 2, 0, 4);    // a get ends the run
  pack_put(s, 2, 16, "uvwx", 4);
  EXPECT_EQ(events_of(s), (std::vector<std::string>{"put 1 0 abcd", "put 2 4 efgh",
                                                     "put 2 12 ijkl", "put 2 8 mnopqrs",
                                                     "put 2 15 t", "get 2 0 4", "put 2 16 uvwx"}));
}

TEST(Records, APutAfterAnUnbufferedPayloadIsNotMergedBeforeIt) {
  Stream s;
  pack_put(s, 1, 0, "abcd", 4);
  pad_to_8(s.records());
  const char payload[8] = {'P', 'P', 'P', 'P', 'P', 'P', 'P', 'P'};
  s.add_external(payload, 8);
  pack_put(s, 1, 4, "efgh", 4);
  EXPECT_EQ(s.last_put(), s.buffer_size() - kHeaderBytes - 4);
}

// Copies large enough to choose their way by timing (through the cache or around it, the C
// library's or bspg's own moves) land byte for byte, whatever the alignment of either end and
// however many bytes trail the last full line; nine copies of a size try both ways.
TEST(Records, ChosenCopiesAreExactAtAnyAlignment) {
  for (const std::size_t n : {bspg::kMidChosenBytes + 77, 8 * bspg::kChosenCopyBytes + 77}) {
    std::vector<unsigned char> src(n + 64), dst(n + 128);
    for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>(i * 131 + 7);
    for (std::size_t from_skew : {0, 1, 13}) {
      for (std::size_t to_skew : {0, 5, 63}) {
        std::fill(dst.begin(), dst.end(), 0xee);
        bspg::copy_bytes(dst.data() + to_skew, src.data() + from_skew, n);
        EXPECT_EQ(std::memcmp(dst.data() + to_skew, src.data() + from_skew, n), 0)
            << n << " bytes, skews " << from_skew << ", " << to_skew;
        // Nothing written outside the destination.
        for (std::size_t i = 0; i < to_skew; ++i) ASSERT_EQ(dst[i], 0xee);
        for (std::size_t i = to_skew + n; i < dst.size(); ++i) ASSERT_EQ(dst[i], 0xee);
      }
    }
  }
}

// A message with a tag of at most 4 bytes takes one header word and the tag word: a 16-byte
// payload with an int tag is a record of 24 bytes, and comes back whole, 8-aligned, in order with
// the long form (larger tags) and with puts.
TEST(Records, ShortMessagesTakeTwoWordsAndComeBackWhole) {
  ByteBuffer one;
  pack_message(one, "TAG4", 4, "0123456789abcdef", 16);
  EXPECT_EQ(one.size(), 24u);
  ByteBuffer stream;
  std::vector<std::string> expected;
  for (std::uint32_t tag_n = 0; tag_n <= 6; ++tag_n) {
    for (std::uint32_t n : {0u, 1u, 7u, 8u, 16u, 100u}) {
      const std::string tag = std::string("abcdef").substr(0, tag_n), payload(n, 'a' + tag_n);
      pack_message(stream, tag.data(), tag_n, payload.data(), n);
      expected.push_back("msg " + tag + " " + payload);
      pack_put(stream, 1, 4 * n, "xyz", 3);
      expected.push_back("put 1 " + std::to_string(4 * n) + " xyz");
    }
  }
  pad_to_8(stream);
  Seen seen;
  ASSERT_TRUE(read_back(stream, seen));
  EXPECT_EQ(seen.events, expected);
  EXPECT_TRUE(seen.payloads_aligned);
  // Cut inside a short message's payload: rejected, not read past the end.
  ByteBuffer cut;
  pack_message(cut, "T", 1, "0123456789abcdef", 16);
  EXPECT_FALSE(unpack_stream(
      cut.data(), cut.size() - 8, [](int, std::uint32_t, const char*, std::uint32_t) {},
      [](int, std::uint32_t, std::uint32_t) {},
      [](const char*, std::uint32_t, const char*, std::uint32_t) {}));
}
