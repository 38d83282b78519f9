// crash.cpp - one line for a process that crashes, then death by the same signal (crash.hpp).
//
// The MPIs install handlers of their own for these signals in MPI_Init (Open MPI prints a stack
// trace). Theirs call functions that are not async-signal-safe: after glibc found a corrupted
// heap inside malloc or free, with the heap's lock held, such a handler waits for that lock for
// ever and the job hangs. Ours formats the line by hand, writes it, and lets the signal kill the
// process, whose starter then ends the job.
#include "crash.hpp"

#include <dlfcn.h>
#include <mpi.h>
#include <signal.h>
#include <sys/auxv.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "errors.hpp"
#include "stop_notice.hpp"
#include "write_all.h"

namespace bspg {
namespace {

struct CrashSignal {
  int number;
  const char* name;
  const char* meaning;
};

// The signals of a program's own fault (those the MPIs catch, and two more that kill with a core).
constexpr CrashSignal kCrashSignals[] = {
    {SIGSEGV, "SIGSEGV", "segmentation fault"},
    {SIGBUS, "SIGBUS", "bus error"},
    {SIGFPE, "SIGFPE", "arithmetic error"},
    {SIGILL, "SIGILL", "illegal instruction"},
    {SIGABRT, "SIGABRT", "aborted"},
    {SIGSYS, "SIGSYS", "bad system call"},
    {SIGTRAP, "SIGTRAP", "trap"},
};

// The handler's own stack, so that a stack overflow (no stack left) is reported too.
constexpr std::size_t kAlternateStackBytes = 64 * 1024;
alignas(16) char alternate_stack[kAlternateStackBytes];

// World rank when the handlers were installed: the pid for the line until bspg sets one.
int world_rank = 0;

// Set by the first thread that handles a crash; a second one waits for the process to die.
std::atomic<int> crash_handled{0};

// A fault this close to the stack pointer is a stack overflow.
constexpr std::uintptr_t kNearStackBytes = 64 * 1024;

// The faulting thread's stack pointer, 0 where this machine's is not known here.
std::uintptr_t stack_pointer(const void* context) {
  const auto* uc = static_cast<const ucontext_t*>(context);
  if (uc == nullptr) return 0;
#if defined(__x86_64__)
  return static_cast<std::uintptr_t>(uc->uc_mcontext.gregs[REG_RSP]);
#elif defined(__i386__)
  return static_cast<std::uintptr_t>(uc->uc_mcontext.gregs[REG_ESP]);
#elif defined(__aarch64__)
  return static_cast<std::uintptr_t>(uc->uc_mcontext.sp);
#else
  return 0;
#endif
}

bool is_stack_overflow(int signal, const siginfo_t* info, const void* context) {
  if (signal != SIGSEGV || info == nullptr) return false;
  const std::uintptr_t sp = stack_pointer(context);
  const auto address = reinterpret_cast<std::uintptr_t>(info->si_addr);
  if (sp == 0 || address == 0) return false;
  return address + kNearStackBytes >= sp && address <= sp + kNearStackBytes;
}

// A line built in a fixed buffer, without the C library's formatting (not async-signal-safe).
class Line {
 public:
  void add(const char* text) {
    while (*text && length_ < sizeof text_) text_[length_++] = *text++;
  }
  void add(int number) {
    char digits[16];
    int count = 0;
    unsigned value = number < 0 ? 0u - static_cast<unsigned>(number) : number;
    do {
      digits[count++] = static_cast<char>('0' + value % 10);
      value /= 10;
    } while (value > 0);
    if (number < 0) add("-");
    while (count > 0 && length_ < sizeof text_) text_[length_++] = digits[--count];
  }
  void write_to(int fd) const { write_all(fd, text_, length_); }

 private:
  char text_[256];
  std::size_t length_ = 0;
};

void sleep_ms(long ms) {
  timespec pause{ms / 1000, (ms % 1000) * 1000000};
  while (nanosleep(&pause, &pause) != 0 && errno == EINTR) {
  }
}

// Ends the process by `signal` with its default action (a core where the system keeps them), so
// that the starter sees a death by that signal and ends the job.
[[noreturn]] void die_by(int signal) {
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  sigaction(signal, &default_action, nullptr);
  sigset_t only;
  sigemptyset(&only);
  sigaddset(&only, signal);
  raise(signal);  // blocked in the handler: pending until the next line unblocks it
  sigprocmask(SIG_UNBLOCK, &only, nullptr);
  _exit(128 + signal);  // not reached
}

void on_crash(int signal, siginfo_t* info, void* context) {
  // Every crash signal is blocked while this runs, so a fault in here kills the process at once
  // (the kernel does not deliver a blocked fault signal to a handler). A second caller is another
  // thread that crashed meanwhile: the first one's line is on its way, then the process dies.
  if (crash_handled.exchange(1) != 0) {
    sleep_ms(5000);
    die_by(signal);
  }
  const CrashSignal* known = nullptr;
  for (const CrashSignal& s : kCrashSignals)
    if (s.number == signal) known = &s;
  const int pid = reporting_pid_if_set() >= 0 ? reporting_pid_if_set() : world_rank;
  Line line;
  line.add("bspg: process ");
  line.add(pid);
  line.add(": crashed with signal ");
  if (known != nullptr) {
    line.add(known->name);
    line.add(" (");
    line.add(is_stack_overflow(signal, info, context) ? "stack overflow" : known->meaning);
    line.add(")");
  } else {
    line.add(signal);
  }
  line.add("\n");
  line.write_to(STDERR_FILENO);
  // What this process printed so far, and (the starter kills the others when we die, MPICH's at
  // once) what the others did.
  write_pending_output();
  tell_peers_stopping(128 + signal);
  wait_until_read(STDERR_FILENO);
  die_by(signal);
}

// Whether the handler lies in the program's executable: the program installed it before MPI
// started (the MPI left it), and keeps it. Handlers in libraries are the MPI's, or its transports'.
bool is_programs_own(const void* handler) {
  Dl_info program{}, owner{};
  const auto entry = getauxval(AT_ENTRY);
  if (entry == 0 || dladdr(reinterpret_cast<void*>(entry), &program) == 0) return false;
  if (dladdr(handler, &owner) == 0) return false;
  return owner.dli_fbase == program.dli_fbase;
}

void use_alternate_stack() {
  stack_t current{};
  if (sigaltstack(nullptr, &current) == 0 && (current.ss_flags & SS_DISABLE) == 0)
    return;  // the program has one of its own
  stack_t ours{};
  ours.ss_sp = alternate_stack;
  ours.ss_size = sizeof alternate_stack;
  ours.ss_flags = 0;
  sigaltstack(&ours, nullptr);
}

}  // namespace

void install_crash_handlers() {
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  use_alternate_stack();
  struct sigaction ours {};
  ours.sa_sigaction = on_crash;
  ours.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&ours.sa_mask);
  for (const CrashSignal& s : kCrashSignals) sigaddset(&ours.sa_mask, s.number);
  for (const CrashSignal& s : kCrashSignals) {
    struct sigaction current {};
    if (sigaction(s.number, nullptr, &current) != 0) continue;
    // sa_handler and sa_sigaction share their storage: either compares with SIG_IGN, SIG_DFL.
    if (current.sa_handler == SIG_IGN) continue;  // the program's choice
    const void* handler = (current.sa_flags & SA_SIGINFO) != 0
                              ? reinterpret_cast<const void*>(current.sa_sigaction)
                              : reinterpret_cast<const void*>(current.sa_handler);
    if (current.sa_handler != SIG_DFL && is_programs_own(handler)) continue;
    sigaction(s.number, &ours, nullptr);
  }
  install_stop_handlers();
}

}  // namespace bspg
