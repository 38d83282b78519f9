// slurm.h - bsprun inside a Slurm allocation: the allocation's nodes are the candidates, probed
// through srun (one step, one task per node) and the job started as one Slurm job step by the
// MPI's own Slurm launcher. No ssh is used on this path.
//
// Costs: one scontrol and one sinfo call (the allocation and its nodes' states), one srun step
// for the probe (bounded by --probe-timeout), then the MPI's starter; after a failed or stopped
// run, one squeue and, for steps of the job that were left running, one scancel.
#ifndef BSPG_LAUNCHER_SLURM_H
#define BSPG_LAUNCHER_SLURM_H

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hosts.h"
#include "mpistart.h"
#include "options.h"
#include "recovery_lines.h"
#include "rsl.h"
#include "runner.h"

namespace bspg::launcher {

// The Slurm job bsprun runs in (SLURM_JOB_ID), "" outside one.
std::string slurm_job_id();

// Whether bsprun takes the Slurm path for these options: inside an allocation and no --hostfile
// (a host file inside an allocation still means ssh).
bool uses_slurm(const Options& opt);

// ---- Pure parts (unit-tested) ---------------------------------------------------------------

// SLURM_JOB_CPUS_PER_NODE ("2(x3),1") as one count per node ({2, 2, 2, 1}). Throws
// std::invalid_argument when malformed.
std::vector<int> expand_cpus_per_node(const std::string& text);

// A node of the allocation as `sinfo -h -N -o '%N|%f|%P|%T'` describes it (a node in several
// partitions appears once, with them all).
struct SlurmNode {
  std::string name;
  std::vector<std::string> features;
  std::vector<std::string> partitions;
  std::string state;  // "idle", "mixed", "down*", "drained", ...
};
// Reads those lines. Node names must be host names (letters, digits, '.', '_', '-', not first
// '-'); throws std::invalid_argument naming the line otherwise.
std::map<std::string, SlurmNode> read_sinfo_nodes(const std::string& text);

// The site a node belongs to: its first feature that starts with "site" ("site1", "site-east"),
// else `partition` (the job's). Nodes of one site form one subjob.
std::string site_of(const SlurmNode& node, const std::string& partition);

// Why a node in `state` cannot take processes ("" when it can): down, drained or draining,
// failing, not responding ('*'), powered down.
std::string unusable_state(const std::string& state);

// The probe's output through `srun --label` (lines "TASK: TEXT"; each task first prints
// "node NAME"): each node's own lines, and in `other` the lines that carry no task label (srun's
// own messages).
std::map<std::string, std::string> split_probe_output(const std::string& text, std::string& other);

// How a Slurm job's allocation ended, from `scontrol show job -o ID`'s output (or its error):
// kind kRunning when it has not ended (or scontrol could not say), else why, for a message
// ("reached its time limit", "was cancelled", ...).
struct AllocationEnd {
  enum Kind { kRunning, kTimeLimit, kCancelled, kOther } kind = kRunning;
  std::string why;
};
AllocationEnd read_allocation_end(const std::string& scontrol_output);
// Asks Slurm about job `job_id` (scontrol, at most 5 s).
AllocationEnd allocation_end(const std::string& job_id);

// ---- The path ---------------------------------------------------------------------------------

// Runs bsprun's Slurm path (uses_slurm(opt)). Returns bsprun's exit status.
int run_slurm(const Options& opt, const MpiSettings& settings);

// A job on the Slurm path, before it probes.
struct SlurmJob {
  const Options& opt;  // with the checkpoint directory on node-local storage by default
  const MpiSettings& settings;
  std::string program;  // absolute path
  std::string job_id;   // Slurm's
};

// What one srun step running a script on some nodes gave: each node's output (untrusted), the
// lines srun printed itself, and whether the step was ended at its bound.
struct NodeOutputs {
  std::map<std::string, std::string> by_node;
  std::string srun_said;
  bool timed_out = false;
  double elapsed_s = 0;
  // This machine's address as the tasks saw it (Slurm's SLURM_LAUNCH_NODE_IPADDR), "" if none.
  std::string launch_address;
};
// Runs the sh `script` on each node (one srun step, one task per node, within the job's
// allocation, sharing its CPUs with running steps), ended after timeout_s.
NodeOutputs run_on_nodes(const std::vector<std::string>& nodes, const std::string& script,
                         double timeout_s, const std::string& step_name);
// The nodes that give no answer through srun within timeout_s (one step running `true`, named
// bsprun-check), in the order given; srun_said, if not null, gets the first line srun printed.
std::vector<std::string> silent_nodes(const std::vector<std::string>& nodes, double timeout_s,
                                      std::string* srun_said = nullptr);

// The command line of a one-task step on `node` that shares the job's CPUs (srun --overlap),
// bounded by timeout_s (at least 1 s; SIGTERM, then SIGKILL 3 s later), named job_name; the
// caller adds srun's other options and the command.
std::vector<std::string> one_task_step(const std::string& node, double timeout_s,
                                       const std::string& job_name);

// Copies the file `from_path` of node `from` to `to_path` on node `to` through this machine (two
// srun steps; the target is written beside and renamed). "" or what went wrong.
std::string copy_between_nodes(const std::string& from, const std::string& from_path,
                               const std::string& to, const std::string& to_path,
                               double timeout_s);

// Reads the allocation (nodes in left_out are shown as not used, with the reason), probes its
// nodes through srun, places the processes and makes the subjobs, as plan_grid does for hosts.
// 0 or bsprun's exit status once it said why not.
struct GridPlan;
int plan_slurm(const SlurmJob& job, const std::map<std::string, std::string>& left_out,
               bool show_table, GridPlan& plan);

// Where the job recovers in place (spares and --restarts): what the run does with a node that
// stops answering, and what it hears of the library's recoveries (SlurmPlace fills it).
struct SlurmInPlace {
  // The node's processes are named lost to the job's other nodes (the library then cuts its
  // connections to them and recovers in place): true where that was done. From the watch's thread.
  // daemon_gone: the node was handed over by node_gone (bsprun's srun relay), not for its silence.
  std::function<bool(const std::string& node, bool daemon_gone)> leave_silent;
  // Whether the library's line said it recovered from a process of `node`.
  std::function<bool(const std::string& node)> recovered_from;
  // Each recovery in place the library's line reports (JobWatch::recovered).
  std::function<void(const InPlaceRecovery&)> recovered;
  // The nodes left to the library (JobWatch::hosts_left).
  std::function<std::vector<std::string>()> nodes_left;
};

// Runs the plan's subjobs as one starter through Slurm (MpiSettings::through_slurm) on its chosen
// nodes (in the allocation's order, as plan_slurm leaves them), then cancels the
// job's steps it left running.
// With in_place set (spares), a node that stops answering is left to the library (SlurmInPlace).
// lost_node: set to the node the watch found lost, "" when none.
RunResult run_slurm_subjobs(const SlurmJob& job, const GridPlan& plan, const MpiSettings& settings,
                            bool quiet_losses, double time_limit_s,
                            const SlurmInPlace& in_place = {}, std::string* lost_node = nullptr);

// Watches the job's `nodes` through an srun step on them every few seconds (slurm_watch.cpp),
// from a thread of its own while the watch lives:
// - A process of the job (the processes carrying `marker`) stopped (SIGSTOP) for timeout_s while
//   its node answers. With end_stopped (spares) such a process is ended instead, and the library
//   recovers in place; otherwise lost() says it ("process 1 on emu2: stopped (SIGSTOP) for 4 s,
//   noticed through srun") and the job is stopped for a restart.
// - A node that does not answer for timeout_s (frozen, cut off, or gone while Slurm has not yet
//   noticed: Slurm's own watch waits SlurmdTimeout, 300 s by default), while others do (a step
//   that no node answers says nothing: Slurm's controller may be slow to make it). It is handed to
//   in_place.leave_silent where set, and lost where that refuses, or where the library has not
//   recovered from it kLeftHostGrace seconds later; lost() then says "emu2: no answer through
//   srun for 4.0 s, noticed by bsprun".
class SlurmNodeWatch {
 public:
  SlurmNodeWatch(std::vector<std::string> nodes, const std::string& marker, double timeout_s,
                 double probe_timeout_s, bool end_stopped, bool verbose,
                 SlurmInPlace in_place = {});
  ~SlurmNodeWatch();
  SlurmNodeWatch(const SlurmNodeWatch&) = delete;
  SlurmNodeWatch& operator=(const SlurmNodeWatch&) = delete;
  std::string lost() const;       // "" or what was lost
  std::string lost_host() const;  // its node
  // The library said it cannot recover in place: a node left to it is lost at once. Any thread.
  void recovery_refused();
  // `node` is gone (its MPI daemon's connection ended while its slurmd no longer answers;
  // srun_relay.h): handed to in_place.leave_silent at once, as a node silent for timeout_s would
  // be, or lost where that is not set or refuses. Any thread.
  void node_gone(const std::string& node);

 private:
  class Rounds;
  std::unique_ptr<Rounds> rounds_;
};

// The restart loop on the Slurm path (restart.cpp).
int run_slurm_restartable(const SlurmJob& job);

}  // namespace bspg::launcher

#endif
