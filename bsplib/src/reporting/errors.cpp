#include "errors.hpp"

#include <fcntl.h>
#include <mpi.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "call_site.hpp"
#include "stop_notice.hpp"

// Open MPI 4 (ORTE) prints a multi-line MPI_ABORT banner from the aborting process unless this
// flag of its run-time is set; ours is the message the user needs. Weak: absent elsewhere (Open
// MPI 5 prints no banner for MPI_Abort; MPICH's line is silenced below).
extern "C" bool orte_execute_quiet __attribute__((weak));
// Open MPI 5 prints it through Open PAL's help-message hook, a function pointer every help text
// goes through; it is replaced by a silent one just before MPI_Abort. Weak: absent elsewhere.
extern "C" int (*opal_show_help)(const char*, const char*, int, ...) __attribute__((weak));

namespace {

int quiet_help(const char*, const char*, int, ...) { return 0; }

}  // namespace

namespace bspg {
namespace {

int reporting_pid = -1;
MPI_Comm abort_comm = MPI_COMM_WORLD;
void (*before_abort)(int) = nullptr;
void (*before_stop)() = nullptr;  // a loss, not the program, may be why the job stops
void (*leave_together)(int) = nullptr;
void (*exit_note)(int) = nullptr;

bool mpi_running() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  return initialized && !finalized;
}

int pid_for_messages() {
  if (reporting_pid >= 0) return reporting_pid;
  if (!mpi_running()) return 0;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

// Wait so that a lower pid reporting the same mistake stops us first: 1 s, plus 50 ms per pid,
// at most 3 s. An MPI_Abort takes a few hundred ms to reach every process on a loaded machine.
// Before bsp_begin (no pid yet) process 0 speaks for all: wait up to 15 s for its abort.
void wait_for_lower_pids(int pid) {
  if (pid <= 0) return;
  if (reporting_pid < 0) {
    for (int i = 0; i < 150; ++i) usleep(100000);
    return;
  }
  int extra = pid < 40 ? pid : 40;
  usleep(1000000 + static_cast<useconds_t>(extra) * 50000);
}

// The line ends with where the program made the call (call_site.hpp), in brackets, looked up
// before anything is printed so that the line goes out whole.
void print_line(const char* call, const char* format, va_list args) {
  const std::string where = user_call_site();
  const std::string site = where.empty() ? "" : " [" + where + "]";
  fflush(stdout);
  char cause[1024];
  vsnprintf(cause, sizeof cause, format, args);
  fprintf(stderr, "bspg: process %d: %s: %s%s\n", pid_for_messages(), call, cause, site.c_str());
  fflush(stderr);
}

}  // namespace

void wait_until_read(int fd) {
  for (int i = 0; i < 3000; ++i) {
    int unread = 0;
    if (ioctl(fd, FIONREAD, &unread) != 0 || unread <= 0) return;
    timespec pause{0, 1000000};
    nanosleep(&pause, nullptr);
  }
}

void drain_output() {
  fflush(stdout);
  fflush(stderr);
  wait_until_read(STDOUT_FILENO);
  wait_until_read(STDERR_FILENO);
}

void set_reporting_pid(int pid) { reporting_pid = pid; }

int reporting_pid_if_set() { return reporting_pid; }

void set_abort_comm(MPI_Comm comm) { abort_comm = comm; }

void set_before_abort(void (*hook)(int status)) { before_abort = hook; }

void set_before_stop(void (*hook)()) { before_stop = hook; }

void set_exit_note(void (*hook)(int status)) { exit_note = hook; }

void set_leave_together(void (*leave)(int status)) { leave_together = leave; }

void stop_together(int pid, int status) {
  if (leave_together != nullptr) leave_together(status);  // does not return
  // One quiet abort by process 0 carries `status` to the starter, on every MPI. Finalizing and then
  // exiting non-zero does not: MPICH's Hydra kills the processes still in MPI_Finalize (exit 9 for
  // the job) and MPICH over UCX may crash there, and Open MPI's mpirun prints a banner.
  if (pid == 0) stop_job(status);
  for (int i = 0; i < 300; ++i) usleep(100000);  // process 0's abort ends us
  stop_job(status);
}

void stop_job(int status) {
  if (before_stop != nullptr) before_stop();
  if (exit_note) exit_note(status);
  // The others' output so far comes out before the abort ends them (stop_notice.hpp).
  tell_peers_stopping(status);
  // What was written is read by the starter before the abort ends it (MPICH's Hydra loses what is
  // still in the pipe when it tears the job down).
  drain_output();
  if (mpi_running()) {
    if (before_abort) before_abort(status);
    if (std::getenv("BSPG_MPI_ABORT_BANNER") == nullptr) {
      if (&orte_execute_quiet != nullptr) orte_execute_quiet = true;
      if (&opal_show_help != nullptr) opal_show_help = quiet_help;
#if defined(MPICH_VERSION)
      // MPICH's MPI_Abort prints "Abort(N) on node ...: application called MPI_Abort" from the
      // calling process; everything of ours is flushed already.
      const int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
      if (null >= 0) dup2(null, STDERR_FILENO);
#endif
    }
    MPI_Abort(abort_comm, status);
  }
  _exit(status);
}

void stop_after_exit(int status) {
  fflush(stdout);
  fprintf(stderr, "bspg: process %d: exit(%d) inside the SPMD section; stopping every process\n",
          pid_for_messages(), status);
  fflush(stderr);
  stop_job(status);
}

void fail(const char* call, const char* format, ...) {
  if (before_stop != nullptr) before_stop();
  wait_for_lower_pids(pid_for_messages());
  va_list args;
  va_start(args, format);
  print_line(call, format, args);
  va_end(args);
  stop_job(1);
}

void fail_alone(const char* call, const char* format, ...) {
  if (before_stop != nullptr) before_stop();
  va_list args;
  va_start(args, format);
  print_line(call, format, args);
  va_end(args);
  stop_job(1);
}

void fail_collective(int reporter, const char* call, const char* format, ...) {
  if (before_stop != nullptr) before_stop();
  if (pid_for_messages() == reporter) {
    va_list args;
    va_start(args, format);
    print_line(call, format, args);
    va_end(args);
    stop_job(1);
  }
  // The reporter's abort ends us; if it somehow does not within 30 s, stop anyway.
  for (int i = 0; i < 300; ++i) usleep(100000);
  stop_job(1);
}

void abort_with_user_message(const char* format, va_list args) {
  if (before_stop != nullptr) before_stop();
  wait_for_lower_pids(pid_for_messages());
  fflush(stdout);
  char text[4096];
  int length = vsnprintf(text, sizeof text, format ? format : "", args);
  bool newline =
      length > 0 && static_cast<std::size_t>(length) < sizeof text && text[length - 1] == '\n';
  fprintf(stderr, newline ? "%s" : "%s\n", text);
  fflush(stderr);
  stop_job(1);
}

}  // namespace bspg
