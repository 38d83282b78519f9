// place_support.h - what the three paths' JobPlaces (restart.h) share: where bspg-hostinfo is,
// how long a survey of checkpoints may take, the wording of lost processes, and, for the grid and
// Slurm places, the hosts of a plan and what the hosts say (checkpoint listings, exit notes).
#ifndef BSPG_LAUNCHER_PLACE_SUPPORT_H
#define BSPG_LAUNCHER_PLACE_SUPPORT_H

#include <string>
#include <vector>

#include "checkpoints.h"
#include "exit_notes.h"
#include "grid.h"
#include "options.h"
#include "runner.h"

namespace bspg::launcher {

// The survey reads every shard it lists (a few hundred MB/s at least): it gets this long beyond
// the probe timeout.
constexpr double kSurveySeconds = 30;

std::string sibling_hostinfo();
// This bsprun's own path ("" where unknown).
std::string this_bsprun();
void say_skipped(const Holdings& h, const std::string& dir);
std::string and_list(const std::vector<std::string>& items);
std::string rank_list(const std::vector<int>& ranks);
std::string lost_processes_text(const std::vector<int>& lost, const std::string& where,
                                const std::string& mpi_name);
std::vector<std::string> hosts_of_pids(const GridPlan& plan);
// The MPI_COMM_WORLD ranks on `host`: `all` of them (the job's processes, host_of_pid, come
// first, then the plan's spares), and `job`, those that are the job's processes; for naming a
// silent host's processes lost (leave_silent on each path).
struct HostRanks {
  std::vector<int> all, job;
};
HostRanks ranks_on_host(const GridPlan& plan, const std::vector<std::string>& host_of_pid,
                        const std::string& host);
std::string chosen_text(const GridPlan& plan);
std::string chosen_calling_itself(const GridPlan& plan, const std::string& name);
void keep_listing(const std::string& host, const std::string& problem, Holdings&& h,
                  const Options& opt, const std::string& dir, std::vector<Holdings>& holdings);
// A run with spares that ended with the library's status for a restart (kExitNoRecoveryInPlace)
// without its line: the notes decide. Where a process ended with that status, the run is taken as
// the library's end for a restart (no_recovery set, naming the first job's process the notes show
// killed). true where it was.
bool take_unsaid_end_for_restart(RunResult& result, const ExitNoteSet& notes,
                                 const std::vector<std::string>& host_of_pid);
void take_killed_process(RunResult& result, const ExitNoteSet& notes, bool complete,
                         bool other_loss, const std::vector<std::string>& host_of_pid,
                         const std::string& mpi_name);

}  // namespace bspg::launcher

#endif
