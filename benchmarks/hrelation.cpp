// hrelation.cpp - see hrelation.h.
#include "hrelation.h"

#include <algorithm>
#include <cstdio>

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

void BlockRelation::exchange_bspg(long h) {
  const long block = h / pattern_.ndest();
  if (block > 0) {
    for (int k = 0; k < pattern_.ndest(); ++k) {
      bsp_put(pattern_.dest(k), &send_[k * block], recv_.data(),
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

}  // namespace bench
