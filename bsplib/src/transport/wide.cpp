// wide.cpp - a Transport's wide rounds: chunks as two-sided messages, the round ended by counting.
#include <algorithm>
#include <cstring>

#include "errors.hpp"
#include "transport.hpp"
#include "transport_internal.hpp"

namespace bspg {
using namespace transport_internal;  // the transport's own helpers (transport_internal.hpp)

// ---- The wide transport: chunks as messages, the round ended by counting -----------------------

namespace {
constexpr int kWideTag = 3000;  // + 2 * channel + parity: consecutive syncs never share a tag
}  // namespace

int Transport::wide_tag(int channel) const { return kWideTag + 2 * channel + parity_; }

void Transport::send_wide(ChunkKind kind, const Outgoing& chunk) {
  WideChannel& wide = wide_channels_[channel(kind)];
  Stream& stream = *chunk.stream;
  ByteBuffer& records = stream.records();  // makes sure the headroom exists
  const ChunkHeader header{static_cast<std::uint32_t>(kind),
                           static_cast<std::uint32_t>(pids_[static_cast<std::size_t>(rank_)]),
                           stream.length(), chunk.notes};
  std::memcpy(records.data(), &header, sizeof header);
  const char* bytes = records.data();
  std::size_t n = records.size();
  if (!stream.externals().empty()) {  // user memory (bsp_hpsend) goes into one message with it
    wide_laid_out_.emplace_back();
    ByteBuffer& laid = wide_laid_out_.back();
    std::size_t from = 0;
    for (const Stream::External& external : stream.externals()) {
      laid.append(records.data() + from, external.buffer_offset - from);
      laid.append(external.data, external.bytes);
      std::memset(laid.extend(external.padded - external.bytes), 0,
                  external.padded - external.bytes);
      from = external.buffer_offset;
    }
    laid.append(records.data() + from, records.size() - from);
    bytes = laid.data();
    n = laid.size();
  }
  if (n > kMaxTransferBytes)
    fail("bsp_sync",
         "this superstep sends %llu bytes to process %d in one piece; between nodes one superstep "
         "sends at most 1 GiB to one process",
         static_cast<unsigned long long>(n), pids_[static_cast<std::size_t>(chunk.dst)]);
  if (chunk.dst == rank_) {  // our own: straight into a receive buffer, no message
    std::vector<ByteBuffer>& chunks = wide.chunks[parity_];
    if (wide.used == chunks.size()) chunks.emplace_back();
    ByteBuffer& into = chunks[wide.used++];
    into.clear();
    into.append(bytes, n);
    return;
  }
  if (across_sites(chunk.dst)) across_sites_ += n;
  wide.sends.push_back(MPI_REQUEST_NULL);
  MPI_Isend(bytes, static_cast<int>(n), MPI_BYTE, chunk.dst, wide_tag(channel(kind)), comm_,
            &wide.sends.back());
}

void Transport::reply(const Outgoing& chunk) {
  if (!wide_) fail("bsp_sync", "internal error: an early reply on a one-sided transport");
  send_wide(ChunkKind::Reply, chunk);
}

Transport::Incoming Transport::wide_incoming(int channel, const ByteBuffer& chunk) const {
  ChunkHeader header;
  if (chunk.size() < sizeof header) fail("bsp_sync", "internal error: a chunk without a header");
  std::memcpy(&header, chunk.data(), sizeof header);
  const auto kind = static_cast<ChunkKind>(header.kind);
  if ((kind != ChunkKind::Stream && kind != ChunkKind::Reply) || Transport::channel(kind) != channel ||
      header.bytes % 8 || header.bytes != chunk.size() - sizeof header)
    fail("bsp_sync", "internal error: damaged chunk from process %u", header.src);
  return {static_cast<int>(header.src), kind, chunk.data() + sizeof header, header.bytes,
          header.notes};
}

void Transport::take_in_wide(int channel, const Arrival* on_arrival) {
  WideChannel& wide = wide_channels_[channel];
  std::vector<ByteBuffer>& chunks = wide.chunks[parity_];
  for (;;) {
    int arrived = 0;
    MPI_Message message;
    MPI_Status status;
    MPI_Improbe(MPI_ANY_SOURCE, wide_tag(channel), comm_, &arrived, &message, &status);
    if (!arrived) break;
    int n = 0;
    MPI_Get_count(&status, MPI_BYTE, &n);
    if (wide.used == chunks.size()) chunks.emplace_back();  // moving a ByteBuffer keeps its bytes
    ByteBuffer& into = chunks[wide.used];
    wide.receiving.push_back(wide.used++);
    into.clear();
    char* at = into.extend(static_cast<std::size_t>(n));
    wide.receives.push_back(MPI_REQUEST_NULL);
    MPI_Imrecv(at, n, MPI_BYTE, &message, &wide.receives.back());
  }
  if (wide.receives.empty()) return;
  int done = 0;
  // Completed requests become MPI_REQUEST_NULL: each is counted, and shown, once.
  std::vector<int> indices(wide.receives.size());
  MPI_Testsome(static_cast<int>(wide.receives.size()), wide.receives.data(), &done,
               indices.data(), MPI_STATUSES_IGNORE);
  if (done == MPI_UNDEFINED) return;
  wide.received += static_cast<std::uint64_t>(done);
  if (on_arrival)
    for (int i = 0; i < done; ++i)
      (*on_arrival)(wide_incoming(
          channel, chunks[wide.receiving[static_cast<std::size_t>(indices[static_cast<std::size_t>(i)])]]));
}

void Transport::round_wide(const std::vector<Outgoing>& out, std::uint64_t* words, int nwords,
                           const Arrival* on_arrival, std::uint64_t replies) {
  // Channels this round carries: its own, and with early replies the reply channel too.
  const int last = on_arrival ? 1 : channel_;
  for (int c = channel_; c <= last; ++c) {
    WideChannel& wide = wide_channels_[c];
    wide.received = 0;
    wide.sends.clear();
    wide.receives.clear();
    wide.receiving.clear();
  }
  WideChannel& own = wide_channels_[channel_];
  const std::size_t first = own.used;
  // A small group also sums, per process, the chunks it is sent (one word each): every process
  // then knows after the first reduction how many chunks to wait for, and no second reduction
  // confirms (a wide-area round trip saved where the first one overtook the data). Early
  // replies need no word: each answers one chunk this process sent, and the caller counted
  // those (`replies`), so a get costs the request's way there and the reply's way back, both
  // within the reduction's own wide-area step and the one after it. In larger groups (a word
  // per process in every reduction would be too many) the sums must agree instead.
  const std::size_t group = pids_.size();
  const bool exact = group <= kMaxExactCountProcesses;
  sent_to_.assign(exact ? group : 0, 0);
  for (const Outgoing& chunk : out) {
    send_wide(kind_, chunk);
    if (exact && chunk.dst != rank_) ++sent_to_[static_cast<std::size_t>(chunk.dst)];
  }
  if (on_arrival)  // ours, which no message brings
    for (std::size_t i = first; i < own.used; ++i)
      (*on_arrival)(wide_incoming(channel_, own.chunks[parity_][i]));

  // The caller's words (MAX), then per channel the chunks sent and received (summed): once the
  // sums agree, every chunk of the round has arrived. The first reduction travels with the data;
  // where it overtook a chunk, another follows (or, exact, this process waits for its count).
  const int channels = last - channel_ + 1;
  const auto count = static_cast<std::size_t>(nwords + 2 * channels) + sent_to_.size();
  std::unique_ptr<MaxReduction>& reduction = reductions_[channel_];
  if (!reduction || static_cast<std::size_t>(reduction->words()) != count)
    reduction = std::make_unique<MaxReduction>(
        comm_, static_cast<int>(count), 1000 + 100 * channel_,
        2 * channels + static_cast<int>(sent_to_.size()), sites_);
  const auto take_in = [this, on_arrival, last] {
    for (int c = channel_; c <= last; ++c) take_in_wide(c, c == channel_ ? on_arrival : nullptr);
  };
  const std::function<void()> meanwhile = take_in;
  for (;;) {
    take_in();
    words_.assign(words, words + nwords);
    // Sends counted after the receives: a reply sent for a request just received counts now.
    for (int c = channel_; c <= last; ++c) {
      words_.push_back(wide_channels_[c].sends.size());
      words_.push_back(wide_channels_[c].received);
    }
    words_.insert(words_.end(), sent_to_.begin(), sent_to_.end());
    reduction->run(words_.data(), &meanwhile);
    metadata_ += reduction->bytes_per_run();
    if (exact) {
      // Every chunk sent to this process was counted before the reduction, and every reply it
      // is owed by the caller: wait for them all (serving the chunks as they come, so that the
      // replies others wait for leave here).
      const std::uint64_t expected = words_[static_cast<std::size_t>(nwords + 2 * channels + rank_)];
      const WideChannel& answers = wide_channels_[last];
      const std::uint64_t answers_expected = on_arrival ? replies : 0;
      IdlePacer pacer;
      for (;;) {
        const std::uint64_t before = own.received + answers.received;
        take_in();
        if (own.received >= expected && (!on_arrival || answers.received >= answers_expected))
          break;
        if (own.received + answers.received != before) pacer.reset();
        pacer.idle();
      }
      break;
    }
    bool all_arrived = true;
    for (int c = 0; c < channels; ++c)
      all_arrived = all_arrived && words_[static_cast<std::size_t>(nwords + 2 * c)] ==
                                       words_[static_cast<std::size_t>(nwords + 2 * c + 1)];
    if (all_arrived) break;
  }
  std::copy(words_.begin(), words_.begin() + nwords, words);
  for (int c = channel_; c <= last; ++c) {
    WideChannel& wide = wide_channels_[c];
    // Every chunk was received, so every send is matched; its completion is at hand.
    if (!wide.sends.empty()) wait_idle(static_cast<int>(wide.sends.size()), wide.sends.data());
    std::vector<Incoming>& incoming = incoming_[c];
    incoming.clear();
    for (std::size_t i = 0; i < wide.used; ++i)
      incoming.push_back(wide_incoming(c, wide.chunks[parity_][i]));
    std::sort(incoming.begin(), incoming.end(),
              [](const Incoming& a, const Incoming& b) { return a.src < b.src; });
    metadata_ += (wide.sends.size() + incoming.size()) * sizeof(ChunkHeader);
  }
  wide_laid_out_.clear();
}

}  // namespace bspg
