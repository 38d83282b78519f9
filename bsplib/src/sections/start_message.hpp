// start_message.hpp - the start of a section as the processes learn it: the start message that
// process 0 (or a master) sends to the processes waiting for a section, and the membership each
// process takes from bsp_begin.
#pragma once

#include <mpi.h>

#include "part_location.hpp"

namespace bspg {

struct Membership {
  MPI_Comm comm;  // MPI_COMM_NULL: this process is not needed (bsp_begin asked for fewer)
  int pid;
  int nprocs;  // processes in the SPMD section
};

// What process 0 tells the others at bsp_begin, or at the program's end. kHold: process 0 ends
// with a non-zero status and is about to stop the job (hold_waiting_processes).
enum StartKind : int { kBegin = 1, kEnd = 2, kHold = 3 };
struct StartMessage {
  int kind;
  int value;          // kBegin: the processes process 0 asked for; kHold: process 0's status
  PartLocation part;  // kBegin: the SPMD part bsp_init named last on process 0
};

// Collective over comm: rank 0's message reaches the others, who wait idly for it.
StartMessage exchange_start_message(MPI_Comm comm, StartMessage mine);

// Rank 0 of comm, before it stops the job with `status` while the others wait for a start
// message: they leave MPI first and say so (at most 2 s awaited). A process that still polled MPI
// would take the abort's closed connections for a failure of its own and stop the job too, with
// its own status and message (Open MPI 5, between a master and the processes it spawned).
void hold_waiting_processes(MPI_Comm comm, int status);

// A waiting process that received kHold: says so to rank 0, makes no more MPI calls and waits
// for rank 0's abort; if that has not ended it within 0.5 s, stops the job itself with the status
// rank 0 gave, quietly.
[[noreturn]] void hold_until_stopped(MPI_Comm comm, const StartMessage& hold);

}  // namespace bspg
