// all_at_once.cpp - the processes a starter started all at once: ranks, start messages over
// MPI_COMM_WORLD, and the split of a section's processes from the others.
#include "all_at_once.hpp"

#include <mpi.h>

#include <cstdlib>
#include <initializer_list>

#include "errors.hpp"
#include "in_place.hpp"
#include "lost_peers.hpp"

namespace bspg::all_at_once {

long rank_from_starter() {
  long found = -1;
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"}) {
    const char* text = std::getenv(name);
    if (text == nullptr || *text == '\0') continue;
    char* end = nullptr;
    const long rank = std::strtol(text, &end, 10);
    if (*end == '\0' && rank > found) found = rank;
  }
  return found;
}

int rank() {
  int rank = 0;
  MPI_Comm_rank(in_place::job_world(), &rank);
  return rank;
}

int size() {
  int size = 1;
  MPI_Comm_size(in_place::job_world(), &size);
  return size;
}

StartMessage exchange(StartMessage mine) {
  return exchange_start_message(in_place::job_world(), mine);
}

Membership split(const StartMessage& start) {
  const int maxprocs = start.value;
  if (maxprocs < 1)
    fail_collective(0, "bsp_begin", "maxprocs is %d; it must be at least 1", maxprocs);
  const int me = rank(), nprocs = maxprocs < size() ? maxprocs : size();
  MPI_Comm comm;
  MPI_Comm_split(in_place::job_world(), me < nprocs ? 0 : MPI_UNDEFINED, me, &comm);
  lost_peers::watch(comm);
  return {comm, me, nprocs};
}

}  // namespace bspg::all_at_once
