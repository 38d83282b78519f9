// transport_internal.hpp - what transport/'s files share; no file outside transport/ includes it.
// The user's choices, shared-memory windows cut into cache-aligned parts, MPI RMA of any size.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace bspg::transport_internal {

constexpr std::uint64_t kMaxTransferBytes = std::uint64_t{1} << 30;  // MPI counts are int

// What the user chose in the environment (bsp(3)), read once, at the first group's start
// (bsp_begin): a bad value is one line from there, whatever group would have read it later.
struct TransportChoices {
  const char* transport = nullptr;  // BSPG_TRANSPORT: one-sided, two-sided, mpi-rma; null: auto
  bool shared_reduction_always = false;  // BSPG_SHARED_REDUCTION=always
  bool shared_reduction_never = false;   // BSPG_SHARED_REDUCTION=never
  const char* lend_puts = "auto";        // BSPG_LEND_PUTS: auto, on, off (lending.hpp)
};
const TransportChoices& transport_choices();  // transport.cpp

// What a shared-memory window is allocated larger by, to start each part on a cache line.
constexpr std::uint64_t kLineBytes = 64;

template <typename T>
T* line_aligned(T* at) {
  const auto address = reinterpret_cast<std::uintptr_t>(at);
  return reinterpret_cast<T*>((address + kLineBytes - 1) / kLineBytes * kLineBytes);
}

// Every rank's part of a shared-memory window (MPI_Win_allocate_shared, kLineBytes larger than
// needed), at the address this process maps it, moved up to the next cache line. MPI promises no
// more than a word's alignment (Open MPI 4.1 starts parts 8 bytes past a line), and then every
// line the transport keeps apart, a reduction's slot or a chunk, would straddle two. Every process
// maps the segment at a page boundary, so all of them move each part alike.
template <typename T>
std::vector<T*> shared_bases(MPI_Win win, int ranks) {
  std::vector<T*> bases(static_cast<std::size_t>(ranks));
  for (int q = 0; q < ranks; ++q) {
    MPI_Aint bytes = 0;
    int unit = 0;
    T* base = nullptr;
    MPI_Win_shared_query(win, q, &bytes, &unit, &base);
    bases[static_cast<std::size_t>(q)] = line_aligned(base);
  }
  return bases;
}

// MPI_Put / MPI_Get of any size (MPI counts are int).
template <class Op>
void in_pieces(std::uint64_t n, Op&& op) {
  for (std::uint64_t done = 0; done < n;) {
    std::uint64_t piece = std::min(n - done, kMaxTransferBytes);
    op(done, static_cast<int>(piece));
    done += piece;
  }
}

// Completes this process's RMA to each target in `targets` once (a target may be listed several
// times), and empties the list.
void flush_each(std::vector<int>& targets, MPI_Win win);  // one_sided.cpp

}  // namespace bspg::transport_internal
