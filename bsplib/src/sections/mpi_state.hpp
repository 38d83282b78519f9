// mpi_state.hpp - who starts MPI: the program itself (it calls MPI_Init), or bspg, which then
// owns it and finalizes it at the program's end (or at the last bsp_end).
#pragma once

namespace bspg {

// Whether the executable calls MPI_Init or MPI_Init_thread itself (it imports one of them).
bool program_starts_mpi_itself();

// Starts MPI unless someone already has; returns whether it started it now (bspg owns it from
// then on).
bool start_mpi_as_owner();

// Whether bspg started MPI in this process.
bool bspg_owns_mpi();

}  // namespace bspg
