// exchange.hpp - the receive window every process exposes, and the one-sided transfers into it.
// A passive-target epoch (MPI_Win_lock_all) stays open for the window's life: a superstep's data
// moves with MPI_Put, completes with MPI_Win_flush_all, and a barrier tells the targets it is
// there. The window grows (collectively, rarely) when a superstep needs more room than it has.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "schedule.hpp"

namespace bspg {

class Exchange {
 public:
  void open(MPI_Comm comm, int pid, int nprocs);
  void close();  // nothing to do when not open
  bool is_open() const { return win_ != MPI_WIN_NULL; }

  // Collective: makes every process's window at least as large as this superstep needs. Every
  // process computes the same capacities from the same schedule, so all agree without talking.
  void ensure_capacity(const Schedule& schedule);

  char* window() { return base_; }
  // Copies n bytes to target's window at offset (MPI_Put, or memcpy for this process itself).
  void put(int target, std::uint64_t offset, const char* data, std::uint64_t n);
  // Collective: every put of every process has arrived and is visible to its target.
  void complete();

 private:
  void allocate();

  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Win win_ = MPI_WIN_NULL;
  int pid_ = 0;
  char* base_ = nullptr;
  std::vector<std::uint64_t> capacity_;  // per process, identical on every process
};

// Mailboxes for large puts. A large bsp_put is copied at call time straight into a mailbox
// region (one copy less than packing it and moving it at the sync). There is one region per
// (writer, receiver) pair; a sync that used any ends with a barrier after every receiver has
// applied its mailboxes, so a writer never overwrites a region that is still being read.
// When every process shares one node the window is an MPI shared-memory window
// (MPI_Win_allocate_shared): a writer stores into its own window (the region for the
// destination) and the receiver reads it there at the sync, through MPI_Win_shared_query
// pointers, so the data crosses between cores once. Otherwise the writer MPI_Puts into the
// receiver's window.
class Mailbox {
 public:
  void open(MPI_Comm comm, int pid, int nprocs);
  void close();
  std::uint64_t region_bytes() const { return region_bytes_; }

  // Copies header and payload into the region from this process to target, at offset; returns
  // when the source buffers may be reused (MPI_Win_flush_local after an MPI_Put).
  void put(int target, std::uint64_t offset, const void* header, std::size_t header_bytes,
           const void* payload, std::size_t payload_bytes);
  void flush();          // every put of this process has reached its target
  void sync_memory();    // make what others put here visible to this process's loads
  // Where the receiver (this process) finds what src put to it.
  const char* incoming(int src) const {
    return shared_bases_.empty() ? base_ + region_offset(src)
                                 : shared_bases_[static_cast<std::size_t>(src)] + region_offset(pid_);
  }

 private:
  // Offset of the region for `peer`: the writer in a receiver's window (MPI_Put), the receiver
  // in a writer's window (shared memory).
  std::uint64_t region_offset(int peer) const { return static_cast<std::uint64_t>(peer) * region_bytes_; }

  MPI_Win win_ = MPI_WIN_NULL;
  char* base_ = nullptr;
  int pid_ = 0;
  int nprocs_ = 1;
  std::uint64_t region_bytes_ = 0;
  std::vector<char*> shared_bases_;  // every process's window, when all share this node
};

}  // namespace bspg
