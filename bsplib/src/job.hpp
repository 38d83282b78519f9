// job.hpp - how the processes of a run come together at bsp_begin and part at bsp_end, or when
// the program ends before bsp_begin. Either all processes are started at once (mpirun -np N,
// bsprun -p N) and process 0 tells the others at bsp_begin how many take part, or bsprun
// started the master alone and its bsp_begin spawns the others (master.hpp).
#pragma once

#include <mpi.h>

namespace bspg {

struct Membership {
  MPI_Comm comm;  // MPI_COMM_NULL: this process is not needed (bsp_begin asked for fewer)
  int pid;
  int nprocs;  // processes in the SPMD section
};

// bsp_begin(maxprocs): who takes part; comm (when not null) is owned by the caller. Under
// bsp_init only process 0's maxprocs counts. The others learn here if process 0 ended the
// program instead, and end as well, with status 0.
Membership join_job(int maxprocs);

// bsp_end, after the superstep engine has freed its communicators.
void leave_job();

// bsp_nprocs() before bsp_begin: the processes started, or in master mode those available.
int processes_available();

// bsp_init: whether this process runs the SPMD part at once (every process but 0, and every
// process spawned in master mode) instead of returning to main.
bool runs_spmd_part_at_once();

// Once bspg has initialised MPI: a process spawned in master mode reports and stops through the
// master; a program that ends before bsp_begin (a usage message and exit(0), say) ends with its
// own status and without Open MPI's complaint that a process did not finalize.
void mpi_started_by_bspg();

}  // namespace bspg
