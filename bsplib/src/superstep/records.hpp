// records.hpp - what a stream says (BSPlib semantics). Everything a process sends one peer in a
// superstep (puts, get requests, messages) is a sequence of records in one Stream (stream.hpp),
// which the transport moves as one chunk; get replies travel back as plain bytes.
//
// Record layout (native byte order; all processes of a job share an architecture). Every record
// starts 4-aligned:
//   put:          u32 (slot << 2 | kPut)  u32 offset  u32 nbytes  payload[nbytes]  pad to 4
//   get request:  u32 (slot << 2 | kGet)  u32 offset  u32 nbytes
//   message:      u32 kMessage  u32 tag_nbytes  u32 payload_nbytes  tag or pad (4 bytes)
//                 [tag[tag_nbytes] pad to 8, for tags of more than 4 bytes]
//                 payload[payload_nbytes] pad to 8
//                 (a tag of up to 4 bytes, the common int, fills the header's fourth word)
//   pad word:     u32 0xffffffff (kind bits 3: no record has them)
// A mailbox region (transport.hpp) holds puts, and lent puts (lending.hpp):
//   lent put:     u32 (slot << 2 | kGet)  u32 offset  u32 nbytes  u64 address in the sender
//                 (no get request is ever in a mailbox, so its kind says "lent" there; nbytes
//                 with kLiveBit: a bsp_hpput's source, read where it lies before any put lands)
// Messages start 8-aligned (a pad word goes before one when needed) and every stream is padded to
// a multiple of 8, so message payloads are 8-aligned in the receive window for bsp_hpmove.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "copy.hpp"
#include "stream.hpp"

namespace bspg {

enum RecordKind : std::uint32_t { kPut = 0, kGet = 1, kMessage = 2, kShortMessage = 3 };

constexpr std::size_t kHeaderBytes = 12;
constexpr std::uint32_t kPadWord = 0xffffffffu;
// How far ahead unpack_stream prefetches: 16 cache lines (about 50 single-word put records).
constexpr std::size_t kUnpackPrefetchBytes = 1024;

// memcpy with the common word sizes unrolled: single-word puts are the hot path of many BSP
// programs, and a libc call per word costs more than the copy.
inline void copy_bytes(void* dst, const void* src, std::size_t n) {
  switch (n) {
    case 4:
      std::memcpy(dst, src, 4);
      return;
    case 8:
      std::memcpy(dst, src, 8);
      return;
    case 16:
      std::memcpy(dst, src, 16);
      return;
    default:
      if (n >= kMidChosenBytes) return stream_copies().copy(dst, src, n);
      std::memcpy(dst, src, n);
  }
}

// One 4-byte word of a record.
inline std::uint32_t load_word(const char* at) {
  std::uint32_t w;
  std::memcpy(&w, at, 4);
  return w;
}

// Three separate stores: building the header in a local array and copying it would make the CPU
// forward two 4-byte stores into one 8-byte load, a stall that cost half of bsp_put's time.
inline void write_header(char* at, std::uint32_t word0, std::uint32_t word1, std::uint32_t word2) {
  std::memcpy(at, &word0, 4);
  std::memcpy(at + 4, &word1, 4);
  std::memcpy(at + 8, &word2, 4);
}

inline void pack_put(ByteBuffer& out, int slot, std::uint32_t offset, const void* src,
                     std::uint32_t nbytes) {
  char* at = out.extend(kHeaderBytes + align4(nbytes));
  write_header(at, static_cast<std::uint32_t>(slot) << 2 | kPut, offset, nbytes);
  copy_bytes(at + kHeaderBytes, src, nbytes);
}

// A put into a stream. One that continues the stream's last record (a put into the same area
// whose bytes end where this one's begin, a multiple of 4 long so that no padding lies between)
// grows that record instead: a run of single-word puts to consecutive words travels as one
// record, 8 bytes a word instead of 20, what a wide-area link carries in fewer round trips. The
// receiver applies it as the puts would have been (the ranges are adjacent, in order).
inline void pack_put(Stream& out, int slot, std::uint32_t offset, const void* src,
                     std::uint32_t nbytes) {
  ByteBuffer& buf = out.records();
  const std::uint32_t word0 = static_cast<std::uint32_t>(slot) << 2 | kPut;
  if (const std::size_t last = out.last_put(); last != 0) {
    // The last record's header, written by the last put's three 4-byte stores: read back as three
    // 4-byte loads (a wider one cannot take its bytes from two stores still on their way to the
    // cache and waits for them, which cost a third of a single-word put).
    const char* head = buf.data() + last;
    const std::uint32_t head0 = load_word(head), head1 = load_word(head + 4),
                        head2 = load_word(head + 8);
    if (head0 == word0 && head2 % 4 == 0 && last + kHeaderBytes + head2 == buf.size() &&
        head1 + head2 == offset && head1 <= offset && nbytes < (1u << 30) && head2 < (1u << 30)) {
      char* at = buf.extend(align4(nbytes));
      copy_bytes(at, src, nbytes);
      const std::uint32_t grown = head2 + nbytes;
      std::memcpy(buf.data() + last + 8, &grown, 4);
      if (nbytes % 4) out.set_last_put(0);  // padded now: nothing may follow inside it
      return;
    }
  }
  out.set_last_put(buf.size());
  pack_put(buf, slot, offset, src, nbytes);
}

inline void pack_get(ByteBuffer& out, int slot, std::uint32_t offset, std::uint32_t nbytes) {
  write_header(out.extend(kHeaderBytes), static_cast<std::uint32_t>(slot) << 2 | kGet, offset,
               nbytes);
}

// Tags up to this size lie in the message header's fourth word.
constexpr std::uint32_t kInlineTagBytes = 4;

// A message whose tag fits that word and whose payload is under kShortPayloadLimit takes one
// header word instead of three: kind, tag size (3 bits) and payload size (27 bits), then the tag
// word, then the payload (8-aligned). A 16-byte message with an int tag is then a record of 24
// bytes instead of 32, as many as a program packing (tag, size, payload) itself would send.
// The word never reads as kPadWord (a tag size of at most 4 leaves a zero among bits 2..4).
constexpr std::uint32_t kShortPayloadLimit = 1u << 27;
constexpr std::size_t kShortMessageHead = 8;
inline bool is_short_message(std::uint32_t tag_nbytes, std::uint32_t payload_nbytes) {
  return tag_nbytes <= kInlineTagBytes && payload_nbytes < kShortPayloadLimit;
}
inline std::uint32_t short_message_tag_nbytes(std::uint32_t word0) { return word0 >> 2 & 7u; }
inline std::uint32_t short_message_payload_nbytes(std::uint32_t word0) { return word0 >> 5; }
// The bytes of the short message record that starts with word0 at offset `at` of a stream of
// `length` bytes; 0 where it is no well-formed one (not 8-aligned, running past the end, a tag
// size over 4): the stream is damaged.
inline std::size_t short_message_bytes(std::uint32_t word0, std::size_t at, std::size_t length) {
  const std::size_t bytes = kShortMessageHead + align8(short_message_payload_nbytes(word0));
  return at % 8 || bytes > length - at || short_message_tag_nbytes(word0) > kInlineTagBytes ? 0
                                                                                            : bytes;
}

// Where a message's tag ends, from the record's start: its payload begins there.
inline std::size_t message_tag_end(std::uint32_t tag_nbytes) {
  return tag_nbytes <= kInlineTagBytes ? align8(kHeaderBytes)
                                       : align8(kHeaderBytes) + align8(tag_nbytes);
}

inline std::size_t message_record_bytes(std::uint32_t tag_nbytes, std::uint32_t payload_nbytes) {
  return message_tag_end(tag_nbytes) + align8(payload_nbytes);
}

// Appends pad words until the stream length is a multiple of 8 (streams are always 4-aligned).
inline void pad_to_8(ByteBuffer& out) {
  if (out.size() % 8) std::memcpy(out.extend(4), &kPadWord, 4);
}

// A message record's header and tag, with room for `room` bytes after them: where those go.
inline char* pack_message_head(ByteBuffer& out, const void* tag, std::uint32_t tag_nbytes,
                               std::uint32_t payload_nbytes, std::size_t room) {
  pad_to_8(out);
  if (is_short_message(tag_nbytes, payload_nbytes)) {
    char* at = out.extend(kShortMessageHead + room);
    const std::uint32_t word0 = payload_nbytes << 5 | tag_nbytes << 2 | kShortMessage;
    std::memcpy(at, &word0, 4);
    std::memcpy(at + 4, &kPadWord, 4);  // defined bytes after a short tag
    if (tag_nbytes) copy_bytes(at + 4, tag, tag_nbytes);
    return at + kShortMessageHead;
  }
  const std::size_t tag_end = message_tag_end(tag_nbytes);
  char* at = out.extend(tag_end + room);
  write_header(at, kMessage, tag_nbytes, payload_nbytes);
  if (tag_nbytes <= kInlineTagBytes) {
    std::memcpy(at + kHeaderBytes, &kPadWord, 4);  // defined bytes after a short tag
    if (tag_nbytes) copy_bytes(at + kHeaderBytes, tag, tag_nbytes);
  } else {
    copy_bytes(at + align8(kHeaderBytes), tag, tag_nbytes);
  }
  return at + tag_end;
}

inline void pack_message(ByteBuffer& out, const void* tag, std::uint32_t tag_nbytes,
                         const void* payload, std::uint32_t payload_nbytes) {
  char* at = pack_message_head(out, tag, tag_nbytes, payload_nbytes, align8(payload_nbytes));
  if (payload_nbytes) copy_bytes(at, payload, payload_nbytes);
}

// The same record, but the payload stays in the sender's memory until the stream moves
// (bsp_hpsend): the receiver sees an ordinary message.
inline void pack_message_unbuffered(Stream& out, const void* tag, std::uint32_t tag_nbytes,
                                    const void* payload, std::uint32_t payload_nbytes) {
  pack_message_head(out.records(), tag, tag_nbytes, payload_nbytes, 0);
  out.add_external(payload, payload_nbytes);
}

constexpr std::size_t kLentRecordBytes = kHeaderBytes + 8;
constexpr std::uint32_t kLiveBit = 1u << 31;

// Walks one mailbox region: on_put(slot, offset, payload, nbytes) for a put, on_lent(slot,
// offset, address, nbytes, live) for a lent put. Returns false on a malformed region.
template <class OnPut, class OnLent>
bool unpack_mailbox(const char* region, std::size_t length, OnPut&& on_put, OnLent&& on_lent) {
  std::size_t at = 0;
  while (at < length) {
    if (length - at < kHeaderBytes) return false;
    const std::uint32_t word0 = load_word(region + at), word1 = load_word(region + at + 4),
                        word2 = load_word(region + at + 8);
    const int slot = static_cast<int>(word0 >> 2);
    if ((word0 & 3u) == kPut) {
      if (length - at - kHeaderBytes < align4(word2)) return false;
      on_put(slot, word1, region + at + kHeaderBytes, word2);
      at += kHeaderBytes + align4(word2);
    } else if ((word0 & 3u) == kGet) {
      if (length - at < kLentRecordBytes) return false;
      std::uint64_t address;
      std::memcpy(&address, region + at + kHeaderBytes, 8);
      on_lent(slot, word1, reinterpret_cast<const char*>(static_cast<std::uintptr_t>(address)),
              word2 & ~kLiveBit, (word2 & kLiveBit) != 0);
      at += kLentRecordBytes;
    } else {
      return false;
    }
  }
  return true;
}

// The live lent puts at the start of a mailbox region (a bsp_hpput's come before its sender's
// other records for that receiver): on_live(slot, offset, address, nbytes) for each.
template <class OnLive>
void unpack_live_prefix(const char* region, std::size_t length, OnLive&& on_live) {
  for (std::size_t at = 0; length - at >= kLentRecordBytes; at += kLentRecordBytes) {
    const std::uint32_t word0 = load_word(region + at), word2 = load_word(region + at + 8);
    if ((word0 & 3u) != kGet || !(word2 & kLiveBit)) return;
    std::uint64_t address;
    std::memcpy(&address, region + at + kHeaderBytes, 8);
    on_live(static_cast<int>(word0 >> 2), load_word(region + at + 4),
            reinterpret_cast<const char*>(static_cast<std::uintptr_t>(address)), word2 & ~kLiveBit);
  }
}

// Walks one stream. Calls on_put(slot, offset, payload, nbytes), on_get(slot, offset, nbytes),
// on_message(tag, tag_nbytes, payload, payload_nbytes). Returns false on a malformed stream.
template <class OnPut, class OnGet, class OnMessage>
bool unpack_stream(const char* stream, std::size_t length, OnPut&& on_put, OnGet&& on_get,
                   OnMessage&& on_message) {
  std::size_t at = 0;
  // The first lines all at once: a short stream (a few puts) then costs one core-to-core transfer
  // time, not one per line; the walk below keeps the same distance ahead.
  for (std::size_t line = 0; line < std::min(length, kUnpackPrefetchBytes); line += 64)
    __builtin_prefetch(stream + line);
  while (at < length) {
    // Where the next record starts depends on this one's header, so without help the walk waits
    // for one cache line after another; a stream written by another core (the transport's put into
    // the receive buffer) then costs a core-to-core transfer per line, 3x the local walk, and a
    // latency that changes with where the writer's lines sit (its L1 or L2), which bent bspbench's
    // T(h). Prefetching a fixed distance ahead keeps the walk linear in h (clamped: no pointer past
    // the end).
    __builtin_prefetch(stream + std::min(at + kUnpackPrefetchBytes, length));
    // Each header word is its own 4-byte load: copying the header into an array and reading two
    // of its words as one 8-byte value would stall on store forwarding for every record.
    const auto word = [stream](std::size_t i) { return load_word(stream + i); };
    const std::uint32_t word0 = word(at);
    if ((word0 & 3u) == kShortMessage && word0 != kPadWord) {
      const std::size_t record = short_message_bytes(word0, at, length);
      if (record == 0) return false;
      on_message(stream + at + 4, short_message_tag_nbytes(word0), stream + at + kShortMessageHead,
                 short_message_payload_nbytes(word0));
      at += record;
      continue;
    }
    if (length - at < kHeaderBytes) {
      // Only pad words may end a stream in less than a header.
      if ((length - at) % 4) return false;
      for (; at < length; at += 4)
        if (word(at) != kPadWord) return false;
      return true;
    }
    if (word0 == kPadWord) {
      at += 4;
      continue;
    }
    const std::uint32_t word1 = word(at + 4), word2 = word(at + 8);
    std::uint32_t kind = word0 & 3u;
    int slot = static_cast<int>(word0 >> 2);
    if (kind == kPut) {
      if (length - at - kHeaderBytes < align4(word2)) return false;
      on_put(slot, word1, stream + at + kHeaderBytes, word2);
      at += kHeaderBytes + align4(word2);
    } else if (kind == kGet) {
      on_get(slot, word1, word2);
      at += kHeaderBytes;
    } else if (kind == kMessage) {
      std::size_t record = message_record_bytes(word1, word2);
      if (at % 8 || length - at < record) return false;
      const char* tag =
          stream + at + (word1 <= kInlineTagBytes ? kHeaderBytes : align8(kHeaderBytes));
      on_message(tag, word1, stream + at + message_tag_end(word1), word2);
      at += record;
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace bspg
