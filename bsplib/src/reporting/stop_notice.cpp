// stop_notice.cpp - pending output written out when another process stops the job
// (stop_notice.hpp).
#include "stop_notice.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "errors.hpp"
#include "write_all.h"

namespace bspg {
namespace {

// What a notice's value says.
// The value: the word in its low 24 bits; a notice carries the job's status in the top 8.
constexpr int kNotice = 0x627301;  // "stop: write out your output"
constexpr int kAnswer = 0x627302;  // "written"
constexpr int kWordMask = 0xffffff;

// Peers on one machine beyond this many are not told (the SIGTERM handler still serves them).
constexpr int kMaxPeers = 1024;

struct Peer {
  int os_pid;
  int pidfd;  // the process itself, not a number a later process may take
};

// The notice's signal, 0 where the program uses it (or there is none to take).
int notice_signal = 0;
// The thread that runs the section: the notice stops it, not one of the MPI's threads.
std::atomic<pid_t> section_thread{0};

Peer peers[kMaxPeers];
std::atomic<int> peer_count{0};
// The peers of outer sections while nested runs go on (innermost last): set_aside_stop_peers.
std::vector<std::vector<Peer>> set_aside;

std::atomic<int> answers{0};
std::atomic<bool> stopping{false};
std::atomic<bool> output_written{false};

// What identifies this machine's pid namespace: the same numbers name the same processes.
struct Identity {
  std::int32_t os_pid;
  std::int32_t takes_notice;
  std::uint64_t namespace_device;
  std::uint64_t namespace_inode;
  char boot_id[48];
};

Identity my_identity() {
  Identity me{};
  me.os_pid = static_cast<std::int32_t>(getpid());
  me.takes_notice = notice_signal != 0;
  struct stat ns {};
  if (stat("/proc/self/ns/pid", &ns) == 0) {
    me.namespace_device = static_cast<std::uint64_t>(ns.st_dev);
    me.namespace_inode = static_cast<std::uint64_t>(ns.st_ino);
  }
  // The boot id tells machines apart (the first pid namespace has the same inode on each).
  const int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    const ssize_t n = read(fd, me.boot_id, sizeof me.boot_id - 1);
    if (n < 0) me.boot_id[0] = '\0';
    close(fd);
  }
  return me;
}

bool same_namespace(const Identity& a, const Identity& b) {
  return a.boot_id[0] != '\0' && a.namespace_inode != 0 && a.namespace_inode == b.namespace_inode &&
         a.namespace_device == b.namespace_device &&
         std::strncmp(a.boot_id, b.boot_id, sizeof a.boot_id) == 0;
}

int open_process(int os_pid) {
#if defined(SYS_pidfd_open)
  return static_cast<int>(syscall(SYS_pidfd_open, os_pid, 0));
#else
  (void)os_pid;
  return -1;
#endif
}

bool send_to(int pidfd, int value) {
#if defined(SYS_pidfd_send_signal)
  siginfo_t info;
  std::memset(&info, 0, sizeof info);
  info.si_signo = notice_signal;
  info.si_code = SI_QUEUE;  // what the kernel lets a process put in another's siginfo
  info.si_pid = getpid();
  info.si_uid = getuid();
  info.si_value.sival_int = value;
  return syscall(SYS_pidfd_send_signal, pidfd, notice_signal, &info, 0) == 0;
#else
  (void)pidfd;
  (void)value;
  return false;
#endif
}

void pause_ms(long ms) {
  timespec pause{ms / 1000, (ms % 1000) * 1000000};
  nanosleep(&pause, nullptr);
}

// Bytes a FILE holds unwritten: glibc keeps them between _IO_write_base and _IO_write_ptr, inside
// its buffer (checked: after a crash the FILE may be damaged).
void write_unwritten(FILE* file) {
#if defined(__GLIBC__)
  if (file == nullptr) return;
  const char* from = file->_IO_write_base;
  const char* to = file->_IO_write_ptr;
  if (from == nullptr || to <= from || from < file->_IO_buf_base || to > file->_IO_buf_end) return;
  write_all(file->_fileno, from, static_cast<std::size_t>(to - from));
  // Written: a later fflush (stop_job's, where this process stops the job itself) must not write
  // them again.
  file->_IO_write_base = file->_IO_write_ptr;
#else
  (void)file;  // elsewhere FILE is opaque: the output stays where it is
#endif
}

void answer(pid_t sender) {
  const int count = peer_count.load();
  for (int i = 0; i < count; ++i)
    if (peers[i].os_pid == sender) {
      send_to(peers[i].pidfd, kAnswer);
      return;
    }
}

// On the section's thread: the output out, the answer back, then still while the abort comes
// (going on would print after the stop); 3 s at most.
void take_notice(pid_t sender, int status) {
  if (stopping.load()) {  // stopping ourselves: our stop_job writes our output
    answer(sender);
    return;
  }
  write_pending_output();
  wait_until_read(STDOUT_FILENO);
  wait_until_read(STDERR_FILENO);
  answer(sender);
  for (int i = 0; i < 30; ++i) pause_ms(100);
  // The abort did not reach us (Open MPI 5's master, when a process it spawned stops): we stop
  // the job ourselves, with the stopping process's status.
  stop_job(status);
}

void on_notice(int signal, siginfo_t* info, void* /*context*/) {
  const int saved_errno = errno;
  if (info != nullptr && info->si_code == SI_QUEUE) {
    const int word = info->si_value.sival_int & kWordMask;
    if (word == kAnswer) {
      answers.fetch_add(1);
    } else if (word == kNotice) {
      const pid_t section = section_thread.load();
      if (section != 0 && static_cast<pid_t>(syscall(SYS_gettid)) != section)
        syscall(SYS_rt_tgsigqueueinfo, getpid(), section, signal, info);  // to the right thread
      else
        take_notice(info->si_pid, (info->si_value.sival_int >> 24) & 0xff);
    }
  }
  errno = saved_errno;
}

void on_term(int signal, siginfo_t* /*info*/, void* /*context*/) {
  write_pending_output();
  wait_until_read(STDOUT_FILENO);
  wait_until_read(STDERR_FILENO);
  // Then what would have happened without us: death by SIGTERM.
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  sigaction(signal, &default_action, nullptr);
  raise(signal);  // blocked in here: delivered when unblocked below
  sigset_t only;
  sigemptyset(&only);
  sigaddset(&only, signal);
  sigprocmask(SIG_UNBLOCK, &only, nullptr);
}

// Installs handler for signal where nobody handles it (neither MPI takes these; a program's own
// handler or SIG_IGN is left alone); whether it did.
bool take_signal(int signal, void (*handler)(int, siginfo_t*, void*)) {
  struct sigaction current {};
  if (sigaction(signal, nullptr, &current) != 0) return false;
  if (current.sa_handler != SIG_DFL) return false;
  struct sigaction ours {};
  ours.sa_sigaction = handler;
  ours.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&ours.sa_mask);
  return sigaction(signal, &ours, nullptr) == 0;
}

}  // namespace

void install_stop_handlers() {
  static bool installed = false;
  if (installed) return;
  installed = true;
  // A real-time signal nobody uses by default (a program's own choice of it is left alone).
  const int candidate = SIGRTMAX - 3;
  if (candidate > SIGRTMIN && take_signal(candidate, on_notice)) notice_signal = candidate;
  take_signal(SIGTERM, on_term);
}

void know_stop_peers(MPI_Comm comm) {
  forget_stop_peers();
  section_thread.store(static_cast<pid_t>(syscall(SYS_gettid)));
  int size = 0, rank = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  const Identity me = my_identity();
  std::vector<Identity> all(static_cast<std::size_t>(size));
  MPI_Allgather(&me, sizeof me, MPI_BYTE, all.data(), sizeof me, MPI_BYTE, comm);
  if (notice_signal == 0) return;  // we could neither send nor take an answer
  int count = 0;
  for (int r = 0; r < size && count < kMaxPeers; ++r) {
    const Identity& other = all[static_cast<std::size_t>(r)];
    // Only a process whose handler waits for it: the signal would end any other.
    if (r == rank || !other.takes_notice || !same_namespace(me, other)) continue;
    const int pidfd = open_process(other.os_pid);
    if (pidfd < 0) continue;
    peers[count++] = Peer{other.os_pid, pidfd};
  }
  peer_count.store(count);
}

void forget_stop_peers() {
  const int count = peer_count.exchange(0);
  for (int i = 0; i < count; ++i) close(peers[i].pidfd);
  section_thread.store(0);
}

void set_aside_stop_peers() {
  const int count = peer_count.exchange(0);  // no notice goes to them meanwhile
  set_aside.emplace_back(peers, peers + count);
}

void bring_back_stop_peers() {
  forget_stop_peers();
  if (set_aside.empty()) return;
  const std::vector<Peer>& outer = set_aside.back();
  std::copy(outer.begin(), outer.end(), peers);
  section_thread.store(static_cast<pid_t>(syscall(SYS_gettid)));
  peer_count.store(static_cast<int>(outer.size()));
  set_aside.pop_back();
}

void tell_peers_stopping(int status) {
  stopping.store(true);
  const int count = peer_count.load();
  if (count == 0) return;
  answers.store(0);
  int sent = 0;
  for (int i = 0; i < count; ++i)
    sent += send_to(peers[i].pidfd, kNotice | (status & 0xff) << 24) ? 1 : 0;
  for (int waited = 0; answers.load() < sent && waited < 2000; ++waited) pause_ms(1);
}

void write_pending_output() {
  if (output_written.exchange(true)) return;
  write_unwritten(stdout);
  write_unwritten(stderr);
}

}  // namespace bspg
