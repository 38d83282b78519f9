// job_lock.h - one job at a time per checkpoint directory and per job id.
//
// Two bspruns on one checkpoint directory (or one job id) would restart from each other's
// checkpoints and remove each other's files. bsprun therefore holds, for as long as it runs, an
// exclusive lock (flock) on a lock file for the job id, and on one for the checkpoint directory:
// on this machine's directory itself ("lock" in it, the file libbspg locks under a plain mpirun)
// for the local path, and for the grid path on a file named after the directory in bsprun's own
// lock directory (~/.cache/bspg/locks: the hosts' directories are locked by whoever starts jobs
// on them). A lock file holds one line naming its holder, which a refused bsprun prints. The
// kernel drops a dead bsprun's lock, so a stale lock is simply taken over.
#ifndef BSPG_LAUNCHER_JOB_LOCK_H
#define BSPG_LAUNCHER_JOB_LOCK_H

#include <string>
#include <vector>

namespace bspg::launcher {

class JobLocks {
 public:
  JobLocks() = default;
  ~JobLocks();  // releases every lock (and removes the lock files in bsprun's lock directory)
  JobLocks(const JobLocks&) = delete;
  JobLocks& operator=(const JobLocks&) = delete;

  // Locks `path` (created 0600 when missing; never through a symlink), writing `holder` into it.
  // "" or why not: "in use by HOLDER" when another process holds it (then `busy`), else the
  // system's error. remove_when_done: the file is removed when released (only files nobody else
  // names).
  std::string take(const std::string& path, const std::string& holder, bool remove_when_done,
                   bool& busy);

 private:
  struct Held {
    int fd;
    std::string path;
    bool remove;
  };
  std::vector<Held> held_;
};

// The text a lock holds for this bsprun: "bsprun pid PID on HOST, job ID, since TIME".
std::string lock_holder_text(const std::string& job_id);
// bsprun's lock directory: $XDG_RUNTIME_DIR/bspg-locks, else ~/.cache/bspg/locks.
std::string lock_directory();

}  // namespace bspg::launcher

#endif
