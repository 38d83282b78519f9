// in_place.hpp - recovery in place (bsprun --spares K, environment BSPG_SPARES=K): the last K
// processes the starter started wait as spares, and the job's world is the others. When a process
// of the job is lost, every living process (the spares too) meets here: the MPI's fault tolerance
// (ULFM) shrinks the world, a spare takes each lost process's pid, the lost shards come from the
// processes that hold their in-memory copies, and every process goes back to its start on a fresh
// stack (startup.cpp's recovery point), its globals put back, to run main or its SPMD part again;
// bspg_resume then restores the checkpoint from memory. Where that cannot be (process 0 lost, no
// spare left, a shard with no copy, the recoveries bsprun allows used up) the job ends with exit
// status 76 and one line, and bsprun restarts it from disk.
#pragma once

#include <mpi.h>
#include <setjmp.h>

namespace bspg::in_place {

// Exit status of a job that a loss ends for bsprun's restart (EX_PROTOCOL).
constexpr int kEndedForRestart = 76;

// Before main, at the program's first start (not again after a recovery): whether BSPG_SPARES
// asks for spares, and then a snapshot of the executable's global variables.
void prepare();
// The recovery point: startup.cpp sets it before section::before_main; a recovery comes back to
// it with every state of bspg's and the program's globals as at the start, MPI running.
jmp_buf& recovery_point();
// section.cpp: its state (and spmd_part's) back to a fresh process's.
void forget_sections();

// Right after bspg started MPI (all processes of the world): the job's world, the spares'
// waiting, the loss handler. Fails in one line where BSPG_SPARES is malformed or the MPI cannot.
void start();
bool has_spares();
bool is_spare();
// MPI_COMM_WORLD, or with spares the job's processes only (their pids are their ranks here).
MPI_Comm job_world();
// A spare waits here until the job ends (it then ends with status 0) or loses a process (it then
// takes part in the recovery, and perhaps the lost process's place).
[[noreturn]] void serve_as_spare();
// Process 0 at the job's end, before MPI_Finalize: the spares end too.
void release_spares();
// Every process right before MPI_Finalize: process 0 releases the spares, and after a recovery a
// finalize that does not end is ended (see in_place.cpp). false where MPI must not be finalized:
// processes bsprun named lost on a host that does not answer are still members of the MPI's job,
// and its closing fence would wait for them for ever. The living then meet, process 0 says so in
// one line ("bspg: the job ended without finalizing MPI: ...", for bsprun, which ends the
// starter), and each ends without MPI_Finalize.
bool before_finalize();

// Once the exit notes are set up (exit_notes.hpp), with spares: a thread looks every 20 ms for
// bsprun's word that processes are lost on a host that stopped answering (the file lost-ranks in
// the exit notes' directory: their ranks in MPI_COMM_WORLD, separated by white space), and cuts
// this process's connections to that host (cut_links.hpp), so that the MPI reports them lost and
// the job recovers in place as from a killed process.
void watch_named_losses();

// With BSPG_TRACE_RECOVERY set: one line on stderr, "bspg trace: role R: WHAT at T" (T the wall
// clock), for following a recovery step by step. Nothing otherwise.
void trace_moment(const char* what);

// Set by the API layer: forgets the abandoned section (its runtime is left as it is: its
// communicators are revoked, and freeing them could wait for the lost process).
void set_forget_section_hook(void (*forget)());

}  // namespace bspg::in_place
