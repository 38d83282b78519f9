// mailbox.cpp - Mailbox: large puts on one node, copied at call time into shared-memory regions.
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "copy.hpp"
#include "errors.hpp"
#include "lost_peers.hpp"
#include "transport.hpp"
#include "transport_internal.hpp"

namespace bspg {
using namespace transport_internal;  // the transport's own helpers (transport_internal.hpp)

// ---- Mailbox ---------------------------------------------------------------------------------

void Mailbox::open(MPI_Comm comm, int pid, int nprocs) {
  pid_ = pid;
  nprocs_ = nprocs;
  MPI_Comm node;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, pid, MPI_INFO_NULL, &node);
  lost_peers::watch(node);
  int node_size = 0;
  MPI_Comm_size(node, &node_size);
  MPI_Comm_free(&node);
  processes_on_this_node(node_size);
  // Only when every process shares this node, and only while the regions stay small: 8 MiB in all,
  // 64 KiB to 1 MiB per peer (so none beyond 128 processes; large puts then go direct). Larger
  // regions come with use (grow).
  std::uint64_t region = (std::uint64_t{8} << 20) / static_cast<std::uint64_t>(nprocs);
  if (node_size != nprocs || nprocs == 1 || region < std::uint64_t{64} * 1024) return;
  comm_ = comm;
  region_bytes_ = std::min<std::uint64_t>(region, std::uint64_t{1} << 20) / 4096 * 4096;
  allocate();
}

void Mailbox::allocate() {
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "alloc_shared_noncontig", "true");  // each process's part near its core
  // A failed allocation is said in bspg's words, not the MPI's (affordable() makes it rare).
  MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  const int rc = MPI_Win_allocate_shared(
      static_cast<MPI_Aint>(region_bytes_ * static_cast<std::uint64_t>(nprocs_) + kLineBytes), 1,
      info, comm_, &base_, &win_);
  MPI_Comm_set_errhandler(comm_, MPI_ERRORS_ARE_FATAL);
  MPI_Info_free(&info);
  if (rc != MPI_SUCCESS)
    fail("bsp_sync",
         "could not allocate %llu MiB of shared memory for the regions of large puts (the MPI "
         "says error %d); the shared-memory file system (/dev/shm) may be full",
         static_cast<unsigned long long>(region_bytes_ * static_cast<std::uint64_t>(nprocs_) >> 20),
         rc);
  bases_ = shared_bases<char>(win_, nprocs_);
  base_ = line_aligned(base_);
  MPI_Win_lock_all(MPI_MODE_NOCHECK, win_);
}

std::uint64_t Mailbox::affordable() const {
  if (!available()) return 0;
  const std::uint64_t regions = static_cast<std::uint64_t>(nprocs_) * nprocs_;
  std::uint64_t all = std::numeric_limits<std::uint64_t>::max();
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0)
    all = static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page) / 4;
  struct statvfs shm;
  if (statvfs("/dev/shm", &shm) == 0)
    all = std::min<std::uint64_t>(all, static_cast<std::uint64_t>(shm.f_bavail) * shm.f_frsize / 2);
  return std::min(all / regions, kLargestRegion) / 4096 * 4096;
}

void Mailbox::grow(std::uint64_t region_bytes) {
  if (!available() || region_bytes <= region_bytes_) return;
  MPI_Win_unlock_all(win_);
  MPI_Win_free(&win_);
  region_bytes_ = (region_bytes + 4095) / 4096 * 4096;
  allocate();
}

void Mailbox::close() {
  if (win_ == MPI_WIN_NULL) return;
  MPI_Win_unlock_all(win_);
  MPI_Win_free(&win_);
  base_ = nullptr;
  bases_.clear();
}

void Mailbox::write(int target, std::uint64_t offset, const void* header, std::size_t header_bytes,
                    const void* payload, std::size_t payload_bytes) {
  char* at = base_ + static_cast<std::uint64_t>(target) * region_bytes_ + offset;
  std::memcpy(at, header, header_bytes);
  if (payload_bytes >= kMidChosenBytes)
    writes_.copy(at + header_bytes, payload, payload_bytes);
  else
    std::memcpy(at + header_bytes, payload, payload_bytes);
}

void Mailbox::publish() {
  if (available()) MPI_Win_sync(win_);
}

void Mailbox::acquire() {
  if (available()) MPI_Win_sync(win_);
}

}  // namespace bspg
