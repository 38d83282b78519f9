// start_message.cpp - the start message's exchange: one broadcast that the waiting processes poll
// gently.
#include "start_message.hpp"

#include <time.h>

#include "lost_peers.hpp"

namespace bspg {

// Process 0 sends, the others receive. Those waiting may wait long (process 0 runs main, or the
// sequential part between sections), so they poll gently instead of spinning on a core.
StartMessage exchange_start_message(MPI_Comm comm, StartMessage mine) {
  MPI_Request request;
  MPI_Ibcast(&mine, static_cast<int>(sizeof mine), MPI_BYTE, 0, comm, &request);
  int done = 0;
  for (long polls = 0;; ++polls) {
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) return mine;
    lost_peers::check();
    if (polls > 2000) {
      const timespec pause{0, 500000};
      nanosleep(&pause, nullptr);
    }
  }
}

}  // namespace bspg
