// stop_notice.hpp - when one process stops the job (bsp_abort, a misuse, exit with a non-zero
// status), what every other process printed so far still comes out, unfinished last lines too.
//
// The others may be computing or waiting in bsp_sync; what they printed may still sit in their
// stdio buffers, which the starter's kill (SIGTERM then SIGKILL for Open MPI, SIGKILL at once for
// MPICH's Hydra) would throw away. Two ways out, both async-signal-safe:
//  - the stopping process first sends a notice (a real-time signal) to the section's processes on
//    its machine; each writes out its pending output with write(2), waits until the starter has
//    read it, acknowledges, and stays still while the abort comes (3 s, then it stops the job
//    itself: Open MPI 5's abort in a spawned process does not reach the master). The stopping
//    process waits for the acknowledgements at most 2 s, then aborts as before;
//  - a SIGTERM handler writes out the pending output before the process dies by SIGTERM (Open
//    MPI's starters send SIGTERM first, also to processes on other machines).
#pragma once

#include <mpi.h>

namespace bspg {

// Installs both handlers where the program left the signals at their default. Once MPI runs.
void install_stop_handlers();

// Collective over the section's communicator: the processes of the section on this machine (and
// in this pid namespace) that can take a notice. Called by the thread that runs the section.
void know_stop_peers(MPI_Comm comm);

// The section is over: no notices to its processes any more.
void forget_stop_peers();

// A nested run (a bsp_begin inside a section): the outer section's peers wait aside while
// know_stop_peers takes the nested run's, and come back once that run is over (its Runtime gone),
// with no collective call.
void set_aside_stop_peers();
void bring_back_stop_peers();

// Called by stop_job before it aborts: notices to the peers, then at most 2 s for their answers.
// Where the abort then does not reach a peer within 3 s, that peer stops the job with `status`.
void tell_peers_stopping(int status);

// Writes out what stdout and stderr hold unwritten, once per process. Async-signal-safe.
void write_pending_output();

}  // namespace bspg
