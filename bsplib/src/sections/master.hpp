// master.hpp - BSP-G's master mode (the paper's "nonpure SPMD" mode). bsprun without -p starts
// one process, the master. Its bsp_begin(P) starts the other P-1 with MPI_Comm_spawn_multiple,
// on the slots bsprun chose, and merges them with itself into one communicator in which the
// master is pid 0. The spawned processes run the SPMD part bsp_init named (BSPG_SPMD_PART, before
// main: section.cpp's before_main), or main from its start where there is none, and join at their
// bsp_begin; between sections they wait in the pool (BSPG_SPAWNED_BY_MASTER=AVAILABLE:STAYS).
// bsprun describes the slots to the master in its environment:
//   BSPG_MASTER_PROCS=N       the processes available: bsp_nprocs() before bsp_begin
//   BSPG_MASTER_SLOTS=h/g,... (grid path) the N slots in the order processes take them, the
//                             master's own first; g numbers the subjob of host h (hosts of one
//                             site share it). Without it every process runs on this machine.
//   BSPG_MASTER_ENV=A,B       variables of the master's environment the others get as well
// Everything read from the environment is validated; a bad value is an error naming it.
#pragma once

#include <mpi.h>

#include "start_message.hpp"

namespace bspg::master {

enum class Role {
  Spmd,     // started with the others (mpirun -np N, bsprun -p N, or a plain run)
  Master,   // started alone by bsprun in master mode
  Spawned,  // started by the master's bsp_begin
};

// Once MPI runs: a process spawned by a master reports and stops through the master from now on
// (its own MPI_COMM_WORLD holds only the spawned processes).
void note_how_started();

// A spawned process whose program ends before bsp_begin, where the master waits: the master says
// so in one line and stops the job (the spawned processes never abort at once).
[[noreturn]] void stop_before_begin(int status);

// This process's role. MPI must be running. `call` names the BSPlib call in error messages.
Role role(const char* call);

// bsp_nprocs() before bsp_begin, for the master and the spawned processes.
int available(const char* call);

// The SPMD part a spawned process runs at once: the one its master named in BSPG_SPMD_PART (a
// process spawned for a later section runs that section's part, not the first one main names),
// else `named`.
void (*spmd_part_from_master(void (*named)(void)))(void);

// bsp_begin(maxprocs) of the master or of a spawned process (whose maxprocs is ignored: the
// master's rules, as under bsp_init). The section has min(maxprocs, available) processes. The
// master spawns those it does not have yet: all but itself in the first section; in a later one
// (under bsp_init) the processes spawned before wait between sections, in the pool, and only
// more are spawned. `received`: the start message a waiting spawned process got (null for a
// process spawned for this section). comm is null for a waiting process this section does not
// need.
Membership join(int maxprocs, const StartMessage* received);  // comm: the master first

// bsp_end, after the superstep engine freed its communicators. Where no later section can follow,
// the master and the spawned processes part (MPI_Comm_disconnect), so that each may finalize on
// its own; otherwise they stay together in the pool.
void leave();

// Whether the master and the processes it spawned stay together between sections: bspg owns MPI
// on the master, so a later section may follow (it tells the spawned processes so). For the
// master or a spawned process only.
bool pool_stays();

// The master and every process it spawned so far, master first (MPI_COMM_NULL: none spawned).
MPI_Comm pool();

// At the program's end: the master tells the waiting processes to end, and all part.
void end_pool();

// Nested runs (MulticoreBSP 2's hierarchical BSP): inside a section, a process's bsp_begin(P)
// spawns P-1 processes from MPI_COMM_SELF for a run of its own, whose pid 0 it is (join, as a
// master's, with no pool: they end at its bsp_end). begin_nested sets this process's state for
// its own section aside and makes it such a spawner of up to `available` processes; end_nested,
// after the nested run's leave, brings the outer section's state back.
void begin_nested(int available);
void end_nested();

// Whether this process's current run is a nested one: its pid 0 between begin_nested and
// end_nested, or a process that pid 0 spawned for it (which ends with it).
bool in_nested_run();

}  // namespace bspg::master
