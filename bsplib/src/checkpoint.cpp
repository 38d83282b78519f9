#include "checkpoint.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "errors.hpp"
#include "runtime.hpp"
#include "shard.hpp"

namespace bspg {
namespace {

constexpr std::uint64_t kChunkBytes = std::uint64_t{8} << 20;  // shard traffic and file I/O
constexpr int kSizeTag = 1, kDataTag = 2;

std::string errno_text() { return std::strerror(errno); }

// mkdir -p; "" or why not.
std::string make_directories(const std::string& path) {
  std::string partial;
  std::size_t at = 0;
  while (at != std::string::npos) {
    at = path.find('/', at + 1);
    partial = path.substr(0, at);
    if (partial.empty()) continue;
    if (mkdir(partial.c_str(), 0700) != 0 && errno != EEXIST)
      return "cannot create directory " + partial + ": " + errno_text();
  }
  return "";
}

bool sync_directory(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = fsync(fd) == 0;
  ::close(fd);
  return ok;
}

// Writes n bytes, all of them; false with errno set on failure.
bool write_all(int fd, const char* data, std::uint64_t n) {
  while (n > 0) {
    const ssize_t done = write(fd, data, n < kChunkBytes ? n : kChunkBytes);
    if (done < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += done;
    n -= static_cast<std::uint64_t>(done);
  }
  return true;
}

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

// Numbers N of the directories c<N> in dir.
std::vector<std::uint64_t> checkpoint_numbers(const std::string& dir) {
  std::vector<std::uint64_t> numbers;
  DIR* d = opendir(dir.c_str());
  if (!d) return numbers;
  while (const dirent* entry = readdir(d)) {
    if (entry->d_name[0] != 'c') continue;
    char* end = nullptr;
    const unsigned long long n = std::strtoull(entry->d_name + 1, &end, 10);
    if (n > 0 && end && *end == '\0') numbers.push_back(n);
  }
  closedir(d);
  return numbers;
}

void remove_tree(const std::string& path) {
  if (DIR* d = opendir(path.c_str())) {
    while (const dirent* entry = readdir(d))
      if (std::strcmp(entry->d_name, ".") && std::strcmp(entry->d_name, ".."))
        unlink((path + "/" + entry->d_name).c_str());
    closedir(d);
  }
  rmdir(path.c_str());
}

bool exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

std::string program_name() {
  char path[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return "program";
  path[n] = '\0';
  const char* slash = std::strrchr(path, '/');
  return slash ? slash + 1 : path;
}

// Smallest value over all processes, with idle waiting.
std::uint64_t all_min(std::uint64_t mine, MPI_Comm comm) {
  std::uint64_t result = 0;
  MPI_Request request;
  MPI_Iallreduce(&mine, &result, 1, MPI_UINT64_T, unsigned_min_op(), comm, &request);
  wait_idle(&request);
  return result;
}

void idle_barrier(MPI_Comm comm) {
  MPI_Request request;
  MPI_Ibarrier(comm, &request);
  wait_idle(&request);
}

}  // namespace

Checkpoints::Checkpoints(Runtime& runtime) : rt_(runtime) {
  if (const char* dir = std::getenv("BSPG_CHECKPOINT_DIR"); dir && *dir) {
    directory_ = dir;
    // "~/..." is each process's own home: bsprun's default directory is one value for every host
    // of a job, and the hosts' users (and their homes) may differ.
    if (directory_.rfind("~/", 0) == 0) {
      const char* home = std::getenv("HOME");
      if (!home || *home != '/')
        fail("bspg_checkpoint",
             "BSPG_CHECKPOINT_DIR='%s' starts with ~/, but HOME is not an absolute path", dir);
      directory_ = home + directory_.substr(1);
    }
    if (directory_[0] != '/')
      fail("bspg_checkpoint", "BSPG_CHECKPOINT_DIR='%s' is not an absolute path", dir);
  } else {
    const char* tmp = std::getenv("TMPDIR");
    directory_ = std::string(tmp && *tmp ? tmp : "/tmp") + "/bspg-" + std::to_string(getuid()) +
                 "-checkpoints/" + program_name();
  }
  while (directory_.size() > 1 && directory_.back() == '/') directory_.pop_back();
  if (const char* resume = std::getenv("BSPG_RESUME")) resume_ = resume;
}

void Checkpoints::close() {
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

void Checkpoints::persist(void* address, std::uint64_t bytes) {
  areas_.push_back({static_cast<char*>(address), bytes});
}

std::string Checkpoints::shard_path(std::uint64_t n, const char* kind, int pid) const {
  return directory_ + "/c" + std::to_string(n) + "/" + kind + "-" + std::to_string(pid);
}

// Buddies: processes are grouped by subjob where there are several, else by host; each keeps a
// copy of a process in the next group (the same index there, cyclically), so losing one group
// (host) loses no shard that has no copy elsewhere. On a single host the next process keeps it.
void Checkpoints::plan() {
  if (planned_) return;
  planned_ = true;
  MPI_Comm_dup(rt_.comm, &comm_);
  const int p = rt_.nprocs, me = rt_.pid;
  int key = rt_.subjob;
  MPI_Comm node;
  MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, me, MPI_INFO_NULL, &node);
  int node_rank = 0;
  MPI_Comm_rank(node, &node_rank);
  lowest_on_host_ = node_rank == 0;  // ranks follow pids: it alone clears the host's directory
  if (rt_.subjob_sizes.size() <= 1) {
    int leader = me;
    MPI_Allreduce(&me, &leader, 1, MPI_INT, MPI_MIN, node);  // the host's lowest pid names it
    key = leader;
  }
  MPI_Comm_free(&node);
  std::vector<int> keys(static_cast<std::size_t>(p));
  MPI_Allgather(&key, 1, MPI_INT, keys.data(), 1, MPI_INT, comm_);
  std::vector<int> group_keys(keys);
  std::sort(group_keys.begin(), group_keys.end());
  group_keys.erase(std::unique(group_keys.begin(), group_keys.end()), group_keys.end());
  auto buddy_of = [&](int pid) {
    if (p == 1) return -1;
    if (group_keys.size() == 1) return (pid + 1) % p;
    const auto g = std::lower_bound(group_keys.begin(), group_keys.end(),
                                    keys[static_cast<std::size_t>(pid)]) -
                   group_keys.begin();
    const int next_key = group_keys[static_cast<std::size_t>(g + 1) % group_keys.size()];
    int index = 0;  // pid's position in its own group
    for (int q = 0; q < pid; ++q)
      index += keys[static_cast<std::size_t>(q)] == keys[static_cast<std::size_t>(pid)];
    std::vector<int> next;
    for (int q = 0; q < p; ++q)
      if (keys[static_cast<std::size_t>(q)] == next_key) next.push_back(q);
    return next[static_cast<std::size_t>(index) % next.size()];
  };
  buddy_ = buddy_of(me);
  for (int q = 0; q < p; ++q)
    if (q != me && buddy_of(q) == me) wards_.push_back(q);
}

std::vector<Checkpoints::Piece> Checkpoints::serialize(std::uint64_t n, ByteBuffer& head,
                                                       ByteBuffer& tail) {
  const std::vector<std::int64_t> registered = rt_.registry.live_sizes(rt_.pid);
  ShardHeader header{};
  std::memcpy(header.magic, kShardMagic, sizeof header.magic);
  header.version = kShardVersion;
  header.pid = static_cast<std::uint32_t>(rt_.pid);
  header.nprocs = static_cast<std::uint32_t>(rt_.nprocs);
  header.tag_nbytes = rt_.tag_nbytes;
  header.checkpoint = n;
  header.areas = areas_.size();
  header.registrations = registered.size();
  header.messages = rt_.queue.size() - rt_.queue_head;
  head.clear();
  head.append(&header, sizeof header);
  for (const Area& area : areas_) head.append(&area.bytes, sizeof area.bytes);
  for (std::int64_t size : registered) head.append(&size, sizeof size);
  tail.clear();
  for (std::size_t m = rt_.queue_head; m < rt_.queue.size(); ++m) {
    const Message& message = rt_.queue[m];
    tail.append(&message.tag_nbytes, 4);
    tail.append(&message.payload_nbytes, 4);
    tail.append(message.tag, message.tag_nbytes);
    tail.append(message.payload, message.payload_nbytes);
  }
  std::vector<Piece> pieces{{head.data(), head.size()}};
  for (const Area& area : areas_)
    if (area.bytes) pieces.push_back({area.address, area.bytes});
  pieces.push_back({tail.data(), tail.size()});
  std::uint64_t total = sizeof(std::uint64_t);
  for (const Piece& piece : pieces) total += piece.bytes;
  reinterpret_cast<ShardHeader*>(head.data())->file_bytes = total;
  ShardHash hash;
  for (const Piece& piece : pieces) hash.update(piece.data, piece.bytes);
  const std::uint64_t checksum = hash.value();
  tail.append(&checksum, sizeof checksum);
  pieces.back() = {tail.data(), tail.size()};
  return pieces;
}

// Writes our shard, sends it to the buddy and writes the copies we keep, interleaving file writes
// with MPI progress so that the transfers overlap the disk. Files appear under their names only
// once written and fsync'ed (written as .part, then renamed).
std::string Checkpoints::write_checkpoint(std::uint64_t n) {
  const std::string dir = directory_ + "/c" + std::to_string(n);
  if (std::string problem = make_directories(dir); !problem.empty()) return problem;
  ByteBuffer head, tail;
  const std::vector<Piece> pieces = serialize(n, head, tail);
  std::uint64_t total = 0;
  for (const Piece& piece : pieces) total += piece.bytes;

  // To the buddy: the size, then the pieces in messages of at most kChunkBytes, straight from
  // memory.
  std::vector<MPI_Request> sends;
  if (buddy_ >= 0) {
    sends.emplace_back();
    MPI_Isend(&total, 1, MPI_UINT64_T, buddy_, kSizeTag, comm_, &sends.back());
    for (const Piece& piece : pieces)
      for (std::uint64_t at = 0; at < piece.bytes; at += kChunkBytes) {
        sends.emplace_back();
        MPI_Isend(piece.data + at, static_cast<int>(std::min(kChunkBytes, piece.bytes - at)),
                  MPI_BYTE, buddy_, kDataTag, comm_, &sends.back());
      }
  }
  // From each ward: the size, then chunks into two alternating buffers.
  struct Incoming {
    int from;
    int fd = -1;
    std::uint64_t expected = 0, received = 0;
    bool sized = false;
    ByteBuffer buffers[2];
    int next = 0;  // buffer the next chunk arrives in
    MPI_Request request = MPI_REQUEST_NULL;
  };
  std::vector<Incoming> incoming(wards_.size());
  std::string error;
  for (std::size_t w = 0; w < wards_.size(); ++w) {
    Incoming& in = incoming[w];
    in.from = wards_[w];
    in.fd = open((shard_path(n, "copy", in.from) + ".part").c_str(),
                 O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (in.fd < 0 && error.empty())
      error = "cannot create " + shard_path(n, "copy", in.from) + ".part: " + errno_text();
    MPI_Irecv(&in.expected, 1, MPI_UINT64_T, in.from, kSizeTag, comm_, &in.request);
  }
  const int own = open((shard_path(n, "shard", rt_.pid) + ".part").c_str(),
                       O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (own < 0 && error.empty())
    error = "cannot create " + shard_path(n, "shard", rt_.pid) + ".part: " + errno_text();

  std::size_t piece = 0;
  std::uint64_t piece_at = 0;
  IdlePacer pacer;
  for (;;) {
    bool progress = false;
    for (Incoming& in : incoming) {
      if (in.request == MPI_REQUEST_NULL) continue;
      int done = 0;
      MPI_Status status;
      MPI_Test(&in.request, &done, &status);
      if (!done) continue;
      progress = true;
      if (!in.sized) {
        in.sized = true;
      } else {
        int got = 0;
        MPI_Get_count(&status, MPI_BYTE, &got);
        const ByteBuffer& chunk = in.buffers[in.next ^ 1];
        if (in.fd >= 0 && !write_all(in.fd, chunk.data(), static_cast<std::uint64_t>(got)) &&
            error.empty())
          error = "cannot write " + shard_path(n, "copy", in.from) + ".part: " + errno_text();
        in.received += static_cast<std::uint64_t>(got);
      }
      if (in.received < in.expected) {
        ByteBuffer& into = in.buffers[in.next];
        if (into.size() < kChunkBytes) into.extend(kChunkBytes - into.size());
        MPI_Irecv(into.data(), static_cast<int>(kChunkBytes), MPI_BYTE, in.from, kDataTag, comm_,
                  &in.request);
        in.next ^= 1;
      }
    }
    if (piece < pieces.size()) {  // a chunk of our own shard
      const Piece& p = pieces[piece];
      const std::uint64_t n_bytes = std::min(kChunkBytes, p.bytes - piece_at);
      if (own >= 0 && !write_all(own, p.data + piece_at, n_bytes) && error.empty())
        error = "cannot write " + shard_path(n, "shard", rt_.pid) + ".part: " + errno_text();
      piece_at += n_bytes;
      if (piece_at >= p.bytes) ++piece, piece_at = 0;
      continue;
    }
    bool waiting = false;
    for (const Incoming& in : incoming) waiting = waiting || in.request != MPI_REQUEST_NULL;
    if (!waiting) break;
    if (progress)
      pacer.reset();
    else
      pacer.idle();
  }
  if (!sends.empty()) wait_idle(static_cast<int>(sends.size()), sends.data());

  // Durable under their final names.
  auto seal = [&](int fd, const std::string& final_name) {
    if (fd < 0) return;
    if (fsync(fd) != 0 && error.empty())
      error = "cannot fsync " + final_name + ".part: " + errno_text();
    ::close(fd);
    if (error.empty() && rename((final_name + ".part").c_str(), final_name.c_str()) != 0)
      error = "cannot rename " + final_name + ".part: " + errno_text();
  };
  seal(own, shard_path(n, "shard", rt_.pid));
  for (Incoming& in : incoming) {
    if (error.empty() && in.received != in.expected)
      error = "the copy from process " + std::to_string(in.from) + " is incomplete";
    seal(in.fd, shard_path(n, "copy", in.from));
  }
  if (error.empty() && !sync_directory(dir))
    error = "cannot fsync directory " + dir + ": " + errno_text();
  return error;
}

void Checkpoints::remove_checkpoint(std::uint64_t n) {
  remove_tree(directory_ + "/c" + std::to_string(n));
}

// Before the first checkpoint of a run: what lies in the directory beyond the checkpoint we
// resumed from (or anything, on a fresh run) is of an earlier run. Each host's lowest pid clears
// it.
void Checkpoints::clean_stale() {
  if (lowest_on_host_)
    for (std::uint64_t m : checkpoint_numbers(directory_))
      if (m > last_) remove_checkpoint(m);
  idle_barrier(comm_);
}

int Checkpoints::checkpoint() {
  const bool first = !planned_;
  plan();
  if (first) clean_stale();
  const std::uint64_t n = last_ + 1;
  std::string error = write_checkpoint(n);
  // The checkpoint counts only once every shard and copy is durable everywhere.
  const std::uint64_t failed =
      all_min(error.empty() ? UINT64_MAX : static_cast<std::uint64_t>(rt_.pid), comm_);
  if (failed != UINT64_MAX)
    fail_collective(static_cast<int>(failed), "bspg_checkpoint", "checkpoint %llu not written: %s",
                    static_cast<unsigned long long>(n), error.c_str());
  const std::string marker = shard_path(n, "complete", rt_.pid);
  if (FILE* f = std::fopen(marker.c_str(), "w")) {
    std::fprintf(f, "bspg checkpoint %llu of %d processes\n", static_cast<unsigned long long>(n),
                 rt_.nprocs);
    std::fflush(f);
    fsync(fileno(f));
    std::fclose(f);
    sync_directory(directory_ + "/c" + std::to_string(n));
  } else {
    fail("bspg_checkpoint", "cannot write %s: %s", marker.c_str(), errno_text().c_str());
  }
  // Every marker is written: the checkpoint before is no longer needed.
  idle_barrier(comm_);
  if (lowest_on_host_)
    for (std::uint64_t m : checkpoint_numbers(directory_))
      if (m < n) remove_checkpoint(m);
  last_ = n;
  // bsprun asks a job to stop right after a checkpoint (to move it to other hosts) with a file
  // "stop" in the checkpoint directory of any of its hosts.
  if (all_min(exists(directory_ + "/stop") ? 0 : 1, comm_) == 0) {
    if (rt_.pid == 0) {
      std::fprintf(stderr, "bspg: stopping after checkpoint %llu, as asked (%s/stop)\n",
                   static_cast<unsigned long long>(n), directory_.c_str());
      std::fflush(stderr);
    }
    std::fflush(stdout);
    idle_barrier(comm_);
    MPI_Finalize();
    std::_Exit(kStoppedAfterCheckpoint);
  }
  return static_cast<int>(n);
}

// ---- Resuming -----------------------------------------------------------------------------------

// Reads a shard into the persisted areas and the restored queue: "" or why it cannot be used.
std::string Checkpoints::read_shard(std::uint64_t n, const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT ? "missing" : "cannot open: " + errno_text();
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  ShardHash hash;
  auto take = [&](void* into, std::uint64_t bytes) {
    if (!read_all(fd, into, bytes)) return false;
    hash.update(into, bytes);
    return true;
  };
  ShardHeader header;
  if (!take(&header, sizeof header)) return "shorter than its header";
  if (std::memcmp(header.magic, kShardMagic, sizeof kShardMagic) != 0)
    return "not a bspg checkpoint shard";
  if (header.version != kShardVersion || header.checkpoint != n ||
      header.pid != static_cast<std::uint32_t>(rt_.pid))
    return "damaged (its header names checkpoint " + std::to_string(header.checkpoint) +
           " of process " + std::to_string(header.pid) + ")";
  // Program mismatches are not damage: no copy would do better.
  if (header.nprocs != static_cast<std::uint32_t>(rt_.nprocs))
    fail("bspg_resume", "checkpoint %llu was written by %u processes, this run has %d",
         static_cast<unsigned long long>(n), header.nprocs, rt_.nprocs);
  if (header.areas > (1u << 20) || header.registrations > (1u << 24))
    return "damaged (impossible counts)";
  std::vector<std::uint64_t> sizes(header.areas);
  std::vector<std::int64_t> registered(header.registrations);
  if (!take(sizes.data(), sizes.size() * 8) || !take(registered.data(), registered.size() * 8))
    return "truncated";
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
  for (const Area& area : areas_)
    if (area.bytes && !take(area.address, area.bytes)) return "truncated";
  restored_queue_.clear();
  std::vector<std::pair<std::size_t, std::uint32_t>> tags;  // (offset, tag bytes) per message
  std::vector<std::uint32_t> payloads;
  for (std::uint64_t m = 0; m < header.messages; ++m) {
    std::uint32_t lengths[2];
    if (!take(lengths, sizeof lengths) || lengths[0] > (1u << 30) || lengths[1] > (1u << 30))
      return "damaged queue";
    const std::size_t at = restored_queue_.size();
    char* into = restored_queue_.extend(lengths[0] + lengths[1]);
    if (!take(into, lengths[0] + lengths[1])) return "truncated";
    tags.emplace_back(at, lengths[0]);
    payloads.push_back(lengths[1]);
  }
  std::uint64_t stored = 0;
  const std::uint64_t computed = hash.value();
  if (!read_all(fd, &stored, sizeof stored)) return "truncated";
  if (stored != computed) return "damaged (checksum mismatch)";
  char extra;
  if (read(fd, &extra, 1) != 0) return "damaged (bytes after the checksum)";
  rt_.queue.clear();
  rt_.queue_head = 0;
  rt_.queue_payload_bytes = 0;
  for (std::size_t m = 0; m < tags.size(); ++m) {
    const char* tag = restored_queue_.data() + tags[m].first;
    rt_.queue.push_back({tag, tag + tags[m].second, tags[m].second, payloads[m]});
    rt_.queue_payload_bytes += payloads[m];
  }
  rt_.tag_nbytes = header.tag_nbytes;
  return "";
}

// The newest checkpoint that some process saw completed and every process can read here.
std::uint64_t Checkpoints::newest_readable_everywhere() {
  std::vector<std::uint64_t> mine;
  for (std::uint64_t m : checkpoint_numbers(directory_))
    if (exists(shard_path(m, "shard", rt_.pid)) || exists(shard_path(m, "copy", rt_.pid)))
      mine.push_back(m);
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
    const bool have = std::find(mine.begin(), mine.end(), agreed) != mine.end();
    bool seen_complete = false;
    if (DIR* d = opendir((directory_ + "/c" + std::to_string(agreed)).c_str())) {
      while (const dirent* entry = readdir(d))
        seen_complete = seen_complete || std::strncmp(entry->d_name, "complete-", 9) == 0;
      closedir(d);
    }
    const std::uint64_t all_have = all_min(have ? 1 : 0, comm_);
    const std::uint64_t none_complete = all_min(seen_complete ? 0 : 1, comm_);
    if (all_have && !none_complete) return agreed;
    bound = agreed - 1;
  }
}

int Checkpoints::resume() {
  plan();
  if (resume_.empty() || resume_ == "0") return 0;
  std::uint64_t n = 0;
  if (resume_ == "last") {
    n = newest_readable_everywhere();
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
  }
  std::string problem = read_shard(n, shard_path(n, "shard", rt_.pid));
  if (!problem.empty()) {
    const std::string first = problem;
    problem = read_shard(n, shard_path(n, "copy", rt_.pid));
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
  const std::uint64_t failed =
      all_min(problem.empty() ? UINT64_MAX : static_cast<std::uint64_t>(rt_.pid), comm_);
  if (failed != UINT64_MAX)
    fail_collective(static_cast<int>(failed), "bspg_resume",
                    "checkpoint %llu cannot be restored: %s", static_cast<unsigned long long>(n),
                    problem.c_str());
  last_ = n;
  return static_cast<int>(n);
}

}  // namespace bspg
