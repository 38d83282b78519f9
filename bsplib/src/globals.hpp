// globals.hpp - the sequential part's global variables reach the SPMD section: at bsp_begin every
// process but pid 0 takes pid 0's values of the executable's own global variables.
#pragma once

#include <mpi.h>

namespace bspg {

// Collective over comm (the section's processes, root = pid 0).
void share_globals(MPI_Comm comm, int root);

}  // namespace bspg
