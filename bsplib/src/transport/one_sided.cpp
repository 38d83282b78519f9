// one_sided.cpp - a Transport's one-sided rounds: MPI RMA, or copies in shared memory on one node.
#include <algorithm>
#include <cstring>

#include "copy.hpp"
#include "errors.hpp"
#include "transport.hpp"
#include "transport_internal.hpp"

namespace bspg {
namespace transport_internal {

void flush_each(std::vector<int>& targets, MPI_Win win) {
  std::sort(targets.begin(), targets.end());
  targets.erase(std::unique(targets.begin(), targets.end()), targets.end());
  for (int target : targets) MPI_Win_flush(target, win);
  targets.clear();
}

}  // namespace transport_internal

using namespace transport_internal;  // the transport's own helpers (transport_internal.hpp)

namespace {

constexpr std::uint64_t kGranule = std::uint64_t{64} * 1024;

// Runs `step` (a barrier, a reduction through MPI) so that plain stores into shared memory
// before it, here and in the other processes, are seen after it: a full fence on each side
// where `shared_memory` (MPI's messages order their own bytes, not ours).
template <typename Step>
void fenced(bool shared_memory, Step step) {
  if (shared_memory) __atomic_thread_fence(__ATOMIC_SEQ_CST);
  step();
  if (shared_memory) __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

std::uint64_t round_up(std::uint64_t n, std::uint64_t unit) { return (n + unit - 1) / unit * unit; }

}  // namespace

void Transport::put_chunk(const Outgoing& chunk, std::uint64_t offset) {
  Stream& stream = *chunk.stream;
  ByteBuffer& records = stream.records();  // makes sure the headroom exists
  ChunkHeader header{static_cast<std::uint32_t>(kind_),
                     static_cast<std::uint32_t>(pids_[static_cast<std::size_t>(rank_)]),
                     stream.length(), chunk.notes};
  std::memcpy(records.data(), &header, sizeof header);

  Buffer& buffer = buffers_[channel_][parity_];
  const bool self = chunk.dst == rank_;
  auto place = [&](std::uint64_t at, const char* data, std::uint64_t n) {
    if (n == 0) return;
    if (self || local_) {
      copy_for_reader(
          (local_ ? buffer.peers[static_cast<std::size_t>(chunk.dst)] : buffer.base) + at, data, n);
      return;
    }
    in_pieces(n, [&](std::uint64_t done, int piece) {
      MPI_Put(data + done, piece, MPI_BYTE, chunk.dst, static_cast<MPI_Aint>(at + done), piece,
              MPI_BYTE, buffer.win);
    });
  };
  // The buffer's bytes, with the externals (user memory) in their places.
  std::uint64_t at = offset;
  std::size_t from = 0;
  for (const Stream::External& external : stream.externals()) {
    place(at, stream.buffer() + from, external.buffer_offset - from);
    at += external.buffer_offset - from;
    place(at, external.data, external.bytes);
    at += external.padded;
    from = external.buffer_offset;
  }
  place(at, stream.buffer() + from, stream.buffer_size() - from);
  if (!self && !local_) touched_.push_back(chunk.dst);
  if (across_sites(chunk.dst)) across_sites_ += sizeof(ChunkHeader) + align8(stream.length());
}

void Transport::flush_targets() { flush_each(touched_, buffers_[channel_][parity_].win); }

void Transport::round(ChunkKind kind, const std::vector<Outgoing>& out, std::uint64_t* words,
                      int nwords, const Arrival* on_arrival, std::uint64_t replies) {
  if (!open_) open();
  kind_ = kind;
  channel_ = channel(kind);
  if (wide_) return round_wide(out, words, nwords, on_arrival, replies);
  if (!channel_open_[channel_]) open_channel(channel_);
  // The caller's words and "something is late".
  const auto count = static_cast<std::size_t>(nwords) + 1;
  // Tags: each reduction its own range, so that none can take another's messages.
  std::unique_ptr<MaxReduction>& reduction = reductions_[channel_];
  if (!reduction || static_cast<std::size_t>(reduction->words()) != count)
    reduction = std::make_unique<MaxReduction>(
        comm_, static_cast<int>(count), 1000 + 100 * channel_, 0, std::vector<int>{}, local_);
  if (local_ && reduction->shared()) return round_parts(out, words, nwords, *reduction);
  const std::size_t n = out.size();
  sizes_.resize(n);
  offsets_.assign(n, 0);
  requests_.resize(n);
  // Reserve room in every receiver's buffer: one atomic fetch-and-add each.
  for (std::size_t i = 0; i < n; ++i) {
    sizes_[i] = sizeof(ChunkHeader) + align8(out[i].stream->length());
    if (local_)
      offsets_[i] =
          __atomic_fetch_add(&counter_peers_[static_cast<std::size_t>(out[i].dst)][counter_index()],
                             sizes_[i], __ATOMIC_ACQ_REL);
    else
      MPI_Rget_accumulate(&sizes_[i], 1, MPI_UINT64_T, &offsets_[i], 1, MPI_UINT64_T, out[i].dst,
                          counter_index(), 1, MPI_UINT64_T, MPI_SUM, counters_, &requests_[i]);
  }
  if (n && !local_) wait_idle(static_cast<int>(n), requests_.data());

  // Place what fits; what does not waits for the buffer to grow.
  std::vector<std::size_t> late;
  for (std::size_t i = 0; i < n; ++i) {
    if (offsets_[i] + sizes_[i] <=
        capacity_[channel_][parity_][static_cast<std::size_t>(out[i].dst)])
      put_chunk(out[i], offsets_[i]);
    else
      late.push_back(i);
  }
  flush_targets();

  words_.assign(words, words + nwords);
  words_.push_back(late.empty() ? 0 : 1);
  // Shared memory: the copies above before the reduction, what others copied here after it. A
  // reduction through shared memory orders them itself; MPI's messages need the fences.
  fenced(local_ && !reduction->shared(), [&] { reduction->run(words_.data()); });
  std::copy(words_.begin(), words_.begin() + nwords, words);
  if (words_[count - 1]) grow(late, out);

  // Metadata: chunk headers and the counter's fetch-and-add both ways, and the reduction's rounds.
  metadata_ += n * (sizeof(ChunkHeader) + 2 * sizeof(std::uint64_t));
  metadata_ += reduction->bytes_per_run();
  scan();
  metadata_ += incoming_[channel_].size() * (sizeof(ChunkHeader) + 2 * sizeof(std::uint64_t));
}

// How much of an arriving chunk round_parts asks for ahead of its reader (who prefetches on from
// there as it walks).
constexpr std::uint64_t kArrivalPrefetchBytes = 1024;

// Prefetches the lines of [at + from, at + to), up to kArrivalPrefetchBytes from at.
static void prefetch_lines(const char* at, std::uint64_t from, std::uint64_t to) {
  to = std::min(to, kArrivalPrefetchBytes);
  for (std::uint64_t line = from / 64 * 64; line < to; line += 64) __builtin_prefetch(at + line);
}

void Transport::round_parts(const std::vector<Outgoing>& out, std::uint64_t* words, int nwords,
                            MaxReduction& reduction) {
  const auto q = static_cast<std::size_t>(size());
  notes_.assign(q, 0);
  std::uint64_t part = part_bytes(), late = 0;
  for (const Outgoing& chunk : out) {
    const std::uint64_t bytes = sizeof(ChunkHeader) + align8(chunk.stream->length());
    std::uint64_t& note = notes_[static_cast<std::size_t>(chunk.dst)];
    if (note) fail("bsp_sync", "internal error: two chunks for one process in one round");
    note = bytes;
    if (bytes <= part)
      put_chunk(chunk, static_cast<std::uint64_t>(rank_) * part);
    else
      late = std::max(late, bytes);
  }
  // The last word: the largest part a chunk needed that did not fit (times two), plus one where
  // something was sent. A process that asks for none of the notes reads nothing more.
  words_.assign(words, words + nwords);
  words_.push_back(late << 1 | (out.empty() ? 0 : 1));
  reduction.run(words_.data(), nullptr, notes_.data());
  std::copy(words_.begin(), words_.begin() + nwords, words);
  const std::uint64_t agreed = words_[static_cast<std::size_t>(nwords)];
  if (agreed >> 1) {
    // Somebody's chunk did not fit: every buffer of this round grows until each part holds the
    // largest (capacities stay equal everywhere), and every chunk is placed again.
    const std::uint64_t old_capacity = capacity_[channel_][parity_][0];
    const std::uint64_t capacity =
        round_up(std::max((agreed >> 1) * q, old_capacity + old_capacity / 2), kGranule);
    Buffer old = buffers_[channel_][parity_];
    allocate(channel_, parity_, capacity);
    MPI_Win_unlock_all(old.win);
    MPI_Win_free(&old.win);
    capacity_[channel_][parity_].assign(q, capacity);
    part = part_bytes();
    for (const Outgoing& chunk : out) put_chunk(chunk, static_cast<std::uint64_t>(rank_) * part);
    fenced(true, [&] { barrier(); });
  }
  std::vector<Incoming>& incoming = incoming_[channel_];
  incoming.clear();
  if (agreed & 1) {
    const char* base = buffers_[channel_][parity_].base;
    // Each part's lines on their way while the notes are read (they come from other cores): as
    // many as that sender's last chunk took (programs repeat their supersteps), at least the
    // first, at most kArrivalPrefetchBytes (the walk prefetches on from there); then the rest of
    // those lines once a note says more came. Otherwise the walk would ask for its second line
    // only after the first arrived: one more core-to-core transfer time in every superstep that
    // moves data, which is most of what it costs beyond an empty one.
    std::vector<std::uint64_t>& guessed = last_chunk_bytes_[channel_];
    guessed.resize(q, 0);
    for (std::size_t r = 0; r < q; ++r)
      prefetch_lines(base + r * part, 0, std::max<std::uint64_t>(guessed[r], 1));
    for (int r = 0; r < size(); ++r) {  // group rank order is pid order
      const std::uint64_t bytes = reduction.note_from(r);
      const char* at = base + static_cast<std::uint64_t>(r) * part;
      std::uint64_t& guess = guessed[static_cast<std::size_t>(r)];
      if (bytes > guess) prefetch_lines(at, std::max<std::uint64_t>(guess, 1), bytes);
      guess = bytes;
      if (!bytes) continue;
      ChunkHeader header;
      if (bytes < sizeof header || bytes > part ||
          (std::memcpy(&header, at, sizeof header),
           header.kind != static_cast<std::uint32_t>(kind_)) ||
          sizeof header + header.bytes != bytes)
        fail("bsp_sync", "internal error: damaged chunk from group rank %d in the receive buffer",
             r);
      incoming.push_back(
          {static_cast<int>(header.src), kind_, at + sizeof header, header.bytes, header.notes});
    }
  }
  // Metadata: chunk headers and the notes of their sizes both ways, and the reduction's words.
  metadata_ +=
      out.size() * (sizeof(ChunkHeader) + sizeof(std::uint64_t)) + reduction.bytes_per_run();
  metadata_ += incoming.size() * (sizeof(ChunkHeader) + sizeof(std::uint64_t));
}

void Transport::grow(const std::vector<std::size_t>& late, const std::vector<Outgoing>& out) {
  MPI_Win_sync(counters_);
  const std::uint64_t needed = counter_base_[counter_index()];
  const auto me = static_cast<std::size_t>(rank_);
  const std::uint64_t old_capacity = capacity_[channel_][parity_][me];
  std::uint64_t capacity = old_capacity;
  if (needed > capacity) capacity = round_up(std::max(needed, capacity + capacity / 2), kGranule);
  std::vector<std::uint64_t> capacities(static_cast<std::size_t>(size()));
  MPI_Allgather(&capacity, 1, MPI_UINT64_T, capacities.data(), 1, MPI_UINT64_T, comm_);
  // Every process needs a buffer at least this large, so somebody grows: a new window for all.
  Buffer old = buffers_[channel_][parity_];
  allocate(channel_, parity_, capacity);
  MPI_Win_sync(old.win);
  std::memcpy(buffers_[channel_][parity_].base, old.base, std::min(needed, old_capacity));
  MPI_Win_unlock_all(old.win);
  MPI_Win_free(&old.win);
  capacity_[channel_][parity_] = std::move(capacities);
  MPI_Win_sync(buffers_[channel_][parity_].win);
  barrier();  // every buffer holds its early chunks before the late ones arrive
  for (std::size_t i : late) put_chunk(out[i], offsets_[i]);
  flush_targets();
  fenced(local_, [&] { barrier(); });
}

void Transport::scan() {
  // The counter is only ever changed atomically (by other processes' fetch-and-adds through shared
  // memory, or by this process's own MPI progress): an acquire load sees every reservation of the
  // round. The buffer needs MPI's memory barrier only when something arrived.
  const std::uint64_t end = __atomic_load_n(&counter_base_[counter_index()], __ATOMIC_ACQUIRE);
  std::vector<Incoming>& incoming = incoming_[channel_];
  incoming.clear();
  if (end == 0) return;
  if (!local_) MPI_Win_sync(buffers_[channel_][parity_].win);
  const char* base = buffers_[channel_][parity_].base;
  std::uint64_t at = 0;
  while (at < end) {
    ChunkHeader header;
    if (end - at < sizeof header) break;
    std::memcpy(&header, base + at, sizeof header);
    const auto kind = static_cast<ChunkKind>(header.kind);
    if (kind != kind_ || header.bytes % 8 || header.bytes > end - at - sizeof header)
      fail("bsp_sync", "internal error: damaged chunk in the receive buffer at offset %llu",
           static_cast<unsigned long long>(at));
    incoming.push_back({static_cast<int>(header.src), kind, base + at + sizeof header,
                        header.bytes, header.notes});
    at += sizeof header + header.bytes;
  }
  if (at != end) fail("bsp_sync", "internal error: receive buffer ends inside a chunk");
  std::sort(incoming.begin(), incoming.end(),
            [](const Incoming& a, const Incoming& b) { return a.src < b.src; });
}

}  // namespace bspg
