// plan.cpp - what a job's checkpoints start from: the settings, the persisted areas, the plan
// (buddies, the run id, the checkpoint directory opened and locked), and its end at bsp_end.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <random>

#include "checkpoint_internal.hpp"
#include "errors.hpp"
#include "lost_peers.hpp"
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

std::size_t distinct_groups(const std::vector<int>& keys) {
  std::vector<int> sorted(keys);
  std::sort(sorted.begin(), sorted.end());
  return static_cast<std::size_t>(std::unique(sorted.begin(), sorted.end()) - sorted.begin());
}

std::vector<std::vector<int>> copy_holders(const std::vector<int>& groups,
                                           const std::vector<int>& hosts, int copies) {
  const int p = static_cast<int>(groups.size());
  std::vector<std::vector<int>> holders(static_cast<std::size_t>(p));
  if (p <= 1 || copies <= 0) return holders;
  const auto at = [](const std::vector<int>& v, int q) { return v[static_cast<std::size_t>(q)]; };
  if (distinct_groups(hosts) == 1) {
    for (int pid = 0; pid < p; ++pid) holders[static_cast<std::size_t>(pid)] = {(pid + 1) % p};
    return holders;
  }
  std::vector<int> group_keys(groups);
  std::sort(group_keys.begin(), group_keys.end());
  group_keys.erase(std::unique(group_keys.begin(), group_keys.end()), group_keys.end());
  // Each group's members in pid order, each process's group and its index there.
  std::vector<std::vector<int>> members(group_keys.size());
  std::vector<std::size_t> group_of(static_cast<std::size_t>(p)), index_of(group_of.size());
  for (int q = 0; q < p; ++q) {
    const std::size_t g = static_cast<std::size_t>(
        std::lower_bound(group_keys.begin(), group_keys.end(), at(groups, q)) - group_keys.begin());
    group_of[static_cast<std::size_t>(q)] = g;
    index_of[static_cast<std::size_t>(q)] = members[g].size();
    members[g].push_back(q);
  }
  for (int pid = 0; pid < p; ++pid) {
    std::vector<int>& mine = holders[static_cast<std::size_t>(pid)];
    std::vector<int> used_hosts{at(hosts, pid)};
    // The other groups in turn, then pid's own (a subjob may span hosts) as the last resort.
    for (std::size_t k = 1; k <= group_keys.size() && static_cast<int>(mine.size()) < copies; ++k) {
      const std::vector<int>& in =
          members[(group_of[static_cast<std::size_t>(pid)] + k) % group_keys.size()];
      // The member at pid's index, else the next one on a host that holds nothing of pid's yet.
      for (std::size_t tried = 0; tried < in.size(); ++tried) {
        const int q = in[(index_of[static_cast<std::size_t>(pid)] + tried) % in.size()];
        if (std::find(used_hosts.begin(), used_hosts.end(), at(hosts, q)) != used_hosts.end())
          continue;
        mine.push_back(q);
        used_hosts.push_back(at(hosts, q));
        break;
      }
    }
  }
  return holders;
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
  if (const char* copies = std::getenv("BSPG_COPIES"); copies && *copies) {
    char* end = nullptr;
    errno = 0;
    const long asked = std::strtol(copies, &end, 10);
    if (!std::isdigit(static_cast<unsigned char>(copies[0])) || *end != '\0' || errno != 0 ||
        asked < 1 || asked > 1000)
      fail("bspg_checkpoint", "BSPG_COPIES='%s' is not a number of copies (1 to 1000)", copies);
    copies_asked_ = static_cast<int>(asked);
  }
  const char* program = std::getenv("BSPG_PROGRAM_ID");
  program_id_ = program ? program : kNoProgram;
  if (!is_hex_id(program_id_))
    fail("bspg_checkpoint", "BSPG_PROGRAM_ID='%s' is not 16 lowercase hex digits", program);
}

void Checkpoints::close() {
  // The last checkpoint's disk copy, if it is being written behind the job, is waited for.
  if (comm_ != MPI_COMM_NULL) finish_behind();
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

void Checkpoints::abandon() {
  cancel_behind();
  if (dir_fd_ >= 0) ::close(dir_fd_), dir_fd_ = -1;
  if (lock_fd_ >= 0) ::close(lock_fd_), lock_fd_ = -1;
  comm_ = MPI_COMM_NULL;  // revoked; left to MPI_Finalize
}

void Checkpoints::persist(void* address, std::uint64_t bytes) {
  areas_.push_back({static_cast<char*>(address), bytes});
}

std::string Checkpoints::shard_path(std::uint64_t n, const char* kind, int pid) const {
  return directory_ + "/c" + std::to_string(n) + "/" + kind + "-" + std::to_string(pid);
}

// Copy holders: processes are grouped by subjob where there are several, else by host; the
// copies of a process's shard go to the next groups, each on a host of its own
// (checkpoint_internal.hpp: copy_holders), so losing as many hosts as there are copies loses no
// shard that has no copy elsewhere.
void Checkpoints::plan(const char* call) {
  if (planned_) return;
  planned_ = true;
  MPI_Comm_dup(rt_.comm, &comm_);
  lost_peers::watch(comm_);
  const int p = rt_.nprocs, me = rt_.pid;
  MPI_Comm node;
  MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, me, MPI_INFO_NULL, &node);
  lost_peers::watch(node);
  int node_rank = 0;
  MPI_Comm_rank(node, &node_rank);
  lowest_on_host_ = node_rank == 0;  // ranks follow pids: it alone clears the host's directory
  int host = me;
  MPI_Allreduce(&me, &host, 1, MPI_INT, MPI_MIN, node);  // the host's lowest pid names it
  MPI_Comm_free(&node);
  // Groups: subjobs where there are several, else hosts.
  const int mine[2] = {rt_.subjob_sizes.size() <= 1 ? host : rt_.subjob, host};
  std::vector<int> both(2 * static_cast<std::size_t>(p));
  MPI_Allgather(mine, 2, MPI_INT, both.data(), 2, MPI_INT, comm_);
  std::vector<int> groups(static_cast<std::size_t>(p)), hosts(static_cast<std::size_t>(p));
  for (std::size_t q = 0; q < groups.size(); ++q)
    groups[q] = both[2 * q], hosts[q] = both[2 * q + 1];
  const std::vector<std::vector<int>> holders = copy_holders(groups, hosts, copies_asked_);
  holders_ = holders[static_cast<std::size_t>(me)];
  int fewest = copies_asked_;  // the copies of the fewest-kept shard
  for (int q = 0; q < p; ++q) {
    const std::vector<int>& of_q = holders[static_cast<std::size_t>(q)];
    fewest = std::min(fewest, static_cast<int>(of_q.size()));
    if (q != me && std::find(of_q.begin(), of_q.end(), me) != of_q.end()) wards_.push_back(q);
  }
  // More copies asked than other hosts can hold: pid 0 says how many the fewest-kept shard has.
  if (me == 0 && p > 1 && fewest < copies_asked_) {
    const std::size_t host_count = distinct_groups(hosts);
    if (host_count <= 1)
      std::fprintf(stderr,
                   "bspg: BSPG_COPIES=%d (bsprun --copies): the job runs on one host, so each "
                   "checkpoint has one copy, with the next process there\n",
                   copies_asked_);
    else
      std::fprintf(stderr,
                   "bspg: BSPG_COPIES=%d (bsprun --copies): the job runs on %zu hosts, so some "
                   "shards have only %d %s, each on another host\n",
                   copies_asked_, host_count, fewest, fewest == 1 ? "copy" : "copies");
    std::fflush(stderr);
  }
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
