#include "checkpoint.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <random>

#include "errors.hpp"
#include "runtime.hpp"
#include "safe_paths.h"
#include "shard.hpp"

namespace bspg {
namespace {

using Problem = Checkpoints::Problem;

constexpr std::uint64_t kChunkBytes = std::uint64_t{8} << 20;  // shard traffic and file I/O
constexpr int kSizeTag = 1, kDataTag = 2;
constexpr const char* kNoProgram = "0000000000000000";

std::string errno_text() { return std::strerror(errno); }

Problem problem_at(const std::string& file) { return {file, errno_text()}; }

std::string hex_id(std::uint64_t id) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(id));
  return text;
}

std::uint64_t id_value(const std::string& hex) { return std::strtoull(hex.c_str(), nullptr, 16); }

std::string host_name() {
  char name[256] = "";
  gethostname(name, sizeof name - 1);
  return name;
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

// Opens a regular file `name` of directory `dir` for reading, never through a symbolic link and
// without waiting on a FIFO; -1 with `why` set otherwise.
int open_regular(int dir, const std::string& name, std::string& why) {
  const int fd = openat(dir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    why = errno == ENOENT  ? "missing"
          : errno == ELOOP ? "a symbolic link (not followed)"
                           : "cannot open: " + errno_text();
    return -1;
  }
  struct stat info {};
  if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    why = "not a regular file";
    return -1;
  }
  return fd;
}

// The first line (at most `limit` bytes) of a regular file of dir; "" when there is none.
std::string first_line(int dir, const std::string& name, std::size_t limit = 256) {
  std::string why;
  const int fd = open_regular(dir, name, why);
  if (fd < 0) return "";
  std::string text(limit, '\0');
  const ssize_t got = pread(fd, &text[0], limit, 0);
  ::close(fd);
  text.resize(got > 0 ? static_cast<std::size_t>(got) : 0);
  return text.substr(0, text.find('\n'));
}

// Names in a directory (without "." and ".."), read through a descriptor of its own.
std::vector<std::string> entries(int dir) {
  std::vector<std::string> names;
  const int fd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return names;
  DIR* d = fdopendir(fd);
  if (!d) {
    ::close(fd);
    return names;
  }
  while (const dirent* entry = readdir(d))
    if (std::strcmp(entry->d_name, ".") && std::strcmp(entry->d_name, ".."))
      names.emplace_back(entry->d_name);
  closedir(d);
  return names;
}

// N of a name "c<N>" (digits only), or -1.
long long checkpoint_number(const std::string& name) {
  if (name.size() < 2 || name.size() > 19 || name[0] != 'c') return -1;
  for (std::size_t i = 1; i < name.size(); ++i)
    if (name[i] < '0' || name[i] > '9') return -1;
  return std::atoll(name.c_str() + 1);
}

// Removes the entry `name` of dir: a directory with everything in it, anything else (a symbolic
// link included) by unlinking the entry itself. Nothing is ever followed: a directory is opened
// with O_NOFOLLOW, so one swapped for a link in between is not entered.
void remove_entry(int dir, const std::string& name, int depth = 0) {
  struct stat info {};
  if (fstatat(dir, name.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0) return;
  if (!S_ISDIR(info.st_mode)) {
    unlinkat(dir, name.c_str(), 0);
    return;
  }
  const int fd =
      depth < 8 ? openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
  if (fd >= 0) {
    for (const std::string& inner : entries(fd)) remove_entry(fd, inner, depth + 1);
    ::close(fd);
  }
  unlinkat(dir, name.c_str(), AT_REMOVEDIR);
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

// The checkpoint directory, opened (safe_paths.h: created 0700 where missing, no link followed
// that another user could have planted, owned by this user and writable by no one else): a
// descriptor, or why it is refused (not the job's own to use), or what made it unusable.
struct OpenedDirectory {
  int fd = -1;
  std::string refusal;
  Problem problem;
};

OpenedDirectory open_checkpoint_directory(const std::string& path) {
  const safe_paths::OpenedDirectory opened =
      safe_paths::open_own_directory(path, "the checkpoint directory", true);
  return {opened.fd, opened.refusal, {opened.failed_path, opened.error}};
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

std::uint64_t all_max(std::uint64_t mine, MPI_Comm comm) {
  return UINT64_MAX - all_min(UINT64_MAX - mine, comm);
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

}  // namespace

void Checkpoints::Files::close_all() {
  for (int* fd : {&dir, &own})
    if (*fd >= 0) ::close(*fd), *fd = -1;
  for (int& fd : copies)
    if (fd >= 0) ::close(fd), fd = -1;
}

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
  if (const char* cleanup = std::getenv("BSPG_CHECKPOINT_CLEANUP"))
    remove_at_end_ = std::strcmp(cleanup, "end") == 0;
  if (const char* say = std::getenv("BSPG_SAY_WHOLE")) say_whole_ = std::strcmp(say, "1") == 0;
  const char* program = std::getenv("BSPG_PROGRAM_ID");
  program_id_ = program ? program : kNoProgram;
  if (!is_hex_id(program_id_))
    fail("bspg_checkpoint", "BSPG_PROGRAM_ID='%s' is not 16 lowercase hex digits", program);
}

void Checkpoints::close() {
  // The job's own directory (bsprun's default) is not needed once every process ended its last
  // superstep: removing it here spares bsprun a login to each host after the job. Only where
  // this run opened it (a program that never checkpoints leaves none); the lowest pid of each
  // host removes it, after the others stopped writing there.
  if (remove_at_end_ && planned_ && comm_ != MPI_COMM_NULL && dir_fd_ >= 0) {
    MPI_Barrier(comm_);
    if (lowest_on_host_) remove_directory();
  }
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
  if (dir_fd_ >= 0) ::close(dir_fd_), dir_fd_ = -1;
  if (lock_fd_ >= 0) ::close(lock_fd_), lock_fd_ = -1;  // releases the lock
}

// Two levels, as the layout has them (c<N>/files, and files at the top); a directory deeper
// than that, or an entry that cannot go, stays, and so does the directory (bsprun's clean-up
// after a failed job, or the user, removes what is left). Failures are not errors: the job's
// results are out already.
void Checkpoints::remove_directory() {
  const auto remove_entries = [](int dir, bool descend, const auto& self) -> void {
    const int listing = dup(dir);
    if (listing < 0) return;
    DIR* d = fdopendir(listing);
    if (!d) {
      ::close(listing);
      return;
    }
    std::vector<std::string> names;
    while (const dirent* e = readdir(d))
      if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
        names.emplace_back(e->d_name);
    closedir(d);
    for (const auto& name : names) {
      struct stat st;
      if (fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
      if (!S_ISDIR(st.st_mode)) {
        unlinkat(dir, name.c_str(), 0);
      } else if (descend) {
        const int sub = openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub < 0) continue;
        self(sub, false, self);
        ::close(sub);
        unlinkat(dir, name.c_str(), AT_REMOVEDIR);
      }
    }
  };
  remove_entries(dir_fd_, true, remove_entries);
  rmdir(directory_.c_str());
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
void Checkpoints::plan(const char* call) {
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
  // The run: bsprun's (BSPG_RUN, and bsprun holds the lock), else one that pid 0 makes (seconds
  // since the epoch, then random bits, so that a newer run has a larger id).
  std::uint64_t said[3] = {0, 0, 0};  // run id, given by BSPG_RUN, BSPG_RUN malformed
  if (me == 0) {
    if (const char* given = std::getenv("BSPG_RUN"); given && *given) {
      said[1] = 1;
      if (is_hex_id(given) && id_value(given) != 0)
        said[0] = id_value(given);
      else
        said[2] = 1;
    } else {
      std::random_device random;
      said[0] = (static_cast<std::uint64_t>(std::time(nullptr)) & 0xffffffffu) << 32 |
                (random() & 0xffffffffu);
    }
  }
  idle_broadcast(said, sizeof said, 0, comm_);
  if (said[2])
    fail_collective(0, call, "BSPG_RUN='%s' is not a run id (16 lowercase hex digits)",
                    std::getenv("BSPG_RUN"));
  run_ = said[0];
  run_given_ = said[1] != 0;

  // The directory, opened once; refusals end the job now, other problems at the first
  // checkpoint (a run that only resumes may read a directory it cannot write).
  OpenedDirectory opened = open_checkpoint_directory(directory_);
  dir_fd_ = opened.fd;
  unavailable_ = opened.problem;
  std::string refusal = opened.refusal;
  if (refusal.empty() && dir_fd_ >= 0 && !run_given_ && lowest_on_host_) refusal = take_lock();
  const std::uint64_t refused =
      all_min(refusal.empty() ? UINT64_MAX : static_cast<std::uint64_t>(me), comm_);
  if (refused != UINT64_MAX)
    fail_collective(static_cast<int>(refused), call, "%s", refusal.c_str());
}

// Plain mpirun: the lowest pid on each host locks DIR/lock for the job (bsprun locks it itself).
std::string Checkpoints::take_lock() {
  const std::string path = directory_ + "/lock";
  lock_fd_ = openat(dir_fd_, "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (lock_fd_ < 0) {
    unavailable_ = problem_at(path);
    return "";
  }
  if (flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK) {
      unavailable_ = problem_at(path);
      return "";
    }
    std::string holder = first_line(dir_fd_, "lock");
    for (char& c : holder)
      if (c < ' ' || c > '~') c = '?';
    ::close(lock_fd_);
    lock_fd_ = -1;
    return "the checkpoint directory " + directory_ + " is in use by another job: " +
           (holder.empty() ? "(its holder wrote nothing)" : holder) + " (" + path + ")";
  }
  const std::string text = "bspg job, process " + std::to_string(getpid()) + " (pid " +
                           std::to_string(rt_.pid) + " of the job) on " + host_name() + "\n";
  if (ftruncate(lock_fd_, 0) != 0 || !write_all(lock_fd_, text.data(), text.size()))
    unavailable_ = problem_at(path);
  return "";
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
  std::memcpy(header.run, hex_id(run_).data(), sizeof header.run);
  header.supersteps = rt_.world_syncs;
  header.areas = areas_.size();
  header.registrations = registered.size();
  const std::vector<Message> queued = rt_.queue.remaining("bspg_checkpoint");
  header.messages = queued.size();
  head.clear();
  head.append(&header, sizeof header);
  for (const Area& area : areas_) head.append(&area.bytes, sizeof area.bytes);
  for (std::int64_t size : registered) head.append(&size, sizeof size);
  tail.clear();
  for (const Message& message : queued) {
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

// ---- Writing ------------------------------------------------------------------------------------

// Creates c<n> and opens this process's files in it (as .part: a file appears under its name only
// once written and fsync'ed).
Problem Checkpoints::prepare(std::uint64_t n, Files& files) {
  if (dir_fd_ < 0)
    return unavailable_.empty() ? Problem{directory_, "cannot be opened"} : unavailable_;
  const std::string name = "c" + std::to_string(n), path = directory_ + "/" + name;
  if (mkdirat(dir_fd_, name.c_str(), 0700) != 0 && errno != EEXIST) return problem_at(path);
  files.dir = openat(dir_fd_, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (files.dir < 0) return problem_at(path);
  auto create = [&](const char* kind, int pid, int& fd) {
    const std::string part = kind + ("-" + std::to_string(pid)) + ".part";
    fd = openat(files.dir, part.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
                0600);
    return fd >= 0 ? Problem{} : problem_at(path + "/" + part);
  };
  if (Problem problem = create("shard", rt_.pid, files.own); !problem.empty()) return problem;
  files.copies.assign(wards_.size(), -1);
  for (std::size_t w = 0; w < wards_.size(); ++w)
    if (Problem problem = create("copy", wards_[w], files.copies[w]); !problem.empty())
      return problem;
  return {};
}

// Writes our shard, sends it to the buddy and writes the copies we keep, interleaving file writes
// with MPI progress so that the transfers overlap the disk. Every process takes part in the whole
// exchange even after a write failed, so that nobody waits for it; the first problem is returned.
Problem Checkpoints::write_data(std::uint64_t n, Files& files) {
  ByteBuffer head, tail;
  const std::vector<Piece> pieces = serialize(n, head, tail);
  std::uint64_t total = 0;
  for (const Piece& piece : pieces) total += piece.bytes;
  Problem problem;
  auto note = [&problem](const std::string& file) {
    if (problem.empty()) problem = problem_at(file);
  };

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
    int fd;
    std::uint64_t expected = 0, received = 0;
    bool sized = false;
    ByteBuffer buffers[2];
    int next = 0;  // buffer the next chunk arrives in
    MPI_Request request = MPI_REQUEST_NULL;
  };
  std::vector<Incoming> incoming(wards_.size());
  for (std::size_t w = 0; w < wards_.size(); ++w) {
    Incoming& in = incoming[w];
    in.from = wards_[w];
    in.fd = files.copies[w];
    MPI_Irecv(&in.expected, 1, MPI_UINT64_T, in.from, kSizeTag, comm_, &in.request);
  }
  bool own_ok = true;
  std::vector<bool> copy_ok(wards_.size(), true);

  std::size_t piece = 0;
  std::uint64_t piece_at = 0;
  IdlePacer pacer;
  for (;;) {
    bool progress = false;
    for (std::size_t w = 0; w < incoming.size(); ++w) {
      Incoming& in = incoming[w];
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
        if (copy_ok[w] && !write_all(in.fd, chunk.data(), static_cast<std::uint64_t>(got))) {
          copy_ok[w] = false;
          note(shard_path(n, "copy", in.from) + ".part");
        }
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
      if (own_ok && !write_all(files.own, p.data + piece_at, n_bytes)) {
        own_ok = false;
        note(shard_path(n, "shard", rt_.pid) + ".part");
      }
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

  // Durable under their final names: fsync, close and rename, each checked.
  auto seal = [&](int& fd, const std::string& final_name) {
    const std::string path = directory_ + "/c" + std::to_string(n) + "/" + final_name;
    const int closing = fd;
    fd = -1;
    if (fsync(closing) != 0) note(path + ".part");
    if (::close(closing) != 0) note(path + ".part");
    if (problem.empty() &&
        renameat(files.dir, (final_name + ".part").c_str(), files.dir, final_name.c_str()) != 0)
      note(path);
  };
  seal(files.own, "shard-" + std::to_string(rt_.pid));
  for (std::size_t w = 0; w < incoming.size(); ++w) {
    if (problem.empty() && incoming[w].received != incoming[w].expected)
      problem = {shard_path(n, "copy", incoming[w].from) + ".part",
                 "the copy from process " + std::to_string(incoming[w].from) + " is incomplete"};
    seal(files.copies[w], "copy-" + std::to_string(incoming[w].from));
  }
  if (problem.empty() && fsync(files.dir) != 0) note(directory_ + "/c" + std::to_string(n));
  return problem;
}

// complete-<pid>: one line, written as .part, fsync'ed, closed and renamed, each checked.
Problem Checkpoints::write_marker(std::uint64_t n, Files& files) {
  const std::string name = "complete-" + std::to_string(rt_.pid), part = name + ".part";
  const std::string path = directory_ + "/c" + std::to_string(n) + "/" + name;
  const std::string line = complete_marker(n, rt_.nprocs, hex_id(run_), program_id_);
  const int fd =
      openat(files.dir, part.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return problem_at(path + ".part");
  const bool written = write_all(fd, line.data(), line.size()) && fsync(fd) == 0;
  Problem problem = written ? Problem{} : problem_at(path + ".part");
  if (::close(fd) != 0 && problem.empty()) problem = problem_at(path + ".part");
  if (!problem.empty()) return problem;
  if (renameat(files.dir, part.c_str(), files.dir, name.c_str()) != 0) return problem_at(path);
  if (fsync(files.dir) != 0) return problem_at(directory_ + "/c" + std::to_string(n));
  return {};
}

// Every process says whether it has a problem. If one has, the lowest such process tells the
// others where and why, checkpoint n is removed (what of it exists), pid 0 prints the one line,
// and every process ends with 75 when an earlier checkpoint is kept, else 1.
void Checkpoints::agree(std::uint64_t n, const Problem& mine, Files& files) {
  const std::uint64_t failed =
      all_min(mine.empty() ? UINT64_MAX : static_cast<std::uint64_t>(rt_.pid), comm_);
  if (failed == UINT64_MAX) return;
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
    const std::string kept = last_ > 0 ? "checkpoint " + std::to_string(last_) + " is kept"
                                       : "there is no earlier checkpoint";
    std::fprintf(stderr, "bspg: checkpoint %llu could not be written on %s: %s: %s; %s\n",
                 static_cast<unsigned long long>(n), host, file, error, kept.c_str());
    std::fflush(stderr);
  }
  end_job(last_ > 0 ? kStoppedAfterCheckpoint : 1);
}

// Every process ends here together, through MPI_Finalize, so that the starter reports `status`.
void Checkpoints::end_job(int status) {
  drain_output();
  idle_barrier(comm_);
  // One quiet abort by process 0 carries `status` to the starter, on every MPI. Finalizing and then
  // exiting non-zero does not: MPICH's Hydra kills the processes still in MPI_Finalize (exit 9 for
  // the job) and MPICH over UCX may crash there, and Open MPI's mpirun prints a banner.
  if (rt_.pid == 0) stop_job(status);
  for (int i = 0; i < 300; ++i) usleep(100000);  // process 0's abort ends us
  stop_job(status);
}

// At the first checkpoint of a run, before writing it, each host's lowest pid clears what earlier
// runs left: on a fresh run every c<N> and a stop file that does not name this run, on a resumed
// one what lies beyond the checkpoint restored. Entries are removed, never followed.
void Checkpoints::clean_up_first() {
  if (lowest_on_host_ && dir_fd_ >= 0) {
    const bool fresh = resume_.empty() || resume_ == "0";
    for (const std::string& name : entries(dir_fd_)) {
      const long long m = checkpoint_number(name);
      if (m >= 0 && (fresh || static_cast<std::uint64_t>(m) > last_)) remove_entry(dir_fd_, name);
    }
    if (fresh && first_line(dir_fd_, "stop") != hex_id(run_)) remove_entry(dir_fd_, "stop");
  }
  idle_barrier(comm_);  // no process writes before its host is clean
}

// bsprun asks a job to stop right after a checkpoint (to move it to other hosts) with a file "stop"
// in the checkpoint directory of any of its hosts, whose first line names the run.
bool Checkpoints::stop_requested() {
  const bool mine = dir_fd_ >= 0 && first_line(dir_fd_, "stop") == hex_id(run_);
  return all_min(mine ? 0 : 1, comm_) == 0;
}

int Checkpoints::checkpoint() {
  plan("bspg_checkpoint");
  const std::uint64_t n = last_ + 1;
  if (!cleaned_) {
    cleaned_ = true;
    clean_up_first();
  }
  Files files;
  // The checkpoint counts only once every shard, copy and marker is durable everywhere.
  agree(n, prepare(n, files), files);
  agree(n, write_data(n, files), files);
  agree(n, write_marker(n, files), files);
  files.close_all();
  // Every marker is written (the agreement says so): the checkpoint before is no longer needed.
  if (lowest_on_host_)
    for (const std::string& name : entries(dir_fd_)) {
      const long long m = checkpoint_number(name);
      if (m >= 0 && static_cast<std::uint64_t>(m) < n) remove_entry(dir_fd_, name);
    }
  last_ = n;
  // Where bsprun cannot ask the hosts afterwards (a Slurm allocation that ended under the job),
  // this line, which its filter takes out, tells it which checkpoint the hosts hold whole.
  if (say_whole_ && rt_.pid == 0) {
    std::fprintf(stderr, "bspg: checkpoint %llu is whole\n", static_cast<unsigned long long>(n));
    std::fflush(stderr);
  }
  if (stop_requested()) {
    if (rt_.pid == 0) {
      std::fprintf(stderr, "bspg: stopping after checkpoint %llu, as asked (%s/stop)\n",
                   static_cast<unsigned long long>(n), directory_.c_str());
      std::fflush(stderr);
    }
    end_job(kStoppedAfterCheckpoint);
  }
  return static_cast<int>(n);
}

// ---- Resuming -----------------------------------------------------------------------------------

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

}  // namespace bspg
