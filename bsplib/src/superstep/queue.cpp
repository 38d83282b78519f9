// queue.cpp - see queue.hpp.
#include "queue.hpp"

#include <algorithm>
#include <cstring>

#include "errors.hpp"
#include "records.hpp"

namespace bspg {

void MessageQueue::clear() {
  restored_.clear();
  restored_head_ = 0;
  segments_.clear();
  cursor_ = Cursor{};
  have_front_ = false;
  count_ = 0;
  payload_bytes_ = 0;
}

void MessageQueue::add_stream(int src, const char* records, std::size_t length, std::uint64_t count,
                              std::uint64_t payload_bytes) {
  if (count == 0) return;
  segments_.push_back({src, records, length});
  count_ += count;
  payload_bytes_ += payload_bytes;
}

void MessageQueue::add_restored(const Message& message) {
  restored_.push_back(message);
  ++count_;
  payload_bytes_ += message.payload_nbytes;
}

void MessageQueue::next(Cursor& cursor, Message& message, const char* call) const {
  for (; cursor.segment < segments_.size(); ++cursor.segment, cursor.at = 0) {
    const Segment& s = segments_[cursor.segment];
    std::size_t& at = cursor.at;
    while (s.length - at >= kShortMessageHead) {
      // The reader is often another core than the one that wrote the records: see unpack_stream.
      __builtin_prefetch(s.records + std::min(at + kUnpackPrefetchBytes, s.length));
      const char* record = s.records + at;
      const std::uint32_t word0 = load_word(record);
      if (word0 == kPadWord) {
        at += 4;
        continue;
      }
      if ((word0 & 3u) == kShortMessage) {
        const std::size_t bytes = short_message_bytes(word0, at, s.length);
        if (bytes == 0) break;  // not a record: the stream is damaged
        at += bytes;
        take_short(record, word0, message);
        return;
      }
      if (s.length - at < kHeaderBytes) break;
      const std::uint32_t word1 = load_word(record + 4), word2 = load_word(record + 8);
      const std::uint32_t kind = word0 & 3u;
      std::size_t bytes = 0;
      if (kind == kPut)
        bytes = kHeaderBytes + align4(word2);
      else if (kind == kGet)
        bytes = kHeaderBytes;
      else if (kind == kMessage && at % 8 == 0)
        bytes = message_record_bytes(word1, word2);
      if (bytes == 0 || bytes > s.length - at) break;  // not a record: the stream is damaged
      at += bytes;
      if (kind != kMessage) continue;
      message.tag = record + (word1 <= kInlineTagBytes ? kHeaderBytes : align8(kHeaderBytes));
      message.payload = record + message_tag_end(word1);
      message.tag_nbytes = word1;
      message.payload_nbytes = word2;
      return;
    }
    // Only pad words may follow the last record.
    for (; s.length - at >= 4 && load_word(s.records + at) == kPadWord; at += 4) {
    }
    if (at != s.length)
      fail(call, "internal error: malformed message stream from process %d (offset %zu of %zu)",
           s.src, at, s.length);
  }
  fail(call, "internal error: fewer messages arrived than their senders said");
}

void MessageQueue::find_front(const char* call) {
  front_restored_ = restored_head_ < restored_.size();
  if (front_restored_)
    front_ = restored_[restored_head_];
  else
    next(cursor_, front_, call);
  have_front_ = true;
}

std::vector<Message> MessageQueue::remaining(const char* call) {
  std::vector<Message> messages;
  if (count_ == 0) return messages;
  messages.push_back(front(call));
  // After the front: the restored ones not yet read, then the streams from the walk's cursor.
  for (std::size_t r = restored_head_ + (front_restored_ ? 1 : 0); r < restored_.size(); ++r)
    messages.push_back(restored_[r]);
  Cursor cursor = cursor_;
  while (messages.size() < count_) next(cursor, messages.emplace_back(), call);
  return messages;
}

}  // namespace bspg
