// profile.cpp - see profile.hpp.
#include "profile.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace bspg {

Profiler* g_profiler = nullptr;

namespace {

int sections_started = 0;  // SPMD sections started so far: the next one's number

// mkdir -p, for BSPG_PROFILE given to a job started by mpirun (bsprun makes DIR/raw itself).
bool make_directories(const std::string& path) {
  std::string prefix;
  std::size_t from = 0;
  while (from <= path.size()) {
    std::size_t slash = path.find('/', from);
    if (slash == std::string::npos) slash = path.size();
    prefix = path.substr(0, slash);
    if (!prefix.empty() && mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) return false;
    from = slash + 1;
  }
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// Removes the record files (a*.bspprof) in raw, a directory opened without following a link.
void remove_earlier_records(const std::string& raw) {
  const int fd = open(raw.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;  // not there yet: nothing to remove
  DIR* listing = fdopendir(fd);
  if (listing == nullptr) {
    close(fd);
    return;
  }
  while (const dirent* entry = readdir(listing)) {
    int attempt = 0, section = 0, pid = 0;
    if (profile::parse_record_file_name(entry->d_name, attempt, section, pid))
      unlinkat(fd, entry->d_name, 0);
  }
  closedir(listing);
}

// This process's clock minus process 0's, from the ping-pong with the smallest round trip (its
// error is at most half that round trip). Process 0 serves the others one after another.
double measure_clock_offset(MPI_Comm comm, int pid, int nprocs) {
  constexpr int kRounds = 8;
  constexpr int kTag = 0x5052;
  if (nprocs == 1) return 0;
  if (pid == 0) {
    for (int other = 1; other < nprocs; ++other)
      for (int r = 0; r < kRounds; ++r) {
        char ping;
        MPI_Recv(&ping, 1, MPI_CHAR, other, kTag, comm, MPI_STATUS_IGNORE);
        const double t = Profiler::monotonic_seconds();
        MPI_Send(&t, 1, MPI_DOUBLE, other, kTag, comm);
      }
    return 0;
  }
  double best_round_trip = 1e300, offset = 0;
  for (int r = 0; r < kRounds; ++r) {
    const char ping = 0;
    double remote = 0;
    const double sent = Profiler::monotonic_seconds();
    MPI_Send(&ping, 1, MPI_CHAR, 0, kTag, comm);
    MPI_Recv(&remote, 1, MPI_DOUBLE, 0, kTag, comm, MPI_STATUS_IGNORE);
    const double received = Profiler::monotonic_seconds();
    if (received - sent < best_round_trip) {
      best_round_trip = received - sent;
      offset = remote - (sent + received) / 2;
    }
  }
  return offset;
}

}  // namespace

Profiler::Profiler(int fd, int pid, int nprocs)
    : fd_(fd),
      pid_(pid),
      counts_(static_cast<std::size_t>(nprocs)),
      touched_flag_(static_cast<std::size_t>(nprocs)) {
  touched_.reserve(static_cast<std::size_t>(nprocs));
}

Profiler* Profiler::start(MPI_Comm comm, int pid, int nprocs) {
  // What process 0 was told: [attempt, length of DIR, section, job token], then DIR. Process 0
  // counts the sections: a process a master spawns for a later section has not seen the earlier
  // ones.
  int told[4] = {0, 0, sections_started, 0};
  std::string dir;
  if (pid == 0) {
    const char* d = std::getenv(profile::kProfileVariable);
    if (d != nullptr && *d != '\0') {
      dir = d;
      told[1] = static_cast<int>(dir.size());
      if (const char* a = std::getenv(profile::kAttemptVariable)) told[0] = std::atoi(a);
      if (const char* t = std::getenv(profile::kJobTokenVariable))
        told[3] = static_cast<int>(std::strtoul(t, nullptr, 10));
      // Under a plain mpirun nobody else clears what an earlier run left in DIR/raw (bsprun
      // does so itself, and keeps the records of earlier attempts): the program's first
      // profiled section does, before any process of this run writes there.
      static bool cleared = false;
      if (told[3] == 0 && !cleared) remove_earlier_records(dir + "/raw");
      cleared = true;
    }
  }
  MPI_Bcast(told, 4, MPI_INT, 0, comm);
  sections_started = told[2] + 1;  // every section counts, profiled or not
  if (told[1] == 0) return nullptr;
  dir.resize(static_cast<std::size_t>(told[1]));
  MPI_Bcast(&dir[0], told[1], MPI_CHAR, 0, comm);
  const int attempt = told[0];
  const int section = told[2];

  // Its own communicator, so that no message of the program or of the library can match.
  MPI_Comm own;
  MPI_Comm_dup(comm, &own);
  const double offset = measure_clock_offset(own, pid, nprocs);
  MPI_Comm_free(&own);

  const std::string raw = dir + "/raw";
  const std::string path = raw + "/" + profile::record_file_name(attempt, section, pid);
  int fd = -1;
  if (make_directories(raw))
    fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) {
    std::fprintf(stderr,
                 "bspg: process %d: profile: cannot write %s: %s; this process is not "
                 "profiled\n",
                 pid, path.c_str(), std::strerror(errno));
    return nullptr;
  }
  auto* profiler = new Profiler(fd, pid, nprocs);
  profiler->clock_offset_ = offset;

  profile::FileHeader header{};
  std::memcpy(header.magic, profile::kMagic, sizeof header.magic);
  header.version = profile::kVersion;
  header.pid = pid;
  header.nprocs = nprocs;
  header.attempt = attempt;
  header.section = section;
  header.job_token = static_cast<std::uint32_t>(told[3]);
  header.clock_offset_s = offset;
  header.first_superstep = 0;
  gethostname(header.host, sizeof header.host - 1);
  header.host[sizeof header.host - 1] = '\0';
  header.begin_s = profiler->now();
  if (char* at = profiler->reserve(sizeof header)) {
    std::memcpy(at, &header, sizeof header);
    profiler->used_ += sizeof header;
  }
  return profiler;
}

Profiler::~Profiler() {
  if (map_ != nullptr) munmap(map_, window_bytes_);
  // The space reserved ahead goes; a process that ends without coming here leaves it as zeros,
  // which bspprof reads as the end of the records.
  if ((ftruncate(fd_, static_cast<off_t>(used_)) != 0 || close(fd_) != 0) && !failed_)
    std::fprintf(stderr, "bspg: process %d: profile: could not finish writing the profile: %s\n",
                 pid_, std::strerror(errno));
}

char* Profiler::grow(std::size_t n) {
  if (failed_) return nullptr;
  // 1 MiB windows (about 12,000 syncs of a process that talks to one other): few remaps, and
  // memory that does not grow with the run. The file grows a window at a time, its blocks
  // taken now, so that a full disk is an error here and never a SIGBUS at a store.
  constexpr std::size_t kWindow = 1 << 20;
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const std::size_t start = used_ / page * page;
  const std::size_t size = std::max(kWindow, (used_ - start + n + page - 1) / page * page);
  int error = 0;
  if (start + size > file_bytes_) {
    error = posix_fallocate(fd_, static_cast<off_t>(file_bytes_),
                            static_cast<off_t>(start + size - file_bytes_));
    if (error == 0) file_bytes_ = start + size;
  }
  void* map = MAP_FAILED;
  if (error == 0) {
    if (map_ != nullptr) munmap(map_, window_bytes_);
    map_ = nullptr;
    map = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, static_cast<off_t>(start));
    if (map == MAP_FAILED) error = errno;
  }
  if (error != 0) {
    failed_ = true;
    std::fprintf(stderr,
                 "bspg: process %d: profile: the profile file cannot grow to %zu bytes: %s; the "
                 "rest of this process's supersteps are not recorded\n",
                 pid_, start + size, std::strerror(error));
    return nullptr;
  }
  map_ = static_cast<char*>(map);
  window_start_ = start;
  window_bytes_ = size;
  return map_ + (used_ - start);
}

void Profiler::continue_at(std::uint64_t supersteps) {
  if (supersteps == 0) return;
  // A checkpoint is taken at a world sync: the groups' syncs count from there again.
  for (std::uint32_t& s : group_steps_) s = 0;
  if (used_ < sizeof(profile::FileHeader)) return;  // no header was written
  // Through the descriptor: the mapped window may have moved past the header.
  const std::uint64_t first = supersteps;
  if (pwrite(fd_, &first, sizeof first, offsetof(profile::FileHeader, first_superstep)) !=
      static_cast<ssize_t>(sizeof first))
    std::fprintf(stderr, "bspg: process %d: profile: cannot write the first superstep: %s\n", pid_,
                 std::strerror(errno));
}

void Profiler::record_sync(profile::SyncKind kind, int group, int group_first, int group_size,
                           double call_s, std::uint64_t superstep) {
  profile::SyncRecord record{};
  record.kind = static_cast<std::uint32_t>(kind);
  record.group = group;
  record.group_first = group_first;
  record.superstep = superstep;
  if (group >= 0) {
    if (group_steps_.size() <= static_cast<std::size_t>(group))
      group_steps_.resize(static_cast<std::size_t>(group) + 1);
    record.group_step = group_steps_[static_cast<std::size_t>(group)]++;
  }
  record.call_s = call_s;
  record.return_s = now();
  record.group_size = static_cast<std::uint32_t>(group_size);
  record.n_peers = static_cast<std::uint32_t>(touched_.size());
  // The kind goes in last: a process killed while copying leaves a record of kind 0, which
  // bspprof reads as the end of the file, never as a damaged record.
  const std::uint32_t kind_value = record.kind;
  record.kind = 0;
  char* at = reserve(sizeof record + touched_.size() * sizeof(profile::PeerCount));
  char* const record_at = at;
  if (at != nullptr) {
    std::memcpy(at, &record, sizeof record);
    at += sizeof record;
  }
  for (int peer : touched_) {
    profile::PeerCount& c = counts_[static_cast<std::size_t>(peer)];
    c.peer = peer;
    if (at != nullptr) {
      std::memcpy(at, &c, sizeof c);
      at += sizeof c;
    }
    c = profile::PeerCount{};
    touched_flag_[static_cast<std::size_t>(peer)] = 0;
  }
  touched_.clear();
  if (record_at != nullptr) {
    std::atomic_signal_fence(std::memory_order_release);
    std::memcpy(record_at + offsetof(profile::SyncRecord, kind), &kind_value, sizeof kind_value);
    used_ = window_start_ + static_cast<std::size_t>(at - map_);
  }
  if (group < 0)
    for (std::uint32_t& s : group_steps_) s = 0;
}

}  // namespace bspg
