// exit_notes.hpp - BSPG_EXIT_NOTES: a directory where each process leaves a file RANK.begun when
// MPI starts and a file RANK, holding its status, when it ends by exit (not when killed). bsprun
// asks for them where the MPI's starter does not say which process was killed (MPICH's Hydra).
#pragma once

#include <string>

namespace bspg {

// Once bspg started MPI: where BSPG_EXIT_NOTES asks, leaves RANK.begun now and RANK at the
// program's end (an on_exit handler: it runs after those installed later), or at a stop.
void start_exit_notes();
// The note of a process that ends by _Exit (where on_exit handlers do not run), with `status`.
void leave_exit_note(int status);
// The notes' directory on this host (bsprun also leaves its word to the job there: in_place.hpp);
// "" without one.
const std::string& exit_notes_directory_in_use();

}  // namespace bspg
