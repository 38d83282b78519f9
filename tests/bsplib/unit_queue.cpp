// The message queue: messages come out in stream order, stream after stream, read where they lie;
// puts and get requests between them are stepped over (short messages on an inline path that
// hands over to the full walk); restored messages come first; a look at
// what is left takes nothing.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "queue.hpp"
#include "records.hpp"

using namespace bspg;

namespace {
std::string text(const Message& m) {
  return std::string(m.tag, m.tag_nbytes) + ":" + std::string(m.payload, m.payload_nbytes);
}

// Takes every message out, as bsp_get_tag and bsp_move do.
std::vector<std::string> drain(MessageQueue& queue) {
  std::vector<std::string> seen;
  while (queue.size() > 0) {
    seen.push_back(text(queue.front("test")));
    queue.pop();
  }
  return seen;
}
}  // namespace

TEST(MessageQueue, MessagesComeInStreamOrderAcrossStreamsWithPutsSteppedOver) {
  ByteBuffer first, second;
  pack_put(first, 1, 0, "xyz", 3);  // 4-aligned, not 8: a pad word goes before the message
  pack_message(first, "ab", 2, "hello", 5);
  pack_get(first, 2, 8, 16);
  pack_message(first, "longer tag", 10, "", 0);
  pad_to_8(first);
  pack_message(second, "t", 1, "world", 5);
  pack_put(second, 3, 4, "12345678", 8);
  pad_to_8(second);
  MessageQueue queue;
  queue.add_stream(0, first.data(), first.size(), 2, 5);
  queue.add_stream(1, second.data(), second.size(), 1, 5);
  EXPECT_EQ(queue.size(), 3u);
  EXPECT_EQ(queue.payload_bytes(), 10u);
  const Message& m = queue.front("test");
  EXPECT_EQ(text(m), "ab:hello");
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(m.payload) % 8, 0u);
  queue.pop();
  EXPECT_EQ(queue.payload_bytes(), 5u);
  EXPECT_EQ(drain(queue), (std::vector<std::string>{"longer tag:", "t:world"}));
}

TEST(MessageQueue, RemainingShowsWhatIsLeftWithoutTakingIt) {
  ByteBuffer stream;
  for (const char* word : {"one", "two", "three"}) pack_message(stream, "T", 1, word, 3);
  pad_to_8(stream);
  std::string restored_tag = "R", restored_payload = "zero";
  MessageQueue queue;
  queue.add_restored({restored_tag.data(), restored_payload.data(), 1, 4});
  queue.add_stream(4, stream.data(), stream.size(), 3, 9);
  EXPECT_EQ(text(queue.front("test")), "R:zero");
  queue.pop();
  EXPECT_EQ(text(queue.front("test")), "T:one");  // the walk has passed "one"
  std::vector<std::string> left;
  for (const Message& m : queue.remaining("test")) left.push_back(text(m));
  EXPECT_EQ(left, (std::vector<std::string>{"T:one", "T:two", "T:thr"}));
  EXPECT_EQ(queue.size(), 3u);
  EXPECT_EQ(drain(queue), left);
  queue.clear();
  EXPECT_EQ(queue.size(), 0u);
  EXPECT_EQ(queue.payload_bytes(), 0u);
}

TEST(MessageQueue, AStreamWithoutMessagesAddsNothing) {
  ByteBuffer stream;
  pack_put(stream, 1, 0, "abcd", 4);
  MessageQueue queue;
  queue.add_stream(2, stream.data(), stream.size(), 0, 0);
  EXPECT_EQ(queue.size(), 0u);
  EXPECT_TRUE(queue.remaining("test").empty());
}

TEST(MessageQueue, ShortMessagesComeOutInOrderStreamAfterStream) {
  // Records of one header word and a tag of at most 4 bytes, as most programs send: read on the
  // queue's inline path, which hands over to the full walk at a stream's end, a put, a pad word.
  ByteBuffer first, second, third;
  pack_message(first, "tag1", 4, "sixteen bytes!!!", 16);
  pack_message(first, "tag2", 4, "", 0);
  pack_message(first, "tag3", 4, "odd", 3);
  pad_to_8(first);
  pack_put(second, 1, 0, "abc", 3);  // then a pad word, then the message
  pack_message(second, "x", 1, "after a put", 11);
  pad_to_8(second);
  pack_message(third, nullptr, 0, "no tag", 6);
  pad_to_8(third);
  std::string restored_tag = "R", restored_payload = "first";
  MessageQueue queue;
  queue.add_restored({restored_tag.data(), restored_payload.data(), 1, 5});
  queue.add_stream(0, first.data(), first.size(), 3, 19);
  queue.add_stream(1, second.data(), second.size(), 1, 11);
  queue.add_stream(2, third.data(), third.size(), 1, 6);
  std::vector<std::string> seen;
  while (queue.size() > 0) {
    const Message& m = queue.front("test");
    if (m.payload_nbytes) {
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(m.payload) % 8, 0u);
    }
    seen.push_back(text(m));
    queue.pop();
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"R:first", "tag1:sixteen bytes!!!", "tag2:", "tag3:odd",
                                            "x:after a put", ":no tag"}));
  EXPECT_EQ(queue.payload_bytes(), 0u);
}
