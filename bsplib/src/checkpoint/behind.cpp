// behind.cpp - a checkpoint's disk copy written behind the job. With in-memory copies (bsprun
// --spares) a checkpoint counts for a recovery in place once its bytes are in memory on every
// process and its copy holders; the same bytes then go to the checkpoint directory from a thread
// of this process's own (files, fsync, rename, then the complete marker: the layout bsprun
// reads), while the job goes on. The thread makes no MPI call. The next checkpoint, bsp_end or a
// stop waits for it and agrees on it with the others: only then are the older checkpoints
// removed, and a failure there ends the job as a failed write always did.
#include "behind.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

#include "checkpoint_internal.hpp"
#include "memory_copies.hpp"
#include "runtime.hpp"
#include "shard.hpp"

namespace bspg {

using namespace checkpoint_internal;  // what the checkpoint files share (checkpoint_internal.hpp)

Checkpoints::DiskWrite::~DiskWrite() {
  for (auto& file : files)
    if (file.second >= 0) ::close(file.second);
  if (dir >= 0) ::close(dir);
}

void Checkpoints::DiskWrite::run() {
  // The job's own threads first: this one takes what CPU time they leave (the next checkpoint
  // waits for it, and gives it the time then).
  setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), 19);
  // The checkpoints before the last durable one, freed here rather than in the job's time.
  if (remove_before > 0) remove_checkpoints_before(dir, remove_before);
  const std::string name = "c" + std::to_string(n);
  if (mkdirat(dir, name.c_str(), 0700) != 0 && errno != EEXIST) return note(path);
  const int at = openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (at < 0) return note(path);
  std::vector<char> buffer(static_cast<std::size_t>(kChunkBytes));
  for (const auto& [final_name, from] : files)
    if (!copy_out(at, final_name, from, buffer)) break;
  if (problem.empty() && !cancel && fsync(at) != 0) note(path);
  if (problem.empty() && !cancel) write_marker(at);
  ::close(at);
}

void Checkpoints::DiskWrite::note(const std::string& file) {
  if (problem.empty()) problem = problem_at(file);
}

// One in-memory file into c<n>/NAME: written as NAME.part, fsync'ed, closed and renamed.
bool Checkpoints::DiskWrite::copy_out(int at, const std::string& final_name, int from,
                                      std::vector<char>& buffer) {
  const std::string part = final_name + ".part", file = path + "/" + part;
  const int to =
      openat(at, part.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (to < 0) {
    note(file);
    return false;
  }
  bool ok = true;
  for (off_t offset = 0; ok && !cancel;) {
    const ssize_t got = pread(from, buffer.data(), buffer.size(), offset);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      if (problem.empty())
        problem = {file, std::string("reading the in-memory copy: ") + std::strerror(errno)};
      ok = false;
    } else if (got == 0) {
      break;
    } else if (!write_all(to, buffer.data(), static_cast<std::size_t>(got))) {
      note(file);
      ok = false;
    } else {
      offset += got;
    }
  }
  if (ok && !cancel && fsync(to) != 0) note(file), ok = false;
  if (::close(to) != 0 && ok) note(file), ok = false;
  if (ok && !cancel && renameat(at, part.c_str(), at, final_name.c_str()) != 0)
    note(path + "/" + final_name), ok = false;
  return ok && !cancel;
}

void Checkpoints::DiskWrite::write_marker(int at) {
  const std::string part = marker_name + ".part", file = path + "/" + part;
  const int fd =
      openat(at, part.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return note(file);
  const bool written = write_all(fd, marker.data(), marker.size()) && fsync(fd) == 0;
  if (!written) note(file);
  if (::close(fd) != 0) note(file);
  if (!problem.empty()) return;
  if (renameat(at, part.c_str(), at, marker_name.c_str()) != 0)
    return note(path + "/" + marker_name);
  if (fsync(at) != 0) note(path);
}

Checkpoints::~Checkpoints() { cancel_behind(); }

void Checkpoints::write_behind(std::uint64_t n) {
  auto write = std::make_unique<DiskWrite>();
  write->n = n;
  write->kept = disk_last_ > 0 ? disk_last_ : n - 1;
  write->path = directory_ + "/c" + std::to_string(n);
  write->dir = fcntl(dir_fd_, F_DUPFD_CLOEXEC, 0);
  const auto add = [&](const std::string& name, int memory) {
    write->files.emplace_back(name, memory >= 0 ? fcntl(memory, F_DUPFD_CLOEXEC, 0) : -1);
  };
  add("shard-" + std::to_string(rt_.pid), memory_copies::kept_own());
  for (int ward : wards_) add("copy-" + std::to_string(ward), memory_copies::kept_copy(ward));
  write->marker_name = "complete-" + std::to_string(rt_.pid);
  write->marker = complete_marker(n, rt_.nprocs, hex_id(run_), program_id_);
  if (lowest_on_host_ && remove_pending_) write->remove_before = disk_last_;
  remove_pending_ = false;
  // Only checkpoint n's own in-memory files (a memory file that could not be made leaves the one
  // before kept: never written under n's name).
  bool taken = write->dir >= 0;
  for (const auto& file : write->files) taken = taken && file.second >= 0;
  const int why = errno;
  if (memory_copies::kept() != n) {
    write->problem = {write->path, "its copy in memory is missing (it could not be made)"};
  } else if (!taken) {
    write->problem = {write->path, std::string("cannot take its copy in memory: ") +
                                       std::strerror(why != 0 ? why : EBADF)};
  } else {
    DiskWrite* w = write.get();
    write->thread = std::thread([w] { w->run(); });
  }
  behind_ = std::move(write);
}

Checkpoints::BehindEnd Checkpoints::join_behind() {
  if (!behind_) return {};
  if (behind_->thread.joinable()) behind_->thread.join();
  BehindEnd end{behind_->n, behind_->kept, behind_->problem};
  behind_.reset();
  return end;
}

void Checkpoints::finish_behind(bool remove_now) {
  const BehindEnd end = join_behind();
  if (end.n == 0) return;
  Files none;
  agree(end.n, end.problem, none, end.kept);
  behind_durable(end.n, remove_now);
}

// Every process's files of checkpoint n are durable: the ones before it are no longer needed.
// Removing them takes time (tens of ms for large shards): the next disk write does it, where
// there is one (remove_now false).
void Checkpoints::behind_durable(std::uint64_t n, bool remove_now) {
  disk_last_ = n;
  remove_pending_ = !remove_now;
  if (remove_now && lowest_on_host_) remove_checkpoints_before(dir_fd_, n);
  say_whole(n);
}

void Checkpoints::cancel_behind() {
  if (!behind_) return;
  behind_->cancel = true;
  if (behind_->thread.joinable()) behind_->thread.join();
  behind_.reset();
}

}  // namespace bspg
