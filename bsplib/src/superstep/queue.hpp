// queue.hpp - the messages a sync delivered (BSMP), in the order bsp_get_tag, bsp_move and
// bsp_hpmove read them: by sender pid, then in send order.
//
// The message records stay where the transport put them (the receive buffer, readable until the
// sync after the next begins) and are found one by one as the program reads them: a superstep's
// messages are walked once, by the reader, not once more by the sync to index them. Each sender
// says how many messages its stream holds and their payload bytes (bsp_qsize), so the sync reads
// none of a stream that holds messages alone; a stream that also holds puts is walked by the sync
// for those, and here the puts and get requests are stepped over.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "records.hpp"

namespace bspg {

struct Message {
  const char* tag;  // points into the receive buffer (or a restored checkpoint's copy)
  const char* payload;
  std::uint32_t tag_nbytes;
  std::uint32_t payload_nbytes;
};

class MessageQueue {
 public:
  void clear();
  // A stream from process src whose records hold `count` messages with `payload_bytes` of payload
  // in all (and maybe puts and get requests, which are stepped over).
  void add_stream(int src, const char* records, std::size_t length, std::uint64_t count,
                  std::uint64_t payload_bytes);
  // A message restored from a checkpoint: restored ones come before any stream's.
  void add_restored(const Message& message);

  std::uint64_t size() const { return count_; }
  std::uint64_t payload_bytes() const { return payload_bytes_; }
  // The first message; only when size() > 0. A stream that is not what its sender said stops the
  // job (an internal error, naming `call` and the sender).
  const Message& front(const char* call) {
    if (!have_front_) {
      if (restored_head_ == restored_.size() && next_short(front_)) {
        front_restored_ = false;
        have_front_ = true;
      } else {
        find_front(call);
      }
    }
    return front_;
  }
  // Takes the first message out (after front()).
  void pop() {
    payload_bytes_ -= front_.payload_nbytes;
    --count_;
    have_front_ = false;
    if (front_restored_) ++restored_head_;
  }
  // Every message still queued, in order, without taking any (for a checkpoint).
  std::vector<Message> remaining(const char* call);

 private:
  struct Segment {
    int src;
    const char* records;
    std::size_t length;
  };
  struct Cursor {
    std::size_t segment = 0;
    std::size_t at = 0;
  };
  // The next message at or after the cursor into `message`, field by field (a Message returned
  // whole and copied would be read back with loads wider than the stores that wrote it, a
  // store-forwarding stall per message); the cursor then points past it.
  void next(Cursor& cursor, Message& message, const char* call) const;
  // The common case, inline (bsp_get_tag and bsp_move run once per message, 100,000 times a
  // superstep in some programs): the walk's next record is a short message. False where it is
  // anything else (a pad word, a put, the end of a stream, damage): next() then decides.
  bool next_short(Message& message) {
    if (cursor_.segment >= segments_.size()) return false;
    const Segment& s = segments_[cursor_.segment];
    const std::size_t at = cursor_.at;
    if (s.length - at < kShortMessageHead) return false;
    // The reader is often another core than the one that wrote the records: see unpack_stream.
    __builtin_prefetch(s.records + std::min(at + kUnpackPrefetchBytes, s.length));
    const char* record = s.records + at;
    const std::uint32_t word0 = load_word(record);
    if (word0 == kPadWord || (word0 & 3u) != kShortMessage) return false;
    const std::size_t bytes = short_message_bytes(word0, at, s.length);
    if (bytes == 0) return false;
    cursor_.at = at + bytes;
    take_short(record, word0, message);
    return true;
  }
  // The short message record at `record`, whose first word is word0 (checked), into message.
  static void take_short(const char* record, std::uint32_t word0, Message& message) {
    message.tag = record + 4;
    message.payload = record + kShortMessageHead;
    message.tag_nbytes = short_message_tag_nbytes(word0);
    message.payload_nbytes = short_message_payload_nbytes(word0);
  }
  void find_front(const char* call);

  std::vector<Message> restored_;
  std::size_t restored_head_ = 0;
  std::vector<Segment> segments_;
  Cursor cursor_;  // where the walk for the message after front_ goes on
  Message front_{};
  bool have_front_ = false;
  bool front_restored_ = false;
  std::uint64_t count_ = 0;
  std::uint64_t payload_bytes_ = 0;
};

}  // namespace bspg
