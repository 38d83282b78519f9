// hrelation.cpp - see hrelation.h.
#include "hrelation.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "bsp.h"

namespace bench {
namespace {

// Values are >= 0, so a negative word in the receive array was never written.
constexpr double kPoison = -1.0;
constexpr double kPositions = static_cast<double>(kMaxWords + 1);

// Compares positions [0, end) of recv with what should be there: this repetition's word
// from source_of(i) below h, the poison above it.
template <typename SourceOf>
std::string check_words(const Pattern& pattern, const std::vector<double>& recv, long h, long end,
                        int rep, SourceOf source_of) {
  for (long i = 0; i < end; ++i) {
    const bool sent = i < h;
    const int src = sent ? source_of(i) : -1;
    const double expected = sent ? pattern.value(rep, src, i) : kPoison;
    if (recv[i] == expected) continue;
    char why[200];
    if (sent) {
      std::snprintf(why, sizeof why,
                    "word %ld from process %d holds %.17g instead of %.17g (h = %ld, "
                    "repetition %d)",
                    i, src, recv[i], expected, h, rep);
    } else {
      std::snprintf(why, sizeof why,
                    "word %ld was written although only %ld words were sent (repetition %d)", i, h,
                    rep);
    }
    return why;
  }
  return "";
}

}  // namespace

Pattern::Pattern(int nprocs, int pid) : nprocs_(nprocs), pid_(pid) {}

int Pattern::dest(int k) const { return (pid_ + 1 + k) % nprocs_; }

int Pattern::source(int k) const { return ((pid_ - 1 - k) % nprocs_ + nprocs_) % nprocs_; }

double Pattern::value(int rep, int src, long i) const {
  return (static_cast<double>(rep % 4096) * nprocs_ + src) * kPositions + static_cast<double>(i);
}

// --- single-word puts ----------------------------------------------------------------------

WordRelation::WordRelation(long hmax)
    : pattern_(bsp_nprocs(), bsp_pid()),
      hmax_(hmax),
      send_(hmax),
      recv_(hmax, kPoison),
      packed_(hmax),
      unpacked_(hmax),
      send_counts_(bsp_nprocs()),
      send_offsets_(bsp_nprocs()),
      recv_counts_(bsp_nprocs()),
      recv_offsets_(bsp_nprocs()),
      fill_(bsp_nprocs()) {
  for (int k = 0; k < pattern_.ndest(); ++k) dests_.push_back(pattern_.dest(k));
  MPI_Type_contiguous(sizeof(IndexedWord), MPI_BYTE, &pair_type_);
  MPI_Type_commit(&pair_type_);
  bsp_push_reg(recv_.data(), static_cast<int>(hmax_ * sizeof(double)));
}

void WordRelation::prepare(long h, int rep) {
  for (long i = 0; i < h; ++i) send_[i] = pattern_.value(rep, bsp_pid(), i);
  const long end = std::min(h + pattern_.ndest(), hmax_);
  std::fill(recv_.begin(), recv_.begin() + end, kPoison);
}

void WordRelation::exchange_bspg(long h) {
  const int ndest = pattern_.ndest();
  int k = 0;
  for (long i = 0; i < h; ++i) {
    bsp_put(dests_[k], &send_[i], recv_.data(), static_cast<int>(i * sizeof(double)),
            sizeof(double));
    if (++k == ndest) k = 0;
  }
  bsp_sync();
}

void WordRelation::exchange_raw(long h) {
  const int nprocs = bsp_nprocs(), ndest = pattern_.ndest();
  // Count per destination, then pack each word with its index in the receiver's array.
  std::fill(send_counts_.begin(), send_counts_.end(), 0);
  int k = 0;
  for (long i = 0; i < h; ++i) {
    ++send_counts_[dests_[k]];
    if (++k == ndest) k = 0;
  }
  int offset = 0;
  for (int d = 0; d < nprocs; ++d) {
    send_offsets_[d] = fill_[d] = offset;
    offset += send_counts_[d];
  }
  k = 0;
  for (long i = 0; i < h; ++i) {
    packed_[fill_[dests_[k]]++] = IndexedWord{i, send_[i]};
    if (++k == ndest) k = 0;
  }
  MPI_Alltoall(send_counts_.data(), 1, MPI_INT, recv_counts_.data(), 1, MPI_INT, MPI_COMM_WORLD);
  long total = 0;
  for (int d = 0; d < nprocs; ++d) {
    recv_offsets_[d] = static_cast<int>(total);
    total += recv_counts_[d];
  }
  if (total > hmax_) {
    bsp_abort("raw MPI exchange: process %d would receive %ld words, room for %ld\n", bsp_pid(),
              total, hmax_);
  }
  MPI_Alltoallv(packed_.data(), send_counts_.data(), send_offsets_.data(), pair_type_,
                unpacked_.data(), recv_counts_.data(), recv_offsets_.data(), pair_type_,
                MPI_COMM_WORLD);
  for (long j = 0; j < total; ++j) recv_[unpacked_[j].index] = unpacked_[j].value;
}

std::string WordRelation::check(long h, int rep) const {
  const int ndest = pattern_.ndest();
  const long end = std::min(h + ndest, hmax_);
  return check_words(pattern_, recv_, h, end, rep,
                     [&](long i) { return pattern_.source(static_cast<int>(i % ndest)); });
}

void WordRelation::release() {
  bsp_pop_reg(recv_.data());
  MPI_Type_free(&pair_type_);
}

// --- one put per destination ---------------------------------------------------------------

BlockRelation::BlockRelation(long hmax)
    : pattern_(bsp_nprocs(), bsp_pid()),
      hmax_(hmax),
      send_(hmax),
      recv_(hmax, kPoison),
      send_counts_(bsp_nprocs()),
      send_offsets_(bsp_nprocs()),
      recv_counts_(bsp_nprocs()),
      recv_offsets_(bsp_nprocs()) {
  bsp_push_reg(recv_.data(), static_cast<int>(hmax_ * sizeof(double)));
}

void BlockRelation::prepare(long h, int rep) {
  const long n = words(h);
  for (long i = 0; i < n; ++i) send_[i] = pattern_.value(rep, bsp_pid(), i);
  std::fill(recv_.begin(), recv_.begin() + std::min(h + 1, hmax_), kPoison);
}

void BlockRelation::exchange_bspg(long h, bool unbuffered) {
  const long block = h / pattern_.ndest();
  if (block > 0) {
    for (int k = 0; k < pattern_.ndest(); ++k) {
      (unbuffered ? bsp_hpput : bsp_put)(pattern_.dest(k), &send_[k * block], recv_.data(),
                                         static_cast<int>(k * block * sizeof(double)),
                                         static_cast<int>(block * sizeof(double)));
    }
  }
  bsp_sync();
}

void BlockRelation::exchange_raw(long h) {
  const int block = static_cast<int>(h / pattern_.ndest());
  std::fill(send_counts_.begin(), send_counts_.end(), 0);
  std::fill(recv_counts_.begin(), recv_counts_.end(), 0);
  for (int k = 0; k < pattern_.ndest(); ++k) {
    send_counts_[pattern_.dest(k)] = recv_counts_[pattern_.source(k)] = block;
    send_offsets_[pattern_.dest(k)] = recv_offsets_[pattern_.source(k)] = k * block;
  }
  MPI_Alltoallv(send_.data(), send_counts_.data(), send_offsets_.data(), MPI_DOUBLE, recv_.data(),
                recv_counts_.data(), recv_offsets_.data(), MPI_DOUBLE, MPI_COMM_WORLD);
}

std::string BlockRelation::check(long h, int rep) const {
  const long block = h / pattern_.ndest();
  if (block == 0) return "";
  return check_words(pattern_, recv_, words(h), std::min(h + 1, hmax_), rep,
                     [&](long i) { return pattern_.source(static_cast<int>(i / block)); });
}

void BlockRelation::release() { bsp_pop_reg(recv_.data()); }

// --- messages ------------------------------------------------------------------------------

namespace {
// A packed message of the raw variant: its tag and payload size, then the payload.
constexpr std::size_t kRecordBytes = 2 * sizeof(std::int32_t) + 2 * sizeof(double);
constexpr int kTagBits = 17;  // message numbers below 2^17: n up to 131071
}  // namespace

MessageRelation::MessageRelation(long nmax)
    : pattern_(bsp_nprocs(), bsp_pid()),
      nmax_(std::min(nmax, (1L << kTagBits) - 1)),
      send_(2 * static_cast<std::size_t>(nmax_)),
      received_(static_cast<std::size_t>(nmax_)),
      packed_(static_cast<std::size_t>(nmax_) * kRecordBytes),
      unpacked_(static_cast<std::size_t>(nmax_) * kRecordBytes),
      send_counts_(bsp_nprocs()),
      send_offsets_(bsp_nprocs()),
      recv_counts_(bsp_nprocs()),
      recv_offsets_(bsp_nprocs()),
      fill_(bsp_nprocs()) {
  int tag_bytes = sizeof(std::int32_t);
  bsp_set_tagsize(&tag_bytes);
}

void MessageRelation::prepare(long n, int rep) {
  for (long i = 0; i < 2 * n; ++i) send_[i] = pattern_.value(rep, bsp_pid(), i);
  count_ = 0;
}

void MessageRelation::keep(long j, std::int32_t tag, const char* payload) {
  if (j >= nmax_) bsp_abort("messages: more than %ld arrived on process %d\n", nmax_, bsp_pid());
  Received& r = received_[static_cast<std::size_t>(j)];
  r.tag = tag;
  std::memcpy(r.payload, payload, sizeof r.payload);
}

void MessageRelation::exchange_bspg(long n, bool hpmove) {
  const int ndest = pattern_.ndest();
  const std::int32_t me = bsp_pid() << kTagBits;
  int k = 0;
  for (long i = 0; i < n; ++i) {
    const std::int32_t tag = me | static_cast<std::int32_t>(i);
    bsp_send(pattern_.dest(k), &tag, &send_[2 * i], 2 * sizeof(double));
    if (++k == ndest) k = 0;
  }
  bsp_sync();
  int messages = 0, bytes = 0;
  bsp_qsize(&messages, &bytes);
  long j = 0;
  if (hpmove) {
    void *tag = nullptr, *payload = nullptr;
    for (; bsp_hpmove(&tag, &payload) >= 0; ++j) {
      std::int32_t t;
      std::memcpy(&t, tag, sizeof t);
      keep(j, t, static_cast<const char*>(payload));
    }
  } else {
    for (; j < messages; ++j) {
      int size = 0;
      std::int32_t tag = 0;
      char payload[2 * sizeof(double)];
      bsp_get_tag(&size, &tag);
      bsp_move(payload, sizeof payload);
      keep(j, tag, payload);
    }
  }
  count_ = j;
}

void MessageRelation::exchange_raw(long n) {
  const int nprocs = bsp_nprocs(), ndest = pattern_.ndest();
  std::fill(send_counts_.begin(), send_counts_.end(), 0);
  for (long i = 0; i < n; ++i)
    send_counts_[pattern_.dest(static_cast<int>(i % ndest))] += static_cast<int>(kRecordBytes);
  int offset = 0;
  for (int d = 0; d < nprocs; ++d) {
    send_offsets_[d] = fill_[d] = offset;
    offset += send_counts_[d];
  }
  const std::int32_t me = bsp_pid() << kTagBits, size = 2 * sizeof(double);
  int k = 0;
  for (long i = 0; i < n; ++i) {
    const int d = pattern_.dest(k);
    char* at = &packed_[static_cast<std::size_t>(fill_[d])];
    fill_[d] += static_cast<int>(kRecordBytes);
    const std::int32_t tag = me | static_cast<std::int32_t>(i);
    std::memcpy(at, &tag, sizeof tag);
    std::memcpy(at + sizeof tag, &size, sizeof size);
    std::memcpy(at + 2 * sizeof tag, &send_[2 * i], 2 * sizeof(double));
    if (++k == ndest) k = 0;
  }
  MPI_Alltoall(send_counts_.data(), 1, MPI_INT, recv_counts_.data(), 1, MPI_INT, MPI_COMM_WORLD);
  long total = 0;
  for (int d = 0; d < nprocs; ++d) {
    recv_offsets_[d] = static_cast<int>(total);
    total += recv_counts_[d];
  }
  if (total > static_cast<long>(unpacked_.size()))
    bsp_abort("raw MPI messages: process %d would receive %ld bytes, room for %zu\n", bsp_pid(),
              total, unpacked_.size());
  MPI_Alltoallv(packed_.data(), send_counts_.data(), send_offsets_.data(), MPI_BYTE,
                unpacked_.data(), recv_counts_.data(), recv_offsets_.data(), MPI_BYTE,
                MPI_COMM_WORLD);
  long j = 0;
  for (std::size_t at = 0; at < static_cast<std::size_t>(total); at += kRecordBytes, ++j) {
    std::int32_t tag, bytes;
    std::memcpy(&tag, &unpacked_[at], sizeof tag);
    std::memcpy(&bytes, &unpacked_[at + sizeof tag], sizeof bytes);
    char payload[2 * sizeof(double)];
    std::memcpy(payload, &unpacked_[at + 2 * sizeof tag],
                std::min<std::size_t>(static_cast<std::size_t>(bytes), sizeof payload));
    keep(j, tag, payload);
  }
  count_ = j;
}

std::string MessageRelation::check(long n, int rep) const {
  const int nprocs = bsp_nprocs(), ndest = pattern_.ndest();
  // Sender src's message i comes here when its destination i mod ndest is this process.
  auto comes_here = [&](int src, long i) {
    return Pattern(nprocs, src).dest(static_cast<int>(i % ndest)) == bsp_pid();
  };
  long want = 0;
  for (int k = 0; k < ndest; ++k) {
    const int src = pattern_.source(k);
    for (long i = 0; i < n; ++i) want += comes_here(src, i) ? 1 : 0;
    if (nprocs == 1) break;
  }
  char why[240];
  if (count_ != want) {
    std::snprintf(why, sizeof why, "%ld messages were read instead of %ld (n = %ld, repetition %d)",
                  count_, want, n, rep);
    return why;
  }
  std::vector<bool> read(static_cast<std::size_t>(nprocs) * static_cast<std::size_t>(n), false);
  for (long j = 0; j < count_; ++j) {
    const Received& r = received_[static_cast<std::size_t>(j)];
    const int src = r.tag >> kTagBits;
    const long i = r.tag & ((1 << kTagBits) - 1);
    const std::size_t which =
        static_cast<std::size_t>(src) * static_cast<std::size_t>(n) + static_cast<std::size_t>(i);
    if (src < 0 || src >= nprocs || i >= n || !comes_here(src, i) || read[which] ||
        r.payload[0] != pattern_.value(rep, src, 2 * i) ||
        r.payload[1] != pattern_.value(rep, src, 2 * i + 1)) {
      std::snprintf(why, sizeof why,
                    "message %ld read holds tag %#x and payload %.17g %.17g, which is not a "
                    "message sent to this process, or one read before (n = %ld, repetition %d)",
                    j, static_cast<unsigned>(r.tag), r.payload[0], r.payload[1], n, rep);
      return why;
    }
    read[which] = true;
  }
  return "";
}

}  // namespace bench
