// in_place.h - recovery in place (bsprun --spares K): whether this run can have it, what bsprun
// says about it, and ending a lost process the library recovered from that may still live.
//
// With the MPI's fault tolerance (Open MPI 5 built with ULFM; Mpi::in_place_unavailable), the
// job starts with K spare processes after its own (one starter, the spares the last K ranks) and
// BSPG_SPARES=K, BSPG_RECOVERIES=N (the recoveries in place it may make: the restarts left). When
// a process is lost, the others go on with a spare in its place and the library says so in one
// line (recovery_lines.h), which counts as one of the --restarts. A lost process that still lives
// (its host or itself frozen: the MPI's heartbeat declared it dead) would keep the starter waiting
// at the end: bsprun ends it. When the job cannot recover in place, it ends with status 76 and
// bsprun restarts it from its newest checkpoint as after any other loss (restart.h).
#ifndef BSPG_LAUNCHER_IN_PLACE_H
#define BSPG_LAUNCHER_IN_PLACE_H

#include <string>
#include <vector>

#include "mpi.h"
#include "options.h"
#include "recovery_lines.h"

namespace bspg::launcher {

struct InPlaceChoice {
  int spares = 0;        // spares to start (MpiSettings::spares); 0: no recovery in place
  std::string refused;   // --recovery in-place cannot be had: why, in one line (a usage error)
  std::string not_used;  // --spares falls back to restarts: why, in one line (said with -v)
};

// For `opt` with `mpi` (the Slurm path too: its starter is the MPI's own, mpirun).
InPlaceChoice choose_in_place(const Options& opt, const Mpi& mpi);

// bsprun's -v line on a recovery in place: "process 2 on h2 lost: recovered in place (a spare
// took its place), restart 1 of 2 used".
std::string in_place_text(const InPlaceRecovery& recovery, int used, int allowed);

// Ends, on this machine, the lost process `lost` names, if it is a process of the job that still
// lives: a process of this user and UTS namespace whose environment holds every line of
// `job_lines` (BSPG_JOB_ID=..., BSPG_RUN=...), not an MPI daemon. `this_host`: this machine's
// name (lost.host must be it, or its short form). Returns "" or what bsprun says (with -v): that
// the process was ended, or why nothing was done.
std::string end_lost_process_here(const LostProcess& lost,
                                  const std::vector<std::string>& job_lines,
                                  const std::string& this_host);

// Whether `said` (as a host calls itself) is `name` (a host file's name), or the short form of
// one is the other's ("node1" and "node1.example.org"); never for an address.
bool same_host_name(const std::string& said, const std::string& name);

}  // namespace bspg::launcher

#endif
