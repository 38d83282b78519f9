// checkpoint.cpp - bspg_checkpoint: the steps all processes agree on, the job ended together when
// one failed or when bsprun asked for a stop; the collectives they wait on idly.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "checkpoint_internal.hpp"
#include "errors.hpp"
#include "lost_peers.hpp"
#include "memory_copies.hpp"
#include "runtime.hpp"
#include "transport.hpp"

namespace bspg {
namespace checkpoint_internal {

// Smallest value over all processes, with idle waiting.
std::uint64_t all_min(std::uint64_t mine, MPI_Comm comm) {
  all_min(&mine, 1, comm);
  return mine;
}

void all_min(std::uint64_t* words, int count, MPI_Comm comm) {
  MPI_Request request;
  MPI_Iallreduce(MPI_IN_PLACE, words, count, MPI_UINT64_T, unsigned_min_op(), comm, &request);
  wait_idle(&request);
}

void idle_barrier(MPI_Comm comm) {
  MPI_Request request;
  MPI_Ibarrier(comm, &request);
  wait_idle(&request);
}

void idle_broadcast(void* data, int bytes, int root, MPI_Comm comm) {
  MPI_Request request;
  MPI_Ibcast(data, bytes, MPI_BYTE, root, comm, &request);
  wait_idle(&request);
}

}  // namespace checkpoint_internal

using namespace checkpoint_internal;  // what the checkpoint files share (checkpoint_internal.hpp)

// Every process says whether it has a problem. If one has, the lowest such process tells the
// others where and why, checkpoint n is removed (what of it exists), pid 0 prints the one line,
// and every process ends with 75 when an earlier checkpoint is kept, else 1.
void Checkpoints::agree(std::uint64_t n, const Problem& mine, Files& files, std::uint64_t kept) {
  const std::uint64_t failed = all_min(said_problem(mine), comm_);
  if (failed != UINT64_MAX) end_for_problem(failed, n, mine, files, kept);
}

std::uint64_t Checkpoints::said_problem(const Problem& mine) const {
  return mine.empty() ? UINT64_MAX : static_cast<std::uint64_t>(rt_.pid);
}

// The rest of agree, once every process knows the lowest pid with a problem (failed).
void Checkpoints::end_for_problem(std::uint64_t failed, std::uint64_t n, const Problem& mine,
                                  Files& files, std::uint64_t kept) {
  files.close_all();
  char said[4096] = {};  // host, file and error, each NUL-terminated
  if (static_cast<std::uint64_t>(rt_.pid) == failed) {
    const std::string text = host_name() + '\0' + mine.file + '\0' + mine.error;
    std::memcpy(said, text.data(), std::min(text.size(), sizeof said - 1));
  }
  idle_broadcast(said, sizeof said, static_cast<int>(failed), comm_);
  const char* host = said;
  const char* file = host + std::strlen(host) + 1;
  const char* error = file < said + sizeof said ? file + std::strlen(file) + 1 : "";
  idle_barrier(comm_);
  if (lowest_on_host_ && dir_fd_ >= 0) remove_entry(dir_fd_, "c" + std::to_string(n));
  if (rt_.pid == 0) {
    std::fflush(stdout);
    const std::string kept_text = kept > 0 ? "checkpoint " + std::to_string(kept) + " is kept"
                                           : "there is no earlier checkpoint";
    std::fprintf(stderr, "bspg: checkpoint %llu could not be written on %s: %s: %s; %s\n",
                 static_cast<unsigned long long>(n), host, file, error, kept_text.c_str());
    std::fflush(stderr);
  }
  end_job(kept > 0 ? kStoppedAfterCheckpoint : 1);
}

// Every process ends here together, through MPI_Finalize, so that the starter reports `status`.
void Checkpoints::end_job(int status) {
  drain_output();
  if (lost_peers::enabled()) {
    // With spares (fault tolerance on), a process that passed the barrier and left would look
    // lost to one still in it, which would then take the end for a loss.
    lost_peers::stop_watching();
    lost_peers::barrier_before_leaving(comm_);
  } else {
    idle_barrier(comm_);
  }
  stop_together(rt_.pid, status);
}

// Where bsprun cannot ask the hosts afterwards (a Slurm allocation that ended under the job), this
// line, which its filter takes out, tells it which checkpoint the hosts hold whole.
void Checkpoints::say_whole(std::uint64_t n) {
  if (!say_whole_ || rt_.pid != 0) return;
  std::fprintf(stderr, "bspg: checkpoint %llu is whole\n", static_cast<unsigned long long>(n));
  std::fflush(stderr);
}

// bsprun asks a job to stop right after a checkpoint (to move it to other hosts) with a file "stop"
// in the checkpoint directory of any of its hosts, whose first line names the run.
bool Checkpoints::stop_requested() { return all_min(stop_file_here() ? 0 : 1, comm_) == 0; }

bool Checkpoints::stop_file_here() {
  return dir_fd_ >= 0 && first_line(dir_fd_, "stop") == hex_id(run_);
}

int Checkpoints::checkpoint() {
  plan("bspg_checkpoint");
  const std::uint64_t n = last_ + 1;
  if (!cleaned_) {
    cleaned_ = true;
    clean_up_first();
  }
  Files files;
  bool stop = false;
  if (memory_copies::on() && dir_fd_ >= 0) {
    // In memory on every process and its copy holders first (what a recovery in place reads).
    // One agreement for three things: the disk copy of the checkpoint before (written behind the
    // job) is durable everywhere, this one is in memory everywhere, and whether bsprun asked for
    // a stop; it is the checkpoint's last collective, so the next disk write slows none.
    const BehindEnd before = join_behind();
    const Problem in_memory = write_memory(n);
    std::uint64_t words[3] = {said_problem(before.problem), said_problem(in_memory),
                              stop_file_here() ? 0u : 1u};
    all_min(words, 3, comm_);
    Files none;
    if (words[0] != UINT64_MAX)
      end_for_problem(words[0], before.n, before.problem, none, before.kept);
    if (words[1] != UINT64_MAX) end_for_problem(words[1], n, in_memory, files, last_);
    if (before.n > 0) behind_durable(before.n, false);
    last_ = n;
    memory_copies::keep(n, run_);
    stop = words[2] == 0;
    write_behind(n);
  } else {
    // The checkpoint counts only once every shard, copy and marker is durable everywhere.
    agree(n, prepare(n, files), files, last_);
    agree(n, write_data(n, files), files, last_);
    agree(n, write_marker(n, files), files, last_);
    files.close_all();
    // Every marker is written (the agreement says so): the checkpoint before is no longer needed.
    if (lowest_on_host_) remove_checkpoints_before(dir_fd_, n);
    last_ = n;
    memory_copies::keep(n, run_);
    say_whole(n);
    stop = stop_requested();
  }
  if (stop) {
    finish_behind();  // bsprun continues the job from the disk
    if (rt_.pid == 0) {
      std::fprintf(stderr, "bspg: stopping after checkpoint %llu, as asked (%s/stop)\n",
                   static_cast<unsigned long long>(n), directory_.c_str());
      std::fflush(stderr);
    }
    end_job(kStoppedAfterCheckpoint);
  }
  return static_cast<int>(n);
}

}  // namespace bspg
