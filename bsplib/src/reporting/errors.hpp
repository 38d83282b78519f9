// errors.hpp - how bspg reports misuse: one line "bspg: process P: call: cause [at FILE:LINE in
// FUNCTION]" on stderr (the program's call, call_site.hpp), printed once, then every process
// stops with a non-zero exit.
#pragma once

#include <mpi.h>

namespace bspg {

// A misuse seen by this process alone. Prints and stops the whole job. Processes other than 0
// wait a moment (longer for higher pids) before printing, so that when every process makes the
// same mistake the message appears once: the lowest pid's abort stops the others first. Before
// bsp_begin every process runs the same code, so process 0 speaks for all: the others wait up
// to 15 s for its abort and print only if it never comes.
[[noreturn]] void fail(const char* call, const char* format, ...)
    __attribute__((format(printf, 2, 3)));

// A misuse only this process can see (no other reports it, so there is nothing to wait for):
// the line at once, then stop every process.
[[noreturn]] void fail_alone(const char* call, const char* format, ...)
    __attribute__((format(printf, 2, 3)));

// A misuse every process sees at the same collective point (e.g. processes disagree at a sync).
// Only `reporter` prints; the others wait to be stopped by its abort.
[[noreturn]] void fail_collective(int reporter, const char* call, const char* format, ...)
    __attribute__((format(printf, 3, 4)));

// bsp_abort/bsp_vabort: the user's message, verbatim, then stop everything (as fail() does,
// including the wait before bsp_begin).
[[noreturn]] void abort_with_user_message(const char* format, __builtin_va_list args);

// Stops every process of the job with exit status `status`, without a word from Open MPI
// (stdout and stderr are flushed first). For a program that ends with a non-zero status.
[[noreturn]] void stop_job(int status);

// A process ended with a non-zero status inside the SPMD section: one line naming it and the
// status, then stop_job(status).
[[noreturn]] void stop_after_exit(int status);

// Flushes stdout and stderr and waits (briefly) until the starter has read what is in their pipes.
void drain_output();

// Called by stop_job before MPI_Abort (at most one; nullptr for none): master mode's spawned
// processes tell the master, whom their abort does not reach on every MPI, that they stop.
void set_before_abort(void (*hook)(int status));

// Called first by every path that stops the job (nullptr for none): with spares (recovery in
// place), a process that sees wrong data because a peer was just lost (a message that never came)
// recovers instead, once the MPI says a peer is gone; it returns where none is.
void set_before_stop(void (*hook)());

// How every process of a job that stops together (each calls stop_together after a barrier, as
// a checkpoint that failed everywhere does) leaves with `status`. nullptr, the default: process 0
// stops the job (stop_job) and the others wait for its abort. With spares (recovery in place)
// each leaves by itself: under the MPI's fault tolerance an abort need not end the others, and
// they would take process 0's end for a loss.
void set_leave_together(void (*leave)(int status));
// Every process of the job, after a barrier: the job ends with `status` (see above).
[[noreturn]] void stop_together(int pid, int status);

// Called by stop_job first, before the output is drained (nullptr for none): this process's exit
// note (exit_notes.cpp), which an abort would not leave otherwise.
void set_exit_note(void (*hook)(int status));

// This process's id for messages (world rank before bsp_begin, -1 when MPI is not running).
// Setting it also says that waiting for process 0 to speak for everyone is over.
void set_reporting_pid(int pid);

// The id set by set_reporting_pid, -1 before. One load of an int: safe in a signal handler.
int reporting_pid_if_set();

// Waits (at most 3 s) until whoever reads fd, where it is a pipe, has read everything: MPICH's
// Hydra drops what is still unread when it tears a job down, and on a loaded machine its proxy
// can take longer than half a second to come round (a crash line was lost so once). Returns as
// soon as the pipe is empty; async-signal-safe.
void wait_until_read(int fd);

// The communicator whose MPI_Abort reaches every process of the job: MPI_COMM_WORLD unless
// processes were spawned (master mode), whose MPI_COMM_WORLD holds only themselves.
void set_abort_comm(MPI_Comm comm);

}  // namespace bspg
