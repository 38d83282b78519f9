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

// What process 0 tells the others at bsp_begin, or at the program's end.
enum StartKind : int { kBegin = 1, kEnd = 2 };
struct StartMessage {
  int kind;
  int value;          // kBegin: the processes process 0 asked for
  PartLocation part;  // kBegin: the SPMD part bsp_init named last on process 0
};

// Collective over comm: rank 0's message reaches the others, who wait idly for it.
StartMessage exchange_start_message(MPI_Comm comm, StartMessage mine);

}  // namespace bspg
