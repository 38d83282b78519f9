// resuming.cpp - bspg_resume: which checkpoint every process can read, and this process's shard,
// or else its buddy's copy, read back into the persisted areas and the message queue.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "checkpoint_internal.hpp"
#include "errors.hpp"
#include "memory_copies.hpp"
#include "runtime.hpp"
#include "shard.hpp"

namespace bspg {

using namespace checkpoint_internal;  // what the checkpoint files share (checkpoint_internal.hpp)

namespace {

bool read_all(int fd, void* into, std::uint64_t n) {
  char* at = static_cast<char*>(into);
  while (n > 0) {
    const ssize_t got = read(fd, at, n < kChunkBytes ? n : kChunkBytes);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    at += got;
    n -= static_cast<std::uint64_t>(got);
  }
  return true;
}

// Numbers N of the directories c<N> (real directories, not links) in dir.
std::vector<std::uint64_t> checkpoint_directories(int dir) {
  std::vector<std::uint64_t> numbers;
  for (const std::string& name : entries(dir)) {
    const long long n = checkpoint_number(name);
    struct stat info {};
    if (n > 0 && fstatat(dir, name.c_str(), &info, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISDIR(info.st_mode))
      numbers.push_back(static_cast<std::uint64_t>(n));
  }
  return numbers;
}

// Largest value over all processes (all_min is in checkpoint.cpp).
std::uint64_t all_max(std::uint64_t mine, MPI_Comm comm) {
  return UINT64_MAX - all_min(UINT64_MAX - mine, comm);
}

}  // namespace

// Reads a shard into the persisted areas and the restored queue: "" or why it cannot be used.
// Only a regular file is read, never through a symbolic link; a shard of another run than `run`
// (the one being restored) is not used. ShardReader allocates nothing the file cannot hold.
std::string Checkpoints::read_shard(std::uint64_t n, int dir, const char* kind, std::uint64_t run) {
  if (dir < 0) return "missing";
  std::string why;
  const int fd = open_regular(dir, kind + ("-" + std::to_string(rt_.pid)), why);
  if (fd < 0) return why;
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  return read_shard_from(n, fd, run);
}

// The shard in the open file fd, read from its start.
std::string Checkpoints::read_shard_from(std::uint64_t n, int fd, std::uint64_t run) {
  if (lseek(fd, 0, SEEK_SET) != 0) return std::string("unreadable: ") + std::strerror(errno);
  ShardReader reader(fd);
  const ShardReader::Expected expected{n, static_cast<std::uint32_t>(rt_.pid)};
  if (std::string problem = reader.read_header(&expected); !problem.empty()) return problem;
  const ShardHeader& header = reader.header();
  const std::string header_run(header.run, sizeof header.run);
  if (id_value(header_run) != run) return "of another run (" + header_run + ")";
  // Program mismatches are not damage: no copy would do better.
  if (header.nprocs != static_cast<std::uint32_t>(rt_.nprocs))
    fail("bspg_resume", "checkpoint %llu was written by %u processes, this run has %d",
         static_cast<unsigned long long>(n), header.nprocs, rt_.nprocs);
  if (std::string problem = reader.read_sizes(); !problem.empty()) return problem;
  const std::vector<std::uint64_t>& sizes = reader.area_sizes();
  const std::vector<std::int64_t>& registered = reader.registered();
  bool same_areas = sizes.size() == areas_.size();
  for (std::size_t a = 0; same_areas && a < sizes.size(); ++a)
    same_areas = sizes[a] == areas_[a].bytes;
  if (!same_areas) {
    std::string had, has;
    for (std::uint64_t s : sizes) had += (had.empty() ? "" : ", ") + std::to_string(s);
    for (const Area& a : areas_) has += (has.empty() ? "" : ", ") + std::to_string(a.bytes);
    fail("bspg_resume",
         "checkpoint %llu holds %zu persisted area(s) of %s bytes; this run declared %zu of %s "
         "bytes (bspg_persist the same areas in the same order)",
         static_cast<unsigned long long>(n), sizes.size(), had.empty() ? "no" : had.c_str(),
         areas_.size(), has.empty() ? "no" : has.c_str());
  }
  if (registered != rt_.registry.live_sizes(rt_.pid))
    fail("bspg_resume",
         "checkpoint %llu was taken with %zu registration(s) in force, this run has %zu (or other "
         "sizes): register the same areas before bspg_resume",
         static_cast<unsigned long long>(n), registered.size(), rt_.registry.live_slots());
  std::vector<void*> places;
  for (const Area& area : areas_) places.push_back(area.address);
  if (std::string problem = reader.read_areas(places); !problem.empty()) return problem;
  restored_queue_.clear();
  std::vector<std::pair<std::size_t, std::uint32_t>> tags;  // (offset, tag bytes) per message
  std::vector<std::uint32_t> payloads;
  for (std::uint64_t m = 0; m < header.messages; ++m) {
    const std::size_t at = restored_queue_.size();
    std::uint32_t tag_bytes = 0, payload_bytes = 0;
    const std::string problem =
        reader.read_message(tag_bytes, payload_bytes,
                            [this](std::size_t bytes) { return restored_queue_.extend(bytes); });
    if (!problem.empty()) return problem;
    tags.emplace_back(at, tag_bytes);
    payloads.push_back(payload_bytes);
  }
  if (std::string problem = reader.finish(); !problem.empty()) return problem;
  rt_.queue.clear();
  for (std::size_t m = 0; m < tags.size(); ++m) {
    const char* tag = restored_queue_.data() + tags[m].first;
    rt_.queue.add_restored({tag, tag + tags[m].second, tags[m].second, payloads[m]});
  }
  rt_.tag_nbytes = header.tag_nbytes;
  // The world superstep count goes on from the checkpoint's (unknown in a version 2 shard: 0),
  // never back: the syncs before bspg_resume were this attempt's own.
  restored_supersteps_ = header.supersteps;
  rt_.world_syncs = std::max(rt_.world_syncs, header.supersteps);
  return "";
}

// The newest run that a complete marker of c<n> on this host names (0: none). Where bsprun gave
// the run, only markers of that run count.
std::uint64_t Checkpoints::marker_run(std::uint64_t n) {
  std::uint64_t newest = 0;
  const int dir = openat(dir_fd_, ("c" + std::to_string(n)).c_str(),
                         O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir < 0) return 0;
  for (const std::string& name : entries(dir)) {
    if (name.rfind("complete-", 0) != 0 || name.find('.') != std::string::npos) continue;
    std::uint64_t number = 0;
    int nprocs = 0;
    std::string run, program;
    if (!parse_complete_marker(first_line(dir, name) + "\n", number, nprocs, run, program) ||
        number != n)
      continue;
    const std::uint64_t id = id_value(run);
    if (!run_given_ || id == run_) newest = std::max(newest, id);
  }
  ::close(dir);
  return newest;
}

// Whether this process's shard or copy of checkpoint n is a regular file whose header names run.
bool Checkpoints::holds_shard_of(std::uint64_t n, std::uint64_t run) {
  const int dir = openat(dir_fd_, ("c" + std::to_string(n)).c_str(),
                         O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir < 0) return false;
  bool holds = false;
  for (const char* kind : {"shard", "copy"}) {
    std::string why;
    const int fd = open_regular(dir, kind + ("-" + std::to_string(rt_.pid)), why);
    if (fd < 0) continue;
    ShardHeader header{};
    holds = holds || (read_all(fd, &header, kVersion2HeaderBytes) &&
                      readable_shard_version(header.version) && header.checkpoint == n &&
                      header.pid == static_cast<std::uint32_t>(rt_.pid) &&
                      id_value(std::string(header.run, sizeof header.run)) == run);
    ::close(fd);
  }
  ::close(dir);
  return holds;
}

// The newest checkpoint whose complete markers and shards agree on the run, and that every process
// can read here; its run in `run`.
std::uint64_t Checkpoints::newest_readable_everywhere(std::uint64_t& run) {
  std::vector<std::uint64_t> mine = checkpoint_directories(dir_fd_);
  std::sort(mine.rbegin(), mine.rend());
  std::uint64_t bound = UINT64_MAX;
  for (;;) {
    std::uint64_t candidate = 0;
    for (std::uint64_t m : mine)
      if (m <= bound) {
        candidate = m;
        break;
      }
    const std::uint64_t agreed = all_min(candidate, comm_);  // the newest every process may have
    if (agreed == 0) return 0;
    run = all_max(marker_run(agreed), comm_);  // the run whose markers some process saw
    if (run != 0 && all_min(holds_shard_of(agreed, run) ? 1 : 0, comm_) == 1) return agreed;
    bound = agreed - 1;
  }
}

int Checkpoints::resume() {
  plan("bspg_resume");
  if (memory_copies::resuming_from_memory()) return resume_from_memory();
  if (resume_.empty() || resume_ == "0") return 0;
  {
    const std::uint64_t failed =
        all_min(dir_fd_ >= 0 ? UINT64_MAX : static_cast<std::uint64_t>(rt_.pid), comm_);
    if (failed != UINT64_MAX)
      fail_collective(static_cast<int>(failed), "bspg_resume",
                      "cannot open the checkpoint directory: %s: %s", unavailable_.file.c_str(),
                      unavailable_.error.c_str());
  }
  std::uint64_t n = 0, run = 0;
  if (resume_ == "last") {
    n = newest_readable_everywhere(run);
    if (n == 0)
      fail_collective(
          0, "bspg_resume",
          "BSPG_RESUME=last, but %s holds no complete checkpoint that every process can read",
          directory_.c_str());
  } else {
    char* end = nullptr;
    n = std::strtoull(resume_.c_str(), &end, 10);
    if (!end || *end != '\0' || n == 0 || resume_[0] == '-')
      fail("bspg_resume", "BSPG_RESUME='%s' is not a checkpoint number (1, 2, ...), 0 or 'last'",
           resume_.c_str());
    // The run being restored: bsprun's, else the one its markers name, else pid 0's shard's.
    run = run_given_ ? run_ : all_max(marker_run(n), comm_);
    if (run == 0) {
      std::uint64_t header_run = 0;
      if (rt_.pid == 0) {
        const int dir = openat(dir_fd_, ("c" + std::to_string(n)).c_str(),
                               O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        for (const char* kind : {"shard", "copy"}) {
          std::string why;
          const int fd = dir < 0 ? -1 : open_regular(dir, kind + std::string("-0"), why);
          ShardHeader header{};
          if (fd >= 0 && read_all(fd, &header, kVersion2HeaderBytes) && header_run == 0)
            header_run = id_value(std::string(header.run, sizeof header.run));
          if (fd >= 0) ::close(fd);
        }
        if (dir >= 0) ::close(dir);
      }
      idle_broadcast(&header_run, sizeof header_run, 0, comm_);
      run = header_run;
    }
  }
  const int dir = openat(dir_fd_, ("c" + std::to_string(n)).c_str(),
                         O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  std::string problem = read_shard(n, dir, "shard", run);
  if (!problem.empty()) {
    const std::string first = problem;
    problem = read_shard(n, dir, "copy", run);
    if (problem.empty()) {
      std::fprintf(stderr, "bspg: process %d: checkpoint %llu: %s is %s; using the buddy's copy\n",
                   rt_.pid, static_cast<unsigned long long>(n),
                   shard_path(n, "shard", rt_.pid).c_str(), first.c_str());
      std::fflush(stderr);
    } else {
      problem = shard_path(n, "shard", rt_.pid) + " is " + first + ", and " +
                shard_path(n, "copy", rt_.pid) + " is " + problem;
    }
  }
  if (dir >= 0) ::close(dir);
  const std::uint64_t failed =
      all_min(problem.empty() ? UINT64_MAX : static_cast<std::uint64_t>(rt_.pid), comm_);
  if (failed != UINT64_MAX)
    fail_collective(static_cast<int>(failed), "bspg_resume",
                    "checkpoint %llu cannot be restored: %s", static_cast<unsigned long long>(n),
                    problem.c_str());
  // Later checkpoints carry the restored run (pid 0's shard names it, as every process's does).
  idle_broadcast(&run, sizeof run, 0, comm_);
  run_ = run;
  last_ = n;
  return static_cast<int>(n);
}

// After a recovery in place: the checkpoint every process kept in memory (the same one: the
// sections part checked), from its own shard or, on a spare, the one a holder sent it; no file
// is read. None kept: the job starts again from its beginning, as bspg_resume's 0 says.
int Checkpoints::resume_from_memory() {
  memory_copies::resume_from_memory(false);
  const std::uint64_t n = memory_copies::kept();
  if (all_min(n, comm_) == 0) return 0;
  const std::string problem =
      read_shard_from(n, memory_copies::kept_own(), memory_copies::kept_run());
  const std::uint64_t failed =
      all_min(problem.empty() ? UINT64_MAX : static_cast<std::uint64_t>(rt_.pid), comm_);
  if (failed != UINT64_MAX)
    fail_collective(static_cast<int>(failed), "bspg_resume",
                    "checkpoint %llu cannot be restored from memory after a recovery in place: %s",
                    static_cast<unsigned long long>(n), problem.c_str());
  run_ = memory_copies::kept_run();
  last_ = n;
  return static_cast<int>(n);
}

}  // namespace bspg
