// all_at_once.hpp - a run whose processes a starter started all at once (mpirun -np N, bsprun -p
// N): their ranks in MPI_COMM_WORLD, and the start messages process 0 sends over it to the others,
// which wait for them before main and between sections.
#pragma once

#include "start_message.hpp"

namespace bspg::all_at_once {

// The rank the MPI's starter gave this process in its environment (Open MPI, MPICH's Hydra,
// PMIx, Slurm's srun): -1 where none says (a plain run). Readable before MPI starts.
long rank_from_starter();

// This process's rank in MPI_COMM_WORLD, and its size. MPI must be running.
int rank();
int size();

// Collective over MPI_COMM_WORLD: process 0's message reaches the others, who wait idly for it.
StartMessage exchange(StartMessage mine);

// The section a begin message starts: the first `start.value` processes take part (fails,
// collectively, where process 0 asked for fewer than 1); comm is null for the others.
Membership split(const StartMessage& start);

}  // namespace bspg::all_at_once
