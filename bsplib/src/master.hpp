// master.hpp - BSP-G's master mode (the paper's "nonpure SPMD" mode). bsprun without -p starts
// one process, the master. Its bsp_begin(P) starts the other P-1 with MPI_Comm_spawn_multiple,
// on the slots bsprun chose, and merges them with itself into one communicator in which the
// master is pid 0. The spawned processes run main from its start and join at their bsp_begin
// (under bsp_init they go straight to the SPMD part). bsprun describes the slots to the master
// in its environment:
//   BSPG_MASTER_PROCS=N       the processes available: bsp_nprocs() before bsp_begin
//   BSPG_MASTER_SLOTS=h/g,... (grid path) the N slots in the order processes take them, the
//                             master's own first; g numbers the subjob of host h (hosts of one
//                             site share it). Without it every process runs on this machine.
//   BSPG_MASTER_ENV=A,B       variables of the master's environment the others get as well
// Everything read from the environment is validated; a bad value is an error naming it.
#pragma once

#include <mpi.h>

#include "job.hpp"

namespace bspg::master {

enum class Role {
  Spmd,     // started with the others (mpirun -np N, bsprun -p N, or a plain run)
  Master,   // started alone by bsprun in master mode
  Spawned,  // started by the master's bsp_begin
};

// Once MPI runs: a process spawned by a master reports and stops through the master from now on
// (its own MPI_COMM_WORLD holds only the spawned processes).
void note_how_started();

// This process's role. MPI must be running. `call` names the BSPlib call in error messages.
Role role(const char* call);

// bsp_nprocs() before bsp_begin, for the master and the spawned processes.
int available(const char* call);

// bsp_begin(maxprocs) of the master (spawns min(maxprocs, available) - 1 processes) or of a
// spawned process (whose maxprocs is ignored: the master's rules, as under bsp_init).
Membership join(int maxprocs);  // comm: the master first, then the spawned

// bsp_end, after the superstep engine freed its communicators: the master and the spawned
// processes part (MPI_Comm_disconnect), so that each may finalize on its own.
void leave();

}  // namespace bspg::master
