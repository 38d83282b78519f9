#include "exchange.hpp"

#include <algorithm>
#include <climits>
#include <cstring>

namespace bspg {
namespace {
constexpr std::uint64_t kInitialWindowBytes = std::uint64_t{64} * 1024;
constexpr std::uint64_t kGranule = std::uint64_t{64} * 1024;
constexpr std::uint64_t kMaxPutBytes = std::uint64_t{1} << 30;  // MPI counts are int
}  // namespace

void Exchange::open(MPI_Comm comm, int pid, int nprocs) {
  comm_ = comm;
  pid_ = pid;
  capacity_.assign(static_cast<std::size_t>(nprocs), kInitialWindowBytes);
  allocate();
}

void Exchange::allocate() {
  MPI_Info info;
  MPI_Info_create(&info);
  // We never use accumulate operations, and the window is only addressed with MPI_BYTE.
  MPI_Info_set(info, "accumulate_ops", "same_op");
  MPI_Info_set(info, "same_disp_unit", "true");
  MPI_Win_allocate(static_cast<MPI_Aint>(capacity_[static_cast<std::size_t>(pid_)]), 1, info, comm_,
                   &base_, &win_);
  MPI_Info_free(&info);
  MPI_Win_lock_all(MPI_MODE_NOCHECK, win_);
}

void Exchange::close() {
  if (win_ == MPI_WIN_NULL) return;
  MPI_Win_unlock_all(win_);
  MPI_Win_free(&win_);
  base_ = nullptr;
}

void Exchange::ensure_capacity(const Schedule& schedule) {
  bool grow = false;
  for (int pid = 0; pid < schedule.nprocs(); ++pid)
    grow = grow || schedule.window_bytes_needed(pid) > capacity_[static_cast<std::size_t>(pid)];
  if (!grow) return;
  for (int pid = 0; pid < schedule.nprocs(); ++pid) {
    std::uint64_t& capacity = capacity_[static_cast<std::size_t>(pid)];
    std::uint64_t needed = schedule.window_bytes_needed(pid);
    // Grow by at least half again, so a slowly growing program reallocates rarely.
    if (needed > capacity) capacity = std::max(needed, capacity + capacity / 2);
    capacity = (capacity + kGranule - 1) / kGranule * kGranule;
  }
  close();
  allocate();
}

void Exchange::put(int target, std::uint64_t offset, const char* data, std::uint64_t n) {
  if (target == pid_) {
    std::memcpy(base_ + offset, data, n);
    return;
  }
  while (n > 0) {
    std::uint64_t chunk = n < kMaxPutBytes ? n : kMaxPutBytes;
    MPI_Put(data, static_cast<int>(chunk), MPI_BYTE, target, static_cast<MPI_Aint>(offset),
            static_cast<int>(chunk), MPI_BYTE, win_);
    data += chunk;
    offset += chunk;
    n -= chunk;
  }
}

void Exchange::complete() {
  MPI_Win_flush_all(win_);
  MPI_Barrier(comm_);
  MPI_Win_sync(win_);
}

void Mailbox::open(MPI_Comm comm, int pid, int nprocs) {
  pid_ = pid;
  nprocs_ = nprocs;
  // 8 MiB of regions in all, 64 KiB to 1 MiB per peer.
  std::uint64_t region = (std::uint64_t{8} << 20) / static_cast<std::uint64_t>(nprocs);
  region = std::min<std::uint64_t>(std::max<std::uint64_t>(region, std::uint64_t{64} * 1024), std::uint64_t{1} << 20);
  region_bytes_ = region / 4096 * 4096;
  const auto bytes = static_cast<MPI_Aint>(region_bytes_ * static_cast<std::uint64_t>(nprocs));

  MPI_Comm node;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, pid, MPI_INFO_NULL, &node);
  int node_size = 0;
  MPI_Comm_size(node, &node_size);
  MPI_Comm_free(&node);
  if (node_size == nprocs) {
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_shared_noncontig", "true");  // each process's part near its core
    MPI_Win_allocate_shared(bytes, 1, info, comm, &base_, &win_);
    MPI_Info_free(&info);
    shared_bases_.resize(static_cast<std::size_t>(nprocs));
    for (int q = 0; q < nprocs; ++q) {
      MPI_Aint size = 0;
      int unit = 0;
      MPI_Win_shared_query(win_, q, &size, &unit, &shared_bases_[static_cast<std::size_t>(q)]);
    }
  } else {
    MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, comm, &base_, &win_);
  }
  MPI_Win_lock_all(MPI_MODE_NOCHECK, win_);
}

void Mailbox::close() {
  if (win_ == MPI_WIN_NULL) return;
  MPI_Win_unlock_all(win_);
  MPI_Win_free(&win_);
  base_ = nullptr;
  shared_bases_.clear();
}

void Mailbox::put(int target, std::uint64_t offset, const void* header, std::size_t header_bytes,
                  const void* payload, std::size_t payload_bytes) {
  if (!shared_bases_.empty() || target == pid_) {
    // Shared: into this process's own region for target. Self: the same place either way.
    char* at = base_ + region_offset(shared_bases_.empty() ? pid_ : target) + offset;
    std::memcpy(at, header, header_bytes);
    std::memcpy(at + header_bytes, payload, payload_bytes);
    return;
  }
  std::uint64_t at = region_offset(pid_) + offset;
  MPI_Put(header, static_cast<int>(header_bytes), MPI_BYTE, target, static_cast<MPI_Aint>(at),
          static_cast<int>(header_bytes), MPI_BYTE, win_);
  MPI_Put(payload, static_cast<int>(payload_bytes), MPI_BYTE, target,
          static_cast<MPI_Aint>(at + header_bytes), static_cast<int>(payload_bytes), MPI_BYTE, win_);
  MPI_Win_flush_local(target, win_);
}

void Mailbox::flush() {
  MPI_Win_flush_all(win_);
  MPI_Win_sync(win_);  // stores through shared pointers, before the barrier that publishes them
}

void Mailbox::sync_memory() { MPI_Win_sync(win_); }

}  // namespace bspg
