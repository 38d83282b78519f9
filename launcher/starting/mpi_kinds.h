// mpi_kinds.h - the implementations of mpi.h, one per MPI (internal to the launcher).
#ifndef BSPG_LAUNCHER_MPI_KINDS_H
#define BSPG_LAUNCHER_MPI_KINDS_H

#include <memory>
#include <string>

#include "mpi.h"

namespace bspg::launcher {

// Open MPI's mpirun: ORTE's (Open MPI 4) or, with prrte, PRRTE's (Open MPI 5); ulfm: built with
// fault tolerance (mpirun --with-ft ulfm).
std::unique_ptr<Mpi> make_open_mpi(bool prrte, std::string version, std::string starter,
                                   bool ulfm);
// MPICH's Hydra mpiexec (and its derivatives').
std::unique_ptr<Mpi> make_mpich(std::string version, std::string starter);

}  // namespace bspg::launcher

#endif
