// slurm_place.cpp - the restart loop's place on the nodes of a Slurm allocation (-p N).
#include <algorithm>
#include <csignal>
#include <mutex>
#include <set>

#include "exit_notes.h"
#include "place_support.h"
#include "restart.h"
#include "say.h"
#include "slurm.h"

namespace bspg::launcher {
namespace {

// As GridPlace, with srun steps where GridPlace logs in over ssh. Slurm itself notices a node
// that dies (the starter's daemon there is lost, and the job with it); with --host-timeout or
// spares, bsprun watches the nodes through srun too (SlurmNodeWatch).
class SlurmPlace : public JobPlace {
 public:
  explicit SlurmPlace(const SlurmJob& job) : job_(job), dir_(checkpoint_directory(job.opt)) {}

  int plan(const std::map<std::string, std::string>& left_out, bool first) override {
    left_out_ = left_out;
    if (const int status = plan_slurm(job_, left_out, first || job_.opt.verbose, plan_);
        status != 0)
      return status;
    reachable_.clear();
    for (const auto& c : plan_.allocation.candidates)
      if (c.probe.ok) reachable_.push_back(c.probe.host.name);
    host_of_pid_ = hosts_of_pids(plan_);
    for (const auto& h : plan_.chosen) used_.insert(h.name);
    return 0;
  }

  std::vector<Holdings> survey() override {
    const NodeOutputs outputs =
        run_on_nodes(reachable_, survey_script(dir_, sibling_hostinfo(), true),
                     job_.opt.probe_timeout_s + kSurveySeconds, "bsprun-survey");
    std::vector<Holdings> holdings;
    for (const auto& node : reachable_) {
      Holdings h;
      h.host = node;
      auto it = outputs.by_node.find(node);
      const std::string problem =
          it == outputs.by_node.end() ? "no answer through srun" : read_survey(it->second, h);
      keep_listing(node, problem, std::move(h), job_.opt, dir_, holdings);
    }
    return holdings;
  }

  std::vector<std::string> host_of_pid() const override { return host_of_pid_; }

  std::string hosts_text() const override { return chosen_text(plan_); }

  std::string bring(const std::vector<Transfer>& transfers, std::string& failed_host) override {
    // One after another: a lost node's shards are few, and each copy is two short srun steps.
    for (const Transfer& t : transfers) {
      if (job_.opt.verbose)
        say("copying " + t.from_host + ":" + t.from_name + " to " + t.to_host + ":" + t.to_name);
      const std::string problem =
          copy_between_nodes(t.from_host, local_dir(t.from_name), t.to_host, local_dir(t.to_name),
                             job_.opt.probe_timeout_s + kSurveySeconds);
      if (!problem.empty()) {
        failed_host = t.to_host;
        return problem;
      }
    }
    return "";
  }

  RunResult run(std::uint64_t resume, const std::string& run_id, double time_limit_s) override {
    if (const int status = write_allocation(job_.opt, plan_.subjobs, runs_++ == 0); status != 0) {
      RunResult unwritten;
      unwritten.started = false;
      unwritten.error = "the allocation could not be written";
      return unwritten;
    }
    MpiSettings settings =
        run_settings(job_.settings, dir_, resume, run_id, job_.opt, recoveries_allowed());
    settings.job_marker = new_job_marker();
    // The notes go into the job's directory on each node, which an allocation that ends under
    // the job leaves with its checkpoints, where the next run or the job's end removes them.
    const bool notes = job_.opt.restarts > 0;
    if (notes)
      settings.exports.push_back("BSPG_EXIT_NOTES=" +
                                 exit_notes_directory(settings.job_marker, dir_));
    // The library says which checkpoints are whole: after the allocation ends, no node can say.
    settings.exports.push_back("BSPG_SAY_WHOLE=1");
    {
      std::lock_guard<std::mutex> lock(nodes_mutex_);
      left_nodes_.clear();
      recovered_nodes_.clear();
      named_ranks_.clear();
    }
    // With spares, a node that stops answering is left to the library: its processes are named
    // lost to the job's other nodes through the notes' directories there.
    SlurmInPlace in_place;
    if (notes && settings.spares > 0) {
      in_place.leave_silent = [this, &settings](const std::string& node, bool daemon_gone) {
        return leave_silent(node, daemon_gone, settings.job_marker);
      };
      in_place.recovered_from = [this](const std::string& node) {
        std::lock_guard<std::mutex> lock(nodes_mutex_);
        return recovered_nodes_.count(node) > 0;
      };
      in_place.recovered = [this](const InPlaceRecovery& recovery) { recovered(recovery); };
      in_place.nodes_left = [this] {
        std::lock_guard<std::mutex> lock(nodes_mutex_);
        return std::vector<std::string>(left_nodes_.begin(), left_nodes_.end());
      };
    }
    RunResult result = run_slurm_subjobs(job_, plan_, settings, job_.opt.restarts > 0, time_limit_s,
                                         in_place, &lost_node_);
    name_lost_node(result);
    if (notes) find_killed_process(result, settings);
    return result;
  }

  // The nodes of this run: the job's, and the spares'.
  std::vector<std::string> run_nodes() const {
    std::vector<std::string> nodes;
    for (const auto& h : plan_.chosen) nodes.push_back(h.name);
    for (const auto& spare : plan_.spares)
      if (std::find(nodes.begin(), nodes.end(), spare.contact) == nodes.end())
        nodes.push_back(spare.contact);
    return nodes;
  }

  // A node silent for --host-timeout, or gone with its MPI daemon (daemon_gone; bsprun's srun
  // relay found its slurmd closed) (the watch's thread): where it holds a process of the job,
  // every other node of the run is told, in the notes' directory there, which processes (ranks
  // in MPI_COMM_WORLD) are lost on it, and the library cuts its connections to them and recovers
  // in place. false where it holds only spares, or a node could not be told: the job is then
  // stopped and restarted, as without spares.
  bool leave_silent(const std::string& node, bool daemon_gone, const std::string& marker) {
    const HostRanks ranks = ranks_on_host(plan_, host_of_pid_, node);
    if (ranks.job.empty()) return false;
    std::vector<int> named;
    std::vector<std::string> others;
    {
      std::lock_guard<std::mutex> lock(nodes_mutex_);
      named_ranks_.insert(named_ranks_.end(), ranks.all.begin(), ranks.all.end());
      named = named_ranks_;
      left_nodes_.insert(node);
      for (const std::string& other : run_nodes())
        if (left_nodes_.count(other) == 0) others.push_back(other);
    }
    const NodeOutputs told = run_on_nodes(others, lost_ranks_script(marker, named, dir_),
                                          job_.opt.probe_timeout_s, "bsprun-lost");
    std::string failed;
    for (const std::string& other : others) {
      auto it = told.by_node.find(other);
      if (it == told.by_node.end() || it->second.find("named") == std::string::npos)
        failed += (failed.empty() ? "" : ", ") + other +
                  (it == told.by_node.end() ? " (no answer through srun)"
                                            : " (the job's notes' directory there is missing)");
    }
    if (!failed.empty()) {
      std::lock_guard<std::mutex> lock(nodes_mutex_);
      left_nodes_.erase(node);
      say(node + " does not answer, but " + failed +
          " could not be told of its processes' loss: no recovery in place");
      return false;
    }
    say(node +
        (daemon_gone ? " is gone with its MPI daemon"
                     : " does not answer through srun for --host-timeout") +
        ": process" + (ranks.job.size() > 1 ? "es " : " ") + rank_list(ranks.job) +
        " there named lost to the job's other processes, for recovery in place");
    return true;
  }

  // The library's line: the nodes it recovered from. A lost process that still lives on a node
  // that answers was ended by the watch (stopped) or is gone (killed); one on a silent node is
  // left as it is, as nothing reaches it.
  void recovered(const InPlaceRecovery& recovery) {
    for (const LostProcess& lost : recovery.lost) {
      const std::string node = host_calling_itself(lost.host);
      if (node.empty()) continue;
      std::lock_guard<std::mutex> lock(nodes_mutex_);
      recovered_nodes_.insert(node);
    }
  }

  // MPICH's Hydra says only that a proxy hung up (a start failure of no host), also when a node
  // died under a running job; on the SSH path the host that no longer answers ssh is the lost
  // one (RemoteStop), here the node that no longer answers through srun.
  void name_lost_node(RunResult& result) const {
    if (result.exit_status == 0 || result.forwarded_signal || result.timed_out ||
        !result.lost.empty() || result.start_failure.host_lost ||
        result.start_failure.exit_status == 0)
      return;
    std::vector<std::string> nodes;
    for (const auto& h : plan_.chosen) nodes.push_back(h.name);
    const std::vector<std::string> silent = silent_nodes(nodes, job_.opt.probe_timeout_s);
    if (silent.empty()) return;
    result.start_failure.host_lost = true;
    result.start_failure.host = silent.front();
    result.start_failure.message = "lost contact with " + silent.front() + " while the job ran";
  }

  // As GridPlace's: a process killed by a signal, from the exit notes on the nodes.
  void find_killed_process(RunResult& result, const MpiSettings& settings) const {
    std::vector<std::string> nodes;
    {
      // Not on a node lost or left to the library: it does not answer.
      std::lock_guard<std::mutex> lock(nodes_mutex_);
      for (const auto& h : plan_.chosen)
        if (h.name != lost_node_ && left_nodes_.count(h.name) == 0) nodes.push_back(h.name);
    }
    if (allocation_end(job_.job_id).kind != AllocationEnd::kRunning) return;
    const NodeOutputs outputs = run_on_nodes(nodes, exit_notes_script(settings.job_marker, dir_),
                                             job_.opt.probe_timeout_s, "bsprun-notes");
    ExitNoteSet notes;
    bool complete = true;
    for (const auto& node : nodes) {
      auto it = outputs.by_node.find(node);
      complete = it != outputs.by_node.end() && read_exit_notes(it->second, notes) && complete;
    }
    take_killed_process(result, notes, complete, !lost_node_.empty(), host_of_pid_,
                        settings.mpi->name());
  }

  std::string watched_lost_host() const override { return lost_node_; }

  std::string host_calling_itself(const std::string& name) const override {
    return chosen_calling_itself(plan_, name);
  }

  void lose(const std::string& host) override {
    reachable_.erase(std::remove(reachable_.begin(), reachable_.end(), host), reachable_.end());
  }

  std::string ended(int& status) override {
    const AllocationEnd end = allocation_end(job_.job_id);
    if (end.kind == AllocationEnd::kRunning) return "";
    status = end.kind == AllocationEnd::kTimeLimit   ? kExitTimeLimit
             : end.kind == AllocationEnd::kCancelled ? 128 + SIGTERM
                                                     : kExitLaunchFailed;
    return "Slurm job " + job_.job_id + " " + end.why;
  }

  void clean_up(bool remove_directory) override {
    if (!remove_directory) return;
    // The last run's processes removed the directory on their nodes (BSPG_CHECKPOINT_CLEANUP).
    std::set<std::string> done;
    for (const auto& h : plan_.chosen) done.insert(h.name);
    std::vector<std::string> nodes;
    for (const auto& name : used_)
      if (!left_out_.count(name) && !done.count(name)) nodes.push_back(name);
    if (nodes.empty()) return;
    run_on_nodes(nodes, remove_script(dir_, remove_directory), job_.opt.probe_timeout_s,
                 "bsprun-clean-up");
  }

 private:
  std::string local_dir(const std::string& name) const { return local_path(dir_) + "/" + name; }

  const SlurmJob& job_;
  std::string dir_;
  GridPlan plan_;
  std::map<std::string, std::string> left_out_;
  std::vector<std::string> reachable_;
  std::vector<std::string> host_of_pid_;
  std::set<std::string> used_;
  // This run's nodes left to the library, those it recovered from, and the ranks named lost.
  mutable std::mutex nodes_mutex_;
  std::set<std::string> left_nodes_, recovered_nodes_;
  std::vector<int> named_ranks_;
  std::string lost_node_;  // the node the watch found lost in the last run, "" when none
  int runs_ = 0;
};

}  // namespace

int run_slurm_restartable(const SlurmJob& job) {
  SlurmPlace place(job);
  return run_restartable(job.opt, place);
}

}  // namespace bspg::launcher
