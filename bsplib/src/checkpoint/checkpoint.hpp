// checkpoint.hpp - superstep checkpoints (bspg_persist, bspg_checkpoint, bspg_resume): what the
// state of a BSP program is at a superstep boundary, and how it is kept so that losing any one host
// (or, with K copies, any K hosts) loses nothing.
//
// At a checkpoint every process writes its shard (its persisted areas, its registered sizes, the
// message queue just delivered, the tag size in force and the world supersteps so far, which a
// resumed run's profile numbers on from) to its host's checkpoint directory, and
// sends the same bytes to its copy holders, by default one process on another host (another
// subjob where there are several; BSPG_COPIES=K: on K others), each of which writes them as a copy.
// Only when every process has written and fsync'ed its shard and the copies it holds, and all have
// said so (one reduction), does the checkpoint count: each process then writes its "complete"
// marker and removes its files of the checkpoint before. Every write is checked; three agreements
// (files open, data durable, markers durable) make sure that no process waits for one that failed,
// and on failure the previous checkpoint is kept and the job ends with one line and exit 75 (1 when
// there is none). Everything inside the checkpoint directory is done relative to its descriptor and
// never follows a symbolic link. The file layout is the contract with bsprun (which restarts jobs
// on other hosts and brings each process's shard there): see shard.hpp and docs/checkpoints.md.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "stream.hpp"

namespace bspg {

class Runtime;

// Exit status of every process of a job stopped after a checkpoint on request (EX_TEMPFAIL).
constexpr int kStoppedAfterCheckpoint = 75;

class Checkpoints {
 public:
  // Reads BSPG_CHECKPOINT_DIR, BSPG_RESUME, BSPG_RUN, BSPG_PROGRAM_ID and BSPG_COPIES. Local.
  explicit Checkpoints(Runtime& runtime);
  ~Checkpoints();  // stops a disk write still going on (see abandon)
  Checkpoints(const Checkpoints&) = delete;
  Checkpoints& operator=(const Checkpoints&) = delete;

  void persist(void* address, std::uint64_t bytes);  // local, in the same order on every run
  int resume();      // collective: 0 on a fresh run, else the checkpoint restored
  // The world syncs that had ended when the restored checkpoint was taken (0: none restored, or
  // a shard of version 2, which does not say).
  std::uint64_t restored_supersteps() const { return restored_supersteps_; }
  int checkpoint();  // collective, right after the sync that ends the superstep: its number

  const std::string& directory() const { return directory_; }
  // Frees the communicator, the directory and its lock (at bsp_end, collective). With
  // BSPG_CHECKPOINT_CLEANUP=end (bsprun's default directory) it first removes the directory on
  // every host, once all processes got here: one barrier, and a directory listing per host.
  void close();
  // After a loss (recovery in place): stops a disk write going on behind the job (its files stay
  // .part, never counted), closes the directory and its lock, with no MPI call.
  void abandon();

  // What went wrong with a file of the checkpoint directory: its full path and strerror.
  struct Problem {
    std::string file, error;
    bool empty() const { return file.empty(); }
  };

 private:
  struct Area {
    char* address;
    std::uint64_t bytes;
  };
  // The open files of a checkpoint being written.
  struct Files {
    int dir = -1;             // c<N>
    int own = -1;             // shard-<pid>.part
    std::vector<int> copies;  // copy-<ward>.part, in wards_ order
    void close_all();
  };
  // Collective, once: buddies, the run id, the checkpoint directory (opened once, checked, and
  // locked where bsprun does not hold the lock). `call` names the bspg_ call in messages.
  void plan(const char* call);
  std::string take_lock();  // "" or why the directory is refused; may set unavailable_
  std::string shard_path(std::uint64_t n, const char* kind, int pid) const;
  // The bytes of this process's shard for checkpoint n, in pieces that point into user memory;
  // with_checksum false: all but the last 8 bytes, the checksum of the others (for the caller to
  // compute as it copies them).
  struct Piece {
    const char* data;
    std::uint64_t bytes;
  };
  std::vector<Piece> serialize(std::uint64_t n, ByteBuffer& head, ByteBuffer& tail,
                               bool with_checksum = true);
  Problem prepare(std::uint64_t n, Files& files);
  Problem write_data(std::uint64_t n, Files& files);
  Problem write_memory(std::uint64_t n);  // with spares: in memory only (in_memory.cpp)
  Problem write_marker(std::uint64_t n, Files& files);
  // Collective: returns when no process has a problem; otherwise the job ends (see the .cpp),
  // keeping checkpoint `kept` (the last one written).
  void agree(std::uint64_t n, const Problem& mine, Files& files, std::uint64_t kept);
  std::uint64_t said_problem(const Problem& mine) const;  // what agree reduces: pid or none
  [[noreturn]] void end_for_problem(std::uint64_t failed, std::uint64_t n, const Problem& mine,
                                    Files& files, std::uint64_t kept);
  // With in-memory copies: checkpoint n's disk copy, written behind the job by a thread of its
  // own from the in-memory files (behind.cpp). finish_behind (collective) waits for it, agrees
  // on it and removes the checkpoints before it, at once or (remove_now false: a checkpoint
  // follows) by the next disk write; cancel_behind (local) stops it.
  struct DiskWrite;
  struct BehindEnd {  // a finished disk write (n 0: none was going on)
    std::uint64_t n = 0, kept = 0;
    Problem problem;
  };
  void write_behind(std::uint64_t n);
  void finish_behind(bool remove_now = true);
  BehindEnd join_behind();  // finish_behind's local part: waits for the thread
  void behind_durable(std::uint64_t n, bool remove_now);  // and its part after the agreement
  void cancel_behind();
  void say_whole(std::uint64_t n);  // BSPG_SAY_WHOLE's line, for a checkpoint durable everywhere
  [[noreturn]] void end_job(int status);
  std::string read_shard(std::uint64_t n, int dir, const char* kind, std::uint64_t run);
  std::string read_shard_from(std::uint64_t n, int fd, std::uint64_t run);
  int resume_from_memory();
  std::uint64_t marker_run(std::uint64_t n);  // newest run named by c<n>'s markers here, or 0
  bool holds_shard_of(std::uint64_t n, std::uint64_t run);
  std::uint64_t newest_readable_everywhere(std::uint64_t& run);
  void clean_up_first();
  bool stop_requested();
  bool stop_file_here();    // stop_requested's local part
  void remove_directory();  // the whole checkpoint directory, never following a symbolic link

  Runtime& rt_;
  std::string directory_;
  std::string resume_;  // BSPG_RESUME as given
  std::vector<Area> areas_;
  std::uint64_t last_ = 0;  // number of the last checkpoint written or restored
  std::uint64_t disk_last_ = 0;       // written behind the job: the last durable on disk
  bool remove_pending_ = false;       // the checkpoints before disk_last_ are still to go
  std::unique_ptr<DiskWrite> behind_;  // the disk write going on, if any
  bool planned_ = false;
  bool cleaned_ = false;           // the first checkpoint's clean-up is done
  bool lowest_on_host_ = false;    // the lowest pid on this host (set by plan)
  bool remove_at_end_ = false;     // BSPG_CHECKPOINT_CLEANUP=end: the directory goes at bsp_end
  bool say_whole_ = false;         // BSPG_SAY_WHOLE=1: pid 0 says each whole checkpoint (bsprun)
  int copies_asked_ = 1;           // BSPG_COPIES (bsprun --copies)
  std::vector<int> holders_;       // who keep copies of our shard (none: p = 1)
  std::vector<int> wards_;         // whose copies we keep
  MPI_Comm comm_ = MPI_COMM_NULL;  // a communicator of its own for shard traffic
  ByteBuffer restored_queue_;      // storage of a restored message queue
  std::uint64_t restored_supersteps_ = 0;
  std::uint64_t run_ = 0;          // this run's id (pid 0's), as a number for reductions
  bool run_given_ = false;         // BSPG_RUN was set: bsprun holds the directory's lock
  std::string program_id_;         // BSPG_PROGRAM_ID, or sixteen zeros
  int dir_fd_ = -1;                // the checkpoint directory, opened once
  int lock_fd_ = -1;               // DIR/lock, held for the job (plain mpirun)
  Problem unavailable_;            // why the directory cannot be written (said at a checkpoint)
};

}  // namespace bspg
