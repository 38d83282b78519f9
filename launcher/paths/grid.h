// grid.h - bsprun's grid path: host file, probe, allocate, RSL, one mpirun over ssh.
#ifndef BSPG_LAUNCHER_GRID_H
#define BSPG_LAUNCHER_GRID_H

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "allocate.h"
#include "hosts.h"
#include "monitor.h"
#include "mpistart.h"
#include "options.h"
#include "recovery_lines.h"
#include "remote_stop.h"
#include "runner.h"

namespace bspg::launcher {

// Runs the grid path for opt (hostfile and/or rsl_in set). Returns bsprun's exit status.
int run_grid(const Options& opt, const MpiSettings& settings);

// ---- The parts a restarted job is made of (grid_place.cpp) -----------------------------------

// What a grid job knows before it probes.
struct GridJob {
  const Options& opt;
  const MpiSettings& settings;
  std::string program;  // absolute path here
  std::vector<hosts::HostSpec> candidates;
  hosts::ProbeOptions probe;  // keys, fan-out, timeout (the program is checked by plan_grid only)
  std::string ssh_config;     // an ssh configuration for every candidate
};

struct GridPlan {
  Allocation allocation;
  std::vector<rsl::Subjob> subjobs;
  std::vector<hosts::HostSpec> chosen;  // hosts with processes of the job
  // Recovery in place (MpiSettings::spares): the spares' app contexts, one per host
  // (place_spares), started after the subjobs'.
  std::vector<rsl::Subjob> spares;
};

// The spares' app contexts for an allocation (plan_grid; Slurm's plan too): `spares` processes
// placed by place_spares, each host's running `executable` (staged_path: the host's own copy,
// with --stage) with the job's arguments in `directory`. Empty without spares.
std::vector<rsl::Subjob> spare_subjobs(const Allocation& allocation, int spares,
                                       const std::string& executable,
                                       const std::vector<std::string>& arguments,
                                       const std::string& directory,
                                       const std::map<std::string, std::string>* staged_path);

// What a run with spares does besides: what to do once the library recovered in place, and
// whether the host monitor's verdict on a host is to be dismissed (the library recovered from
// that host's loss itself).
struct SpareRun {
  std::vector<rsl::Subjob> spares;
  std::function<void(const InPlaceRecovery&)> recovered;
  std::function<bool(const std::string& host)> dismissed;
  // Silent hosts whose processes were named lost (JobWatch::hosts_left).
  std::function<std::vector<std::string>()> hosts_left;
  // A host found gone with its MPI daemon (JobWatch::daemon_gone), before the watch hands it over:
  // no other host's word of a lost process is asked of it.
  std::function<void(const std::string& host)> gone;
};

// Runs the job with -p N on the hosts, restarting it from its checkpoints as opt says
// (restart.h): bsprun's exit status.
int run_grid_restartable(const GridJob& job);

// Probes the candidates but those in left_out (shown as not used, with the reason given), places
// opt.nprocs processes (master mode: every slot), checks the program on the chosen hosts (or
// stages it) and makes the RSL subjobs. Prints the probe table when show_table. Returns 0, or
// bsprun's exit status once it said why not. At a restart, previous_host_of_pid (the host each
// pid ran on) keeps processes where they ran, where it can (keep_previous_hosts).
int plan_grid(const GridJob& job, const std::map<std::string, std::string>& left_out,
              bool show_table, GridPlan& plan,
              const std::vector<std::string>& previous_host_of_pid = {});

// Places opt.nprocs processes on the probed hosts (master mode: every slot, or --max-procs)
// and prints the table when show_table; where they do not fit, prints the table and says why.
// 0 or bsprun's exit status.
int allocate_processes(const Options& opt, const std::vector<hosts::ProbeResult>& probes,
                       bool show_table, Allocation& allocation,
                       const std::vector<std::string>& previous_host_of_pid = {});
// The hosts the allocation gives processes, in candidate order.
std::vector<hosts::HostSpec> chosen_hosts(const Allocation& allocation);

// Master mode: one subjob, the master, with the slots for bsp_begin in its environment.
bool is_master(const std::vector<rsl::Subjob>& subjobs);

// Master mode (BSP-G's nonpure SPMD): the allocation holds every slot; the RSL names the master
// alone, on the first slot, with the slots bsp_begin fills in its environment (the paper's
// MASTERPROCESS). `subjobs` are those of the whole allocation. Says where the master starts.
rsl::Subjob master_subjob(const Allocation& allocation, const std::vector<rsl::Subjob>& subjobs,
                          const MpiSettings& settings);

// Checks the subjobs as an RSL file would be checked and writes them to opt.rsl_out (none is
// written without it), saying so when `announce`. 0 or bsprun's exit status.
int write_allocation(const Options& opt, const std::vector<rsl::Subjob>& subjobs, bool announce);

// How to reach the processes of a job started with these subjobs (a new marker for them).
RemoteJob remote_job(const std::vector<rsl::Subjob>& subjobs,
                     const std::vector<hosts::HostSpec>& hosts, const std::string& ssh_config);

// What the host monitor of a run saw: the host it declared lost, the host the job is moved off
// (--migrate-load); "" when none.
struct MonitorVerdict {
  std::string lost_host, moving_off;
};

// Runs the subjobs as one mpirun while a HostMonitor (`watching`) probes their hosts (`hosts`:
// the host file's entries; others are reached as the user's ssh configuration says) and stops
// the job when one is lost. quiet_losses: the job may be restarted (JobWatch). The result's
// start_failure says why when no mpirun command line could be made (exit_status 125).
// spare_run: the spares (placed after the subjobs) and what happens on a recovery in place.
RunResult run_subjobs(const std::vector<rsl::Subjob>& subjobs,
                      const std::vector<hosts::HostSpec>& hosts, const MpiSettings& settings,
                      const RemoteJob& remote, const MonitorOptions& watching, bool quiet_losses,
                      double time_limit_s, MonitorVerdict* verdict = nullptr,
                      const SpareRun& spare_run = {});

}  // namespace bspg::launcher

#endif
