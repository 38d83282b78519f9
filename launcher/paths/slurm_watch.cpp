// slurm_watch.cpp - the job's nodes inside a Slurm allocation, watched through srun as the
// monitor watches hosts over ssh on the grid path (monitor.h, frozen.h): a process of the job
// stopped (SIGSTOP) while its node answers, and a node that stops answering.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "frozen.h"
#include "monitor.h"
#include "remote_stop.h"
#include "say.h"
#include "slurm.h"

namespace bspg::launcher {
namespace {
// A round given less than this could miss a node that answers: an srun step takes 0.1 s to
// start on a quiet cluster, and seconds on a loaded one.
constexpr double kShortestRound = 2;
}  // namespace

// A thread of its own runs the rounds: each is an srun step (about 0.1 s on a quiet cluster),
// too long for the run loop, which polls lost() every 200 ms.
class SlurmNodeWatch::Rounds {
 public:
  Rounds(std::vector<std::string> nodes, const std::string& marker, double timeout_s,
         double probe_timeout_s, bool end_stopped, bool verbose, SlurmInPlace in_place)
      : nodes_(std::move(nodes)),
        script_(job_processes_script(std::string(kJobMarkerVariable) + "=" + marker)),
        timeout_s_(timeout_s),
        probe_timeout_s_(probe_timeout_s),
        verbose_(verbose),
        in_place_(std::move(in_place)) {
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
  void recovery_refused() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      refused_ = true;
    }
    wake_.notify_all();
  }
  void node_gone(const std::string& node) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      gone_.push_back(node);
    }
    wake_.notify_all();
  }

 private:
  using Clock = StopClock::Clock;
  using Seconds = std::chrono::duration<double>;

  static Clock::duration span(double seconds) {
    return std::chrono::duration_cast<Clock::duration>(Seconds(seconds));
  }

  // `what`: what was lost, and how it was noticed.
  void lose(const std::string& node, const std::string& what) {
    std::lock_guard<std::mutex> lock(mutex_);
    lost_ = what;
    lost_host_ = node;
  }

  void run() {
    StopClock clock(timeout_s_);
    const auto interval = span(FrozenWatch::interval_s(timeout_s_));
    const auto timeout = span(timeout_s_);
    // Each node's last answer: the start of the round it answered in (it lived then).
    std::map<std::string, Clock::time_point> answered;
    for (const std::string& node : nodes_) answered[node] = Clock::now();
    std::map<std::string, Clock::time_point> left_at;  // nodes left to the library, and when
    std::set<std::string> settled;                     // ... which it recovered from
    bool refused = false;                              // recovery_refused, as last seen
    std::set<std::string> gone;                        // nodes handed over by node_gone
    for (;;) {
      std::vector<std::string> newly_gone;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        refused = refused_;
        newly_gone.swap(gone_);
      }
      for (const std::string& node : newly_gone) {
        if (left_at.count(node) || std::find(nodes_.begin(), nodes_.end(), node) == nodes_.end())
          continue;
        gone.insert(node);
        if (in_place_.leave_silent && in_place_.leave_silent(node, true)) {
          left_at[node] = Clock::now();
          continue;
        }
        lose(node, node +
                       ": its MPI daemon is gone and its slurmd does not answer, noticed by "
                       "bsprun");
        return;
      }
      const auto began = Clock::now();
      for (const auto& [node, at] : left_at) {
        if (settled.count(node) || (began < at + span(kLeftHostGrace) && !refused)) continue;
        if (in_place_.recovered_from && in_place_.recovered_from(node)) {
          settled.insert(node);
          continue;
        }
        lose(node, node +
                       (gone.count(node)
                            ? std::string(": its MPI daemon is gone and its slurmd "
                                          "does not answer")
                            : ": no answer through srun for " +
                                  seconds_text(Seconds(began - answered[node]).count()) + " s") +
                       (refused ? ", and the library could not recover in place from its processes"
                                : ", and the job did not recover in place from its processes "
                                  "within " +
                                      seconds_text(kLeftHostGrace) + " s") +
                       ", noticed by bsprun");
        return;
      }
      std::vector<std::string> asked;
      auto earliest = Clock::time_point::max();
      for (const std::string& node : nodes_)
        if (!left_at.count(node)) {
          asked.push_back(node);
          earliest = std::min(earliest, answered[node] + timeout);
        }
      // The round ends by the earliest node's deadline, so that a silent node is found at its
      // timeout rather than a round later.
      const double round_s =
          std::clamp(Seconds(earliest - began).count(), kShortestRound, probe_timeout_s_);
      const NodeOutputs outputs = run_on_nodes(asked, script_, round_s, "bsprun-watch");
      const auto now = Clock::now();
      // A round in which no node answered says nothing of the nodes: srun failed, or Slurm's
      // controller did not make the step in time (busy, restarting), which a frozen node does not
      // cause: the others answer while the step waits for it.
      const bool told = !outputs.by_node.empty();
      for (const std::string& node : asked) {
        auto it = outputs.by_node.find(node);
        if (it == outputs.by_node.end()) {
          if (!told || now < answered[node] + timeout) continue;
          if (in_place_.leave_silent && in_place_.leave_silent(node, false)) {
            left_at[node] = Clock::now();
            continue;
          }
          lose(node, node + ": no answer through srun for " +
                         seconds_text(Seconds(now - answered[node]).count()) +
                         " s (--host-timeout), noticed by bsprun");
          return;
        }
        answered[node] = began;
        bool complete = false;
        const std::vector<JobProcess> processes = read_job_processes(it->second, complete);
        if (!complete) continue;
        const std::string loss = clock.observe(node, processes, now);
        if (loss.empty() || ender_.end(node, clock.lost_process())) continue;
        lose(node, loss + ", noticed through srun");
        return;
      }
      auto next = std::min(began + interval, clock.next_deadline());
      for (const auto& [node, at] : left_at)
        if (!settled.count(node)) next = std::min(next, at + span(kLeftHostGrace));
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait_until(lock, next,
                       [&] { return stopping_ || refused_ != refused || !gone_.empty(); });
      if (stopping_) return;
    }
  }

  const std::vector<std::string> nodes_;
  const std::string script_;
  const double timeout_s_, probe_timeout_s_;
  const bool verbose_;
  const SlurmInPlace in_place_;
  StoppedProcessEnder ender_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  bool refused_ = false;
  std::vector<std::string> gone_;  // node_gone's, not yet taken by the thread
  std::string lost_, lost_host_;
  std::thread thread_;
};

SlurmNodeWatch::SlurmNodeWatch(std::vector<std::string> nodes, const std::string& marker,
                               double timeout_s, double probe_timeout_s, bool end_stopped,
                               bool verbose, SlurmInPlace in_place)
    : rounds_(std::make_unique<Rounds>(std::move(nodes), marker, timeout_s, probe_timeout_s,
                                       end_stopped, verbose, std::move(in_place))) {}

SlurmNodeWatch::~SlurmNodeWatch() = default;

std::string SlurmNodeWatch::lost() const { return rounds_->lost(); }
std::string SlurmNodeWatch::lost_host() const { return rounds_->lost_host(); }
void SlurmNodeWatch::recovery_refused() { rounds_->recovery_refused(); }
void SlurmNodeWatch::node_gone(const std::string& node) { rounds_->node_gone(node); }

}  // namespace bspg::launcher
