// checkpoint.hpp - superstep checkpoints (bspg_persist, bspg_checkpoint, bspg_resume): what the
// state of a BSP program is at a superstep boundary, and how it is kept so that losing any one host
// loses nothing.
//
// At a checkpoint every process writes its shard (its persisted areas, its registered sizes, the
// message queue just delivered and the tag size in force) to its host's checkpoint directory, and
// sends the same bytes to its buddy, a process on another host (another subjob where there are
// several), which writes them as a copy. Only when every process has written and fsync'ed its
// shard and the copies it holds, and all have said so (one reduction), does the checkpoint count:
// each process then writes its "complete" marker and removes its files of the checkpoint before.
// The file layout is the contract with bsprun (which restarts jobs on other hosts and brings each
// process's shard there): see shard.hpp and the README.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "stream.hpp"

namespace bspg {

class Runtime;

// Exit status of every process of a job stopped after a checkpoint on request (EX_TEMPFAIL).
constexpr int kStoppedAfterCheckpoint = 75;

class Checkpoints {
 public:
  // Reads BSPG_CHECKPOINT_DIR and BSPG_RESUME. Local.
  explicit Checkpoints(Runtime& runtime);

  void persist(void* address, std::uint64_t bytes);  // local, in the same order on every run
  int resume();      // collective: 0 on a fresh run, else the checkpoint restored
  int checkpoint();  // collective, right after the sync that ends the superstep: its number

  const std::string& directory() const { return directory_; }
  void close();  // frees the communicator (at bsp_end, collective)

 private:
  struct Area {
    char* address;
    std::uint64_t bytes;
  };
  void plan();  // collective: buddies, once
  std::string shard_path(std::uint64_t n, const char* kind, int pid) const;
  // The bytes of this process's shard for checkpoint n, in pieces that point into user memory.
  struct Piece {
    const char* data;
    std::uint64_t bytes;
  };
  std::vector<Piece> serialize(std::uint64_t n, ByteBuffer& head, ByteBuffer& tail);
  std::string write_checkpoint(std::uint64_t n);  // "" or why not
  std::string read_shard(std::uint64_t n, const std::string& path);
  std::uint64_t newest_readable_everywhere();
  void remove_checkpoint(std::uint64_t n);
  void clean_stale();

  Runtime& rt_;
  std::string directory_;
  std::string resume_;  // BSPG_RESUME as given
  std::vector<Area> areas_;
  std::uint64_t last_ = 0;  // number of the last checkpoint written or restored
  bool planned_ = false;
  bool lowest_on_host_ = false;    // the lowest pid on this host (set by plan)
  int buddy_ = -1;                 // who keeps our copy (-1: nobody, p = 1)
  std::vector<int> wards_;         // whose copies we keep
  MPI_Comm comm_ = MPI_COMM_NULL;  // a communicator of its own for shard traffic
  ByteBuffer restored_queue_;      // storage of a restored message queue
};

}  // namespace bspg
