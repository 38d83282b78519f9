// slurm.h - bsprun inside a Slurm allocation: the allocation's nodes are the candidates, probed
// through srun (one step, one task per node) and the job started as one Slurm job step by the
// MPI's own Slurm launcher. No ssh is used on this path.
//
// Costs: one scontrol and one sinfo call (the allocation and its nodes' states), one srun step
// for the probe (bounded by --probe-timeout), then the MPI's starter; after a failed or stopped
// run, one squeue and, for steps of the job that were left running, one scancel.
#ifndef BSPG_LAUNCHER_SLURM_H
#define BSPG_LAUNCHER_SLURM_H

#include <map>
#include <string>
#include <vector>

#include "hosts.h"
#include "mpistart.h"
#include "options.h"

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

// ---- The path ---------------------------------------------------------------------------------

// Runs bsprun's Slurm path (uses_slurm(opt)). Returns bsprun's exit status.
int run_slurm(const Options& opt, const MpiSettings& settings);

}  // namespace bspg::launcher

#endif
