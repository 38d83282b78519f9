// plan.cpp - what a job's checkpoints start from: the settings, the persisted areas, the plan
// (buddies, the run id, the checkpoint directory opened and locked), and its end at bsp_end.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <random>

#include "checkpoint_internal.hpp"
#include "errors.hpp"
#include "runtime.hpp"
#include "safe_paths.h"
#include "shard.hpp"

namespace bspg {
namespace checkpoint_internal {

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

}  // namespace checkpoint_internal

using namespace checkpoint_internal;  // what the checkpoint files share (checkpoint_internal.hpp)

namespace {

constexpr const char* kNoProgram = "0000000000000000";

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

}  // namespace bspg
