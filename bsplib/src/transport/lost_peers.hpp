// lost_peers.hpp - noticing a lost process during a job with spares (recovery in place, bsprun
// --spares): the job's communicators report a failed peer to one handler instead of ending the
// job, and bspg's own waits, which spin on shared memory where MPI would never report the loss,
// ask the MPI every millisecond whether a peer failed. Off (every call returns at once) unless
// enable() ran, which needs an MPI with fault tolerance (ULFM: BSPG_HAVE_ULFM).
#pragma once

#include <mpi.h>

namespace bspg::lost_peers {

// What happens on a loss: never returns (the sections part leaves for its recovery point).
using LossHandler = void (*)(const char* where);

// Starts watching: `sentinel` is a communicator over every process of the job (it gets a receive
// posted that nobody sends to: the MPI fails it when a member is lost, or when someone revokes
// the communicator). Communicators made from watched ones later are watched through watch().
void enable(MPI_Comm sentinel, LossHandler on_loss);
bool enabled();

// A communicator of the job: a failed operation on it calls the loss handler (other MPI errors
// end the job as MPI_ERRORS_ARE_FATAL would), and revoke_all() revokes it. Freed communicators
// leave the list by themselves. No-op when not enabled.
void watch(MPI_Comm comm);

// In a wait: at most every millisecond, tests the sentinel (about 15 to 100 us); a loss calls the
// handler. Inline fast path: one load when not enabled.
extern bool g_watching;
void check_slow();
inline void check() {
  if (__builtin_expect(g_watching, 0)) check_slow();
}

// On a loss: revokes every watched communicator, so that a process blocked in any of them, with
// live peers only, returns too. Stops watching (no handler runs twice).
void revoke_all();

// The job ends here together (every process knows it): from now on a process that leaves is not
// a loss. Stops watching, without revoking anything.
void stop_watching();

// The job has ended on every living process: a loss from now on (a process that leaves first) is
// ignored, by the watched communicators' error handler too, which then only returns the error.
void ignore_losses();

// A barrier over comm for processes that all leave right after it, under fault tolerance. Every
// process tells comm's process 0 that it has come, and leaves when 0 lets it go: so no process
// sends to one that has left (a collective's later rounds would, and the MPI would print an error
// for each), and 0 runs the before_release hook while every other process still waits. A peer
// lost meanwhile counts as come. Errors on comm are returned from here on, not handled.
void barrier_before_leaving(MPI_Comm comm);

// What comm's process 0 does in barrier_before_leaving once all have come, before it lets them go
// (the sections part lets the spares go there, before any process of the job has left).
void set_before_release(void (*hook)());

// Whether an MPI error class says a process was lost or a communicator revoked.
bool is_loss(int error_class);

}  // namespace bspg::lost_peers
