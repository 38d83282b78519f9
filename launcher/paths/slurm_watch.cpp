// slurm_watch.cpp - a process of a job inside a Slurm allocation stopped (SIGSTOP) while its node
// answers: found through srun, as the monitor finds one over ssh on the grid path (frozen.h).
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "frozen.h"
#include "remote_stop.h"
#include "say.h"
#include "slurm.h"

namespace bspg::launcher {

// A thread of its own runs the rounds: each is an srun step (about 0.1 s on a quiet cluster),
// too long for the run loop, which polls lost() every 200 ms.
class SlurmStopWatch::Rounds {
 public:
  Rounds(std::vector<std::string> nodes, const std::string& marker, double timeout_s,
         double probe_timeout_s, bool end_stopped, bool verbose)
      : nodes_(std::move(nodes)),
        script_(job_processes_script(std::string(kJobMarkerVariable) + "=" + marker)),
        timeout_s_(timeout_s),
        probe_timeout_s_(probe_timeout_s),
        verbose_(verbose) {
    // With spares a stopped process of the job is ended (the MPI then sees it lost, and the
    // library recovers in place); a daemon, never.
    if (end_stopped)
      ender_ = StoppedProcessEnder([this](const std::string& node, const JobProcess& process) {
        const NodeOutputs killed =
            run_on_nodes({node}, "kill -KILL " + std::to_string(process.pid) + " && echo ended",
                         probe_timeout_s_, "bsprun-end");
        auto it = killed.by_node.find(node);
        const bool ended = it != killed.by_node.end() && it->second.find("ended") == 0;
        if (verbose_)
          say("process " + std::to_string(process.rank) + " on " + node + " (process id " +
              std::to_string(process.pid) + ") stopped for --host-timeout: " +
              (ended ? "ended, for recovery in place" : "could not be ended"));
        return ended;
      });
    thread_ = std::thread([this] { run(); });
  }

  ~Rounds() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }

  std::string lost() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return lost_;
  }
  std::string lost_host() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return lost_host_;
  }

 private:
  using Clock = StopClock::Clock;

  void run() {
    StopClock clock(timeout_s_);
    const auto interval = std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(FrozenWatch::interval_s(timeout_s_)));
    for (;;) {
      const auto began = Clock::now();
      const NodeOutputs outputs = run_on_nodes(nodes_, script_, probe_timeout_s_, "bsprun-watch");
      const auto now = Clock::now();
      for (const std::string& node : nodes_) {
        auto it = outputs.by_node.find(node);
        if (it == outputs.by_node.end()) continue;  // a silent node is Slurm's to find
        bool complete = false;
        const std::vector<JobProcess> processes = read_job_processes(it->second, complete);
        if (!complete) continue;
        const std::string loss = clock.observe(node, processes, now);
        if (loss.empty() || ender_.end(node, clock.lost_process())) continue;
        std::lock_guard<std::mutex> lock(mutex_);
        lost_ = loss + ", noticed through srun";
        lost_host_ = node;
        return;
      }
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait_until(lock, std::min(began + interval, clock.next_deadline()),
                       [this] { return stopping_; });
      if (stopping_) return;
    }
  }

  const std::vector<std::string> nodes_;
  const std::string script_;
  const double timeout_s_, probe_timeout_s_;
  const bool verbose_;
  StoppedProcessEnder ender_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::string lost_, lost_host_;
  std::thread thread_;
};

SlurmStopWatch::SlurmStopWatch(std::vector<std::string> nodes, const std::string& marker,
                               double timeout_s, double probe_timeout_s, bool end_stopped,
                               bool verbose)
    : rounds_(std::make_unique<Rounds>(std::move(nodes), marker, timeout_s, probe_timeout_s,
                                       end_stopped, verbose)) {}

SlurmStopWatch::~SlurmStopWatch() = default;

std::string SlurmStopWatch::lost() const { return rounds_->lost(); }
std::string SlurmStopWatch::lost_host() const { return rounds_->lost_host(); }

}  // namespace bspg::launcher
