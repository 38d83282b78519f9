// profile.hpp - the superstep profiler's recording side (BSPG_PROFILE=DIR; bsprun --profile DIR).
//
// When on, each process appends one record per sync to its own file under DIR/raw (the format is
// common/formats/raw_format.h; bspprof turns the files into a CSV, a trace and a picture): when the
// sync was called and when it returned, and what this process put, got and sent to whom in the
// superstep it ends. A window of the file is mapped into memory (a shared mapping, moved on as it
// fills), so a record is in the file as soon as the sync returns, at the cost of a copy: however
// the process ends afterwards (exit, bsp_abort, a crash, SIGKILL from the starter), the kernel
// keeps what it wrote. Only a lost host loses records. When off, the only cost is a test of
// g_profiler in the calls that move data and in the syncs.
#pragma once

#include <mpi.h>
#include <time.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "raw_format.h"

namespace bspg {

class Profiler {
 public:
  // Collective over comm (the SPMD section's processes), at bsp_begin: process 0's environment
  // decides (BSPG_PROFILE, BSPG_PROFILE_ATTEMPT), so that the processes a master spawns are
  // profiled as it is. Returns null when the section is not profiled, or, having said why on
  // stderr, when this process's file cannot be written (the job runs on, unprofiled). Otherwise
  // it has measured this process's clock offset to process 0 and opened
  // DIR/raw/a<attempt>.s<section>.p<pid>.bspprof.
  static Profiler* start(MPI_Comm comm, int pid, int nprocs);

  ~Profiler();  // cuts the file to what was written and closes it

  void count_put(int peer, std::uint32_t nbytes) {
    profile::PeerCount& c = entry(peer);
    ++c.put_messages;
    c.put_bytes += nbytes;
  }
  void count_send(int peer, std::uint32_t nbytes) {
    profile::PeerCount& c = entry(peer);
    ++c.send_messages;
    c.send_bytes += nbytes;
  }
  void count_get(int peer, std::uint32_t nbytes) {
    profile::PeerCount& c = entry(peer);
    ++c.get_messages;
    c.get_bytes += nbytes;
  }

  // Around every sync: the clock when the program called it, then the record once it returned.
  double now() const { return monotonic_seconds() + clock_offset_; }
  // This host's monotonic clock (what MPI_Wtime reads on Linux, without the call into MPI).
  static double monotonic_seconds() {
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
  }
  // group: its handle and lowest pid, or -1 and -1 for the world. superstep: the world syncs
  // that had ended before this sync began (the runtime counts them: Runtime::world_syncs).
  void record_sync(profile::SyncKind kind, int group, int group_first, int group_size,
                   double call_s, std::uint64_t superstep);
  // After bspg_resume restored a checkpoint: the next world sync is number `supersteps` (the
  // runtime's count, continued from the checkpoint's), and the file's header says so, so that the
  // attempts of a restarted job number their supersteps on one axis.
  void continue_at(std::uint64_t supersteps);

 private:
  Profiler(int fd, int pid, int nprocs);
  profile::PeerCount& entry(int peer) {
    profile::PeerCount& c = counts_[static_cast<std::size_t>(peer)];
    if (!touched_flag_[static_cast<std::size_t>(peer)]) {
      touched_flag_[static_cast<std::size_t>(peer)] = 1;
      touched_.push_back(peer);
    }
    return c;
  }
  // Room for n more bytes after the records, in the mapped window (moving the window and growing
  // the file when needed); null, having said why once, when the file cannot grow (a full disk).
  char* reserve(std::size_t n) {
    if (__builtin_expect(window_start_ + window_bytes_ - used_ >= n, 1))
      return map_ + (used_ - window_start_);
    return grow(n);
  }
  char* grow(std::size_t n);

  int fd_;
  int pid_;
  bool failed_ = false;
  double clock_offset_ = 0;
  // A window of the file is mapped, not all of it: the pages of records already written leave
  // this process (to the page cache, which writes them out) so that its memory stays bounded.
  char* map_ = nullptr;           // file offset window_start_, for window_bytes_
  std::size_t window_start_ = 0;  // a page boundary
  std::size_t window_bytes_ = 0;
  std::size_t file_bytes_ = 0;               // the file's length: space reserved ahead of used_
  std::size_t used_ = 0;                     // bytes of records written
  std::vector<std::uint32_t> group_steps_;   // per group handle: group syncs since the world's
  std::vector<profile::PeerCount> counts_;   // per pid, this superstep
  std::vector<unsigned char> touched_flag_;  // per pid
  std::vector<int> touched_;                 // pids with counts this superstep
};

// Non-null while the running SPMD section is profiled.
extern Profiler* g_profiler;

}  // namespace bspg
