// in_place.cpp - spares, the job's world without them, and the recovery (see in_place.hpp).
#include "in_place.hpp"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#if defined(BSPG_HAVE_ULFM)
#include <mpi-ext.h>
#endif
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

#include "cut_links.hpp"
#include "errors.hpp"
#include "exit_notes.hpp"
#include "globals_internal.hpp"
#include "lost_peers.hpp"
#include "memory_copies.hpp"
#include "mpi_state.hpp"
#include "runtime.hpp"
#include "whole_number.hpp"

namespace bspg::in_place {
namespace {

using globals_internal::Segment;

constexpr int kSpareTag = 32001;  // the job's end, sent to each spare
// A lost process's shard, to the spare that takes its place.
[[maybe_unused]] constexpr int kShardTag = 32002;
constexpr int kEndWord = 1;    // the job ended: finalize, status 0
constexpr int kLeaveWord = 2;  // the job ends without finalizing (stop_together): leave, status 0
constexpr std::size_t kHostBytes = 64;
constexpr std::size_t kAddressBytes = 512;  // a host's addresses, as text

// What each process says of itself at the start and at each recovery.
struct Self {
  int role;                 // pid in the job, -1 for a spare
  int os_pid;               // its process id on its host
  int recoveries;           // recoveries in place so far (the same everywhere)
  int nwards;               // copies held (their pids follow, in a second exchange)
  int subjob;               // subjob_of_process, -1 for a spare
  std::uint64_t kept, run;  // the checkpoint kept in memory, its run
  std::uint64_t before;     // the one kept before it (0: none)
  char host[kHostBytes];
};

bool asked = false;  // BSPG_SPARES set
int spares = 0;      // K
int allowed = 0;     // BSPG_RECOVERIES (default: K)
int recoveries = 0;  // done so far
bool spare = false;
int role = -1;
MPI_Comm world = MPI_COMM_WORLD;  // every living process (after a recovery, the shrunk one)
MPI_Comm job = MPI_COMM_WORLD;    // the job's processes
std::vector<Self> known;          // by role: who ran it last (host, process id)
std::vector<int> world_roles;     // by rank in `world`: pid, or -1 for a spare
// By rank in MPI_COMM_WORLD, from the start: each process's host and network addresses.
std::vector<std::string> world_hosts, world_addresses;
int world_rank = 0;
// bsprun named lost processes whose connections were cut (watch_named_losses): the MPI's job
// still counts them, so MPI_Finalize would wait for them.
std::atomic<bool> links_cut{false};
// Their hosts, for process 0's last line. Never destroyed: the watching thread may outlive the
// static destructors at the process's end.
std::mutex& named_mutex = *new std::mutex;
std::string& named_hosts = *new std::string;
void (*forget_section)() = nullptr;
std::atomic<bool> in_recovery{false};
[[maybe_unused]] std::atomic<int> recoveries_started{0};
// Recoveries take 0.05 to 0.5 s (tests/recovery).
[[maybe_unused]] constexpr int kRecoveryLimitSeconds = 5;
std::atomic<bool> bound_reached{false};   // this process's recovery ran past it: it ends
[[maybe_unused]] int reported_spares_lost = 0;
jmp_buf point;

void watch_job();

// The executable's globals at main's first start.
struct Saved {
  Segment page;
  std::vector<unsigned char> bytes;
};
std::vector<Saved> saved_globals;

Self describe_self() {
  Self self{};
  self.role = role;
  self.os_pid = static_cast<int>(getpid());
  self.recoveries = recoveries;
  self.nwards = static_cast<int>(memory_copies::kept_wards().size());
  self.subjob = role >= 0 ? subjob_of_process(role) : -1;
  self.kept = memory_copies::kept();
  self.run = memory_copies::kept_run();
  self.before = memory_copies::kept_before();
  if (gethostname(self.host, sizeof self.host - 1) != 0) std::strcpy(self.host, "?");
  self.host[sizeof self.host - 1] = '\0';
  return self;
}

std::string describe_lost(int r) {
  const Self& who = known[static_cast<std::size_t>(r)];
  return "process " + std::to_string(r) + " (host " + who.host + ", process id " +
         std::to_string(who.os_pid) + ")";
}

// A variable bsprun set, in [low, high]; anything else fails in one line.
int number_from_environment(const char* name, const char* text, int low, int high) {
  const long value = whole_number(text, low, high);
  if (value < 0)
    fail("bsp_begin", "environment variable %s='%s' is not a whole number from %d to %d", name,
         text, low, high);
  return static_cast<int>(value);
}

// Ends this process at once with `status`: its output written and read by the starter (a line
// still in the pipe when the process ends can be lost with the job's end), its exit note left
// (bsprun reads it, where an abort would leave none), no MPI_Finalize and no MPI_Abort.
[[noreturn]] void leave_now(int status) {
  drain_output();
  leave_exit_note(status);
  std::_Exit(status);
}

// The recovery cannot be done in place: the lowest living process says why, and the job ends
// for bsprun's restart.
[[noreturn, maybe_unused]] void end_for_restart(MPI_Comm alive, const std::vector<int>& lost,
                                                const char* why) {
  int rank = 0;
  MPI_Comm_rank(alive, &rank);
  if (bound_reached) {  // the time bound's line was said (or is being said) for this recovery
    usleep(200000);
  } else if (rank == 0) {
    // The first lost process leads the line (bsprun reads it), the others follow the reason.
    const std::string who = lost.empty() ? "a process" : describe_lost(lost.front());
    std::string also;
    for (std::size_t k = 1; k < lost.size(); ++k)
      also += (also.empty() ? " (" : ", ") + describe_lost(lost[k]);
    if (!also.empty()) also += " too)";
    std::fflush(stdout);
    std::fprintf(stderr, "bspg: %s lost; no recovery in place: %s%s; the job ends for a restart\n",
                 who.c_str(), why, also.c_str());
    std::fflush(stderr);
  } else {
    usleep(200000);  // process 0 speaks first
  }
  // Every living process ends by itself with the status, which mpirun passes on: no MPI_Abort.
  // Under fault tolerance an abort need not end the others, several at once have left Open MPI
  // 5.0.7's mpirun waiting for ever, and after one its mpirun has crashed in malloc (status 134).
  leave_now(kEndedForRestart);
}

[[maybe_unused]] void restore_globals() {
  for (const Saved& s : saved_globals)
    std::memcpy(reinterpret_cast<void*>(s.page.begin), s.bytes.data(), s.bytes.size());
}

// With BSPG_TRACE_RECOVERY: one line per step of a recovery, with the wall clock (to compare with
// the moment a test killed a process).
void trace_step(const char* what) {
  static const bool tracing = std::getenv("BSPG_TRACE_RECOVERY") != nullptr;
  if (!tracing) return;
  timespec t{};
  clock_gettime(CLOCK_REALTIME, &t);
  std::fprintf(stderr, "bspg trace: role %d: %s at %.3f\n", role, what,
               static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9);
  std::fflush(stderr);
}

#if defined(BSPG_HAVE_ULFM)
// What the living processes say of themselves in one attempt of a recovery.
struct Survey {
  MPI_Comm alive = MPI_COMM_NULL;  // the shrunk world
  int size = 0, me = 0;            // its size, this process's rank in it
  std::vector<Self> all;           // by rank in alive
  std::uint64_t target = 0;        // the newest checkpoint every process of the job has whole
  bool everyone_has_it = true;
  std::uint64_t n = 0;           // the checkpoint to go back to (0: from the start)
  bool same_checkpoint = true;   // every process of the job keeps n
  std::vector<int> holder_of;    // by pid: the rank of a process holding its shard of n, or -1
  std::vector<int> lost;         // the pids no living process runs
  std::vector<int> spare_ranks;  // the spares left, by rank
  int used = 0;                  // recoveries done before this one
};

// A new attempt on a smaller world: a loss during the recovery.
void start_again(Survey& s) {
  MPIX_Comm_revoke(s.alive);
  world = s.alive;
}

// Shrinks the world and learns who is left, which checkpoint each keeps and who holds copies of
// whose shard. false where a process was lost meanwhile (every living process agrees on it).
bool survey_the_living(Survey& s) {
  MPIX_Comm_shrink(world, &s.alive);
  MPI_Comm_set_errhandler(s.alive, MPI_ERRORS_RETURN);
  MPI_Comm_size(s.alive, &s.size);
  MPI_Comm_rank(s.alive, &s.me);
  const Self mine = describe_self();
  s.all.assign(static_cast<std::size_t>(s.size), Self{});
  int rc =
      MPI_Allgather(&mine, sizeof mine, MPI_BYTE, s.all.data(), sizeof mine, MPI_BYTE, s.alive);
  // The checkpoint to go back to: the newest every process of the job has whole (a process whose
  // last checkpoint's end a loss cut short has only the one before).
  s.target = UINT64_MAX;
  s.everyone_has_it = true;
  if (rc == MPI_SUCCESS) {
    for (const Self& q : s.all)
      if (q.role >= 0) s.target = std::min(s.target, q.kept);
    if (s.target == UINT64_MAX) s.target = 0;
    for (const Self& q : s.all)
      if (q.role >= 0 && s.target > 0 && q.kept != s.target && q.before != s.target)
        s.everyone_has_it = false;
    if (role >= 0 && s.target > 0 && s.everyone_has_it) memory_copies::use(s.target);
  }
  // Who holds copies of whose shard: every process's wards, in rank order.
  std::vector<int> my_wards = memory_copies::kept_wards();
  int my_count = static_cast<int>(my_wards.size());
  std::vector<int> counts(static_cast<std::size_t>(s.size), 0), wards_of;
  std::vector<int> displacements(static_cast<std::size_t>(s.size), 0);
  if (rc == MPI_SUCCESS)
    rc = MPI_Allgather(&my_count, 1, MPI_INT, counts.data(), 1, MPI_INT, s.alive);
  if (rc == MPI_SUCCESS) {
    int total = 0;
    for (int q = 0; q < s.size; ++q) {
      s.all[static_cast<std::size_t>(q)].nwards = counts[static_cast<std::size_t>(q)];
      displacements[static_cast<std::size_t>(q)] = total;
      total += counts[static_cast<std::size_t>(q)];
    }
    wards_of.assign(static_cast<std::size_t>(total), -1);
    rc = MPI_Allgatherv(my_wards.data(), my_count, MPI_INT, wards_of.data(), counts.data(),
                        displacements.data(), MPI_INT, s.alive);
  }
  int ok = rc == MPI_SUCCESS ? 1 : 0;
  if (rc == MPI_SUCCESS) MPIX_Comm_agree(s.alive, &ok);
  if (!ok) return false;

  const int nprocs = static_cast<int>(known.size());
  s.holder_of.assign(static_cast<std::size_t>(nprocs), -1);
  std::vector<bool> present(static_cast<std::size_t>(nprocs), false);
  s.spare_ranks.clear();
  std::uint64_t lowest_kept = UINT64_MAX, highest_kept = 0;
  for (int q = 0; q < s.size; ++q) {
    const Self& self = s.all[static_cast<std::size_t>(q)];
    if (self.role >= 0 && self.role < nprocs) {
      present[static_cast<std::size_t>(self.role)] = true;
      const std::uint64_t has = s.everyone_has_it ? s.target : self.kept;
      lowest_kept = std::min(lowest_kept, has);
      highest_kept = std::max(highest_kept, has);
    } else {
      s.spare_ranks.push_back(q);
    }
  }
  s.same_checkpoint = lowest_kept == highest_kept;
  s.n = lowest_kept == UINT64_MAX ? 0 : lowest_kept;
  // Who holds a copy of each pid's shard of that checkpoint (the lowest rank that does).
  for (int q = 0, at = 0; q < s.size; ++q) {
    const Self& self = s.all[static_cast<std::size_t>(q)];
    for (int w = 0; w < self.nwards; ++w, ++at) {
      const int ward = wards_of[static_cast<std::size_t>(at)];
      if (ward >= 0 && ward < nprocs && s.holder_of[static_cast<std::size_t>(ward)] < 0 &&
          self.role >= 0 && s.same_checkpoint)
        s.holder_of[static_cast<std::size_t>(ward)] = q;
    }
  }
  s.lost.clear();
  for (int r = 0; r < nprocs; ++r)
    if (!present[static_cast<std::size_t>(r)]) s.lost.push_back(r);
  s.used = s.all.empty() ? recoveries : s.all[0].recoveries;
  return true;
}

void trace_survey(const Survey& s, int attempt) {
  if (std::getenv("BSPG_TRACE_RECOVERY") == nullptr) return;
  std::string text;
  for (const Self& q : s.all)
    text += " [" + std::to_string(q.role) + " kept " + std::to_string(q.kept) + "/" +
            std::to_string(q.before) + "]";
  std::fprintf(stderr, "bspg trace: attempt %d rank %d of %d, role %d, target %llu%s:%s\n", attempt,
               s.me, s.size, role, static_cast<unsigned long long>(s.target),
               s.everyone_has_it ? "" : " (not everywhere)", text.c_str());
}

// Why the job cannot go on in place after what the survey found ("" where it can).
std::string why_not_in_place(const Survey& s) {
  if (!s.lost.empty() && s.lost.front() == 0) return "process 0 runs main's sequential part";
  if (s.lost.size() > s.spare_ranks.size())
    return s.spare_ranks.empty() ? "no spare is left"
                                 : "fewer spares are left than processes were lost";
  if (s.used >= allowed) return "the recoveries allowed (bsprun --restarts) are used up";
  if (!s.same_checkpoint) return "the processes left keep different checkpoints in memory";
  for (int r : s.lost)
    if (s.n > 0 && s.holder_of[static_cast<std::size_t>(r)] < 0)
      return "no process left holds a copy of process " + std::to_string(r) +
             "'s shard of checkpoint " + std::to_string(s.n) + " (bsprun --copies keeps more)";
  return "";
}

// Each lost shard of checkpoint n, from the process that holds its copy to the spare that takes
// the pid (taker: by pid, its rank, or -1). false where a transfer of this process's failed;
// every process then agrees to start again.
bool bring_lost_shards(const Survey& s, const std::vector<int>& taker) {
  constexpr std::size_t kPiece = std::size_t{1} << 30;  // MPI counts are ints
  bool ok = true;
  for (int r : s.lost) {
    if (s.n == 0) break;
    const int from = s.holder_of[static_cast<std::size_t>(r)],
              to = taker[static_cast<std::size_t>(r)];
    // Straight from the holder's in-memory copy into the spare's in-memory file: no other copy.
    if (s.me == from) {
      std::uint64_t size = 0;
      const char* bytes = memory_copies::kept_copy_bytes(r, size);
      unsigned long long length = bytes ? size : ~0ULL;
      ok = MPI_Send(&length, 1, MPI_UNSIGNED_LONG_LONG, to, kShardTag, s.alive) == MPI_SUCCESS;
      for (std::size_t at = 0; ok && bytes && at < size; at += kPiece)
        ok = MPI_Send(bytes + at, static_cast<int>(std::min<std::uint64_t>(size - at, kPiece)),
                      MPI_BYTE, to, kShardTag, s.alive) == MPI_SUCCESS;
    } else if (s.me == to) {
      unsigned long long length = 0;
      if (MPI_Recv(&length, 1, MPI_UNSIGNED_LONG_LONG, from, kShardTag, s.alive,
                   MPI_STATUS_IGNORE) != MPI_SUCCESS ||
          length == ~0ULL)
        return false;
      char* into = memory_copies::adopt(s.n, s.all[static_cast<std::size_t>(from)].run, length);
      std::string scratch;  // no memory for it: received all the same (the holder sends it)
      if (!into) scratch.resize(std::min<std::uint64_t>(length, kPiece));
      for (std::uint64_t at = 0; at < length; at += kPiece)
        if (MPI_Recv(into ? into + at : scratch.data(),
                     static_cast<int>(std::min<std::uint64_t>(length - at, kPiece)), MPI_BYTE, from,
                     kShardTag, s.alive, MPI_STATUS_IGNORE) != MPI_SUCCESS)
          return false;
    }
  }
  return ok;
}

// This process's part of the new job: who runs which pid (known, world_roles), its own role and
// communicators. A spare that takes a place takes the pid's subjob too.
void take_up_roles(const Survey& s, const std::vector<int>& taker, int new_role, MPI_Comm new_job) {
  const int nprocs = static_cast<int>(known.size());
  world_roles.assign(static_cast<std::size_t>(s.size), -1);
  for (int q = 0; q < s.size; ++q) {
    const Self& self = s.all[static_cast<std::size_t>(q)];
    int r = self.role;
    for (int l : s.lost)
      if (taker[static_cast<std::size_t>(l)] == q) r = l;
    world_roles[static_cast<std::size_t>(q)] = r;
    if (r >= 0 && r < nprocs) {  // who runs pid r now; the subjob stays the pid's
      const int subjob = known[static_cast<std::size_t>(r)].subjob;
      known[static_cast<std::size_t>(r)] = self;
      known[static_cast<std::size_t>(r)].subjob = subjob;
    }
  }
  if (spare && new_role >= 0) {
    const int subjob = known[static_cast<std::size_t>(new_role)].subjob;
    if (subjob >= 0) setenv("BSPG_SUBJOB", std::to_string(subjob).c_str(), 1);
  }
  world = s.alive;
  job = new_job;
  role = new_role;
  spare = new_role < 0;
  recoveries = s.used + 1;
  if (!spare) watch_job();
}

// Process 0's line (bsprun reads it): "from checkpoint N: ... lost, ...", or where none was taken
// yet, ": ... lost, ..., from the start".
void announce(const Survey& s, const std::vector<std::string>& lost_names,
              const std::vector<int>& taker, double started) {
  std::string who = lost_names.empty() ? "no process of the job" : "", hosts;
  for (std::size_t k = 0; k < s.lost.size(); ++k) {
    who += (who.empty() ? "" : ", ") + lost_names[k];
    hosts += std::string(hosts.empty() ? "" : ", ") +
             s.all[static_cast<std::size_t>(taker[static_cast<std::size_t>(s.lost[k])])].host;
  }
  const std::string from = s.n > 0 ? " from checkpoint " + std::to_string(s.n) : std::string();
  std::string taken;
  if (s.lost.size() == 1)
    taken = ", a spare on " + hosts + " took its place";
  else if (!s.lost.empty())
    taken = ", spares on " + hosts + " took their places";
  if (s.n == 0) taken += ", from the start (no checkpoint yet)";
  std::fflush(stdout);
  std::fprintf(stderr, "bspg: recovered in place%s: %s lost%s, in %.3f s\n", from.c_str(),
               who.c_str(), taken.c_str(), MPI_Wtime() - started);
  std::fflush(stderr);
}

// A recovery that does not end (Open MPI 5.0.7's shrink has been seen to wait for ever when a
// second process was lost in the middle of it) ends the job for a restart.
void bound_the_recovery() {
  const int this_recovery = ++recoveries_started;
  std::thread([this_recovery] {
    sleep(kRecoveryLimitSeconds);
    if (recoveries_started != this_recovery || !in_recovery) return;
    bound_reached = true;  // one line only: end_for_restart says nothing more
    if (role == 0) {
      std::fprintf(stderr,
                   "bspg: a process was lost; no recovery in place: the recovery did not end "
                   "within %d s; the job ends for a restart\n",
                   kRecoveryLimitSeconds);
      std::fflush(stderr);
    } else {
      sleep(1);
    }
    leave_exit_note(kEndedForRestart);
    std::_Exit(kEndedForRestart);
  }).detach();
}
#endif

// Every living process meets here after a loss. Never returns: it leaves for the recovery point.
[[noreturn]] void recover(const char* /*where*/) {
#if defined(BSPG_HAVE_ULFM)
  const double started = MPI_Wtime();
  std::fflush(stdout);
  lost_peers::revoke_all();
  MPIX_Comm_revoke(world);
  bound_the_recovery();
  // Losses close together (a host's processes) are best seen at once: a moment for the MPI to
  // report them before the world is shrunk.
  usleep(50000);
  trace_step("surveying");
  for (int attempt = 0;; ++attempt) {  // a loss during the recovery starts it again
    if (attempt > 100) std::_Exit(kEndedForRestart);
    Survey s;
    if (!survey_the_living(s)) {
      start_again(s);
      continue;
    }
    trace_survey(s, attempt);
    if (const std::string why = why_not_in_place(s); !why.empty())
      end_for_restart(s.alive, s.lost, why.c_str());

    // The spares, in rank order, take the lost pids in order.
    int new_role = role;
    std::vector<int> taker(known.size(), -1);
    for (std::size_t k = 0; k < s.lost.size(); ++k) {
      taker[static_cast<std::size_t>(s.lost[k])] = s.spare_ranks[k];
      if (s.spare_ranks[k] == s.me) new_role = s.lost[k];
    }
    // All agree that every shard came (else: again, on the world that is left then).
    trace_step("bringing shards");
    int whole = bring_lost_shards(s, taker) ? 1 : 0;
    if (MPIX_Comm_agree(s.alive, &whole) != MPI_SUCCESS || !whole) {
      start_again(s);
      continue;
    }
    // The new job: the survivors and the spares that took a place, ranked by pid.
    MPI_Comm new_job = MPI_COMM_NULL;
    int joined = MPI_Comm_split(s.alive, new_role >= 0 ? 0 : MPI_UNDEFINED, new_role, &new_job) ==
                 MPI_SUCCESS;
    if (MPIX_Comm_agree(s.alive, &joined) != MPI_SUCCESS || !joined) {  // all go on, or all again
      start_again(s);
      continue;
    }
    std::vector<std::string> lost_names;  // as they ran before (known changes below)
    for (int r : s.lost) lost_names.push_back(describe_lost(r));
    take_up_roles(s, taker, new_role, new_job);
    if (role == 0) announce(s, lost_names, taker, started);
    // Back to the start, as a fresh process: the abandoned section is forgotten (not freed: its
    // communicators are revoked), the globals are put back, and bspg_resume reads memory.
    if (forget_section != nullptr) forget_section();
    forget_sections();
    memory_copies::resume_from_memory(!spare);
    restore_globals();
    trace_step("back to the start");
    in_recovery = false;
    longjmp(point, 1);
  }
#else
  std::_Exit(kEndedForRestart);
#endif
}

void on_loss(const char* where) {
  if (in_recovery) return;  // an MPI call of the recovery itself: its result says enough
  in_recovery = true;
  trace_step(where);
  recover(where);
}

// Before the job stops for an error: if a peer was lost, the error is likely its consequence
// (a superstep that ended without the lost process's data), so recover instead. Detection takes
// the MPI a few milliseconds: ask for up to two seconds.
void check_before_stop() {
#if defined(BSPG_HAVE_ULFM)
  if (!asked || spare || in_recovery || job == MPI_COMM_NULL) return;
  for (int waited_ms = 0; waited_ms < 2000; ++waited_ms) {
    MPI_Group failed = MPI_GROUP_NULL;
    int count = 0;
    MPIX_Comm_failure_ack(job);
    MPIX_Comm_failure_get_acked(job, &failed);
    MPI_Group_size(failed, &count);
    MPI_Group_free(&failed);
    if (count > 0) on_loss("a stop");
    lost_peers::check();
    usleep(1000);
  }
#endif
}

[[noreturn]] void leave_together(int status);
void let_spares_leave();

void watch_job() {
  MPI_Comm sentinel = MPI_COMM_NULL;
  MPI_Comm_dup(job, &sentinel);
  lost_peers::enable(sentinel, on_loss);
  lost_peers::watch(job);
}

}  // namespace

void prepare() {
  const char* text = std::getenv("BSPG_SPARES");
  if (text == nullptr || *text == '\0' || program_starts_mpi_itself()) return;
  globals_internal::AddressMap map;
  globals_internal::Executable exe;
  globals_internal::scan_address_space(map, exe);
  for (const Segment& page : exe.pages) {
#if defined(__SANITIZE_ADDRESS__)
    ASAN_UNPOISON_MEMORY_REGION(reinterpret_cast<void*>(page.begin), page.end - page.begin);
#endif
    Saved copy{page, std::vector<unsigned char>(page.end - page.begin)};
    std::memcpy(copy.bytes.data(), reinterpret_cast<const void*>(page.begin), copy.bytes.size());
    saved_globals.push_back(std::move(copy));
  }
}

jmp_buf& recovery_point() { return point; }

void trace_moment(const char* what) { trace_step(what); }

void start() {
  const char* text = std::getenv("BSPG_SPARES");
  if (text == nullptr || *text == '\0') return;
  int size = 1, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
#if !defined(BSPG_HAVE_ULFM)
  fail("bsp_begin",
       "BSPG_SPARES=%s asks for spares (bsprun --spares), but bspg was built with %s, which has no "
       "fault tolerance (ULFM); bsprun restarts lost jobs from checkpoints instead",
       text, BSPG_MPI_NAME);
#endif
  spares = number_from_environment("BSPG_SPARES", text, 1, 1000);
  if (spares >= size)
    fail("bsp_begin", "BSPG_SPARES=%d leaves no process for the job: %d were started", spares,
         size);
  allowed = spares;
  if (const char* given = std::getenv("BSPG_RECOVERIES"); given != nullptr && *given != '\0')
    allowed = number_from_environment("BSPG_RECOVERIES", given, 0, 1000000);
  asked = true;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  world = MPI_COMM_WORLD;
  const int nprocs = size - spares;
  spare = rank >= nprocs;
  role = spare ? -1 : rank;
  MPI_Comm_split(world, spare ? MPI_UNDEFINED : 0, rank, &job);
  const Self mine = describe_self();
  std::vector<Self> all(static_cast<std::size_t>(size));
  MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, world);
  known.assign(all.begin(), all.begin() + nprocs);
  world_roles.clear();
  for (const Self& s : all) world_roles.push_back(s.role);
  // Where each process can be reached, for cutting the connections to a host bsprun names lost.
  char addresses[kAddressBytes] = {};
  const std::string mine_text = cut_links::local_addresses();
  std::strncpy(addresses, mine_text.c_str(), sizeof addresses - 1);
  std::vector<char> every(static_cast<std::size_t>(size) * kAddressBytes);
  MPI_Allgather(addresses, kAddressBytes, MPI_CHAR, every.data(), kAddressBytes, MPI_CHAR, world);
  world_rank = rank;
  world_hosts.clear();
  world_addresses.clear();
  for (int r = 0; r < size; ++r) {
    world_hosts.emplace_back(all[static_cast<std::size_t>(r)].host);
    const char* text = every.data() + static_cast<std::size_t>(r) * kAddressBytes;
    world_addresses.emplace_back(text, strnlen(text, kAddressBytes - 1));
  }
  memory_copies::turn_on();
  set_before_stop(check_before_stop);
  if (!spare) {
    set_leave_together(leave_together);
    lost_peers::set_before_release(let_spares_leave);
    watch_job();
  }
}

bool has_spares() { return asked; }
bool is_spare() { return spare; }
MPI_Comm job_world() { return job; }

void serve_as_spare() {
#if defined(BSPG_HAVE_ULFM)
  int word = 0;
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_Irecv(&word, 1, MPI_INT, MPI_ANY_SOURCE, kSpareTag, world, &request);
  // Polls, sleeping between polls (up to 1 ms): a spare may wait for hours, and MPI_Wait's busy
  // wait would take a core from whatever else its host runs (the job's processes, where they share
  // it). A loss reaches it within a pause.
  long pause_ns = 0;
  for (;;) {
    int done = 0;
    const int rc = MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS && !done) {
      pause_ns = std::min(pause_ns > 0 ? 2 * pause_ns : 50L * 1000, 1000L * 1000);
      const timespec pause{0, pause_ns};
      nanosleep(&pause, nullptr);
      continue;
    }
    pause_ns = 0;
    if (rc == MPI_SUCCESS && word == kLeaveWord) leave_now(0);  // as told: not lost
    if (rc == MPI_SUCCESS) {  // the job ended
      g_phase = Phase::After;
      if (before_finalize()) MPI_Finalize();
      std::exit(0);
    }
    int error_class = 0;
    MPI_Error_class(rc, &error_class);
    if (error_class == MPIX_ERR_REVOKED) on_loss("a spare's wait");
    if (error_class != MPIX_ERR_PROC_FAILED && error_class != MPIX_ERR_PROC_FAILED_PENDING)
      fail("bsp_begin", "a spare's wait for the job failed (MPI error class %d)", error_class);
    // Who failed: a process of the job (recover), or only spares (say so, and wait on).
    MPIX_Comm_failure_ack(world);
    MPI_Group failed = MPI_GROUP_NULL, everyone = MPI_GROUP_NULL;
    MPIX_Comm_failure_get_acked(world, &failed);
    MPI_Comm_group(world, &everyone);
    int count = 0;
    MPI_Group_size(failed, &count);
    std::vector<int> ranks(static_cast<std::size_t>(count)), in_world(ranks.size());
    for (int k = 0; k < count; ++k) ranks[static_cast<std::size_t>(k)] = k;
    MPI_Group_translate_ranks(failed, count, ranks.data(), everyone, in_world.data());
    MPI_Group_free(&failed);
    MPI_Group_free(&everyone);
    bool job_process_lost = false;
    std::vector<bool> gone(world_roles.size(), false);
    for (int q : in_world)
      if (q >= 0 && static_cast<std::size_t>(q) < world_roles.size()) {
        gone[static_cast<std::size_t>(q)] = true;
        job_process_lost = job_process_lost || world_roles[static_cast<std::size_t>(q)] >= 0;
      }
    if (job_process_lost) on_loss("a spare's wait");
    int me = 0, first_spare_left = -1, left = 0;
    MPI_Comm_rank(world, &me);
    for (std::size_t q = 0; q < world_roles.size(); ++q)
      if (world_roles[q] < 0 && !gone[q]) {
        if (first_spare_left < 0) first_spare_left = static_cast<int>(q);
        ++left;
      }
    if (me == first_spare_left && count > reported_spares_lost) {
      std::fprintf(stderr, "bspg: a spare was lost while waiting; %d %s left\n", left,
                   left == 1 ? "spare is" : "spares are");
      std::fflush(stderr);
    }
    reported_spares_lost = count;
    if (error_class == MPIX_ERR_PROC_FAILED)  // the receive ended: wait anew
      MPI_Irecv(&word, 1, MPI_INT, MPI_ANY_SOURCE, kSpareTag, world, &request);
  }
#else
  std::exit(0);
#endif
}

namespace {

bool spares_told = false;

// Process 0: each spare gets `word` (kEndWord or kLeaveWord), once.
void tell_spares(int word) {
  if (!asked || role != 0 || spares_told) return;
  spares_told = true;
  int waiting = 0, lost = 0;
  for (std::size_t q = 0; q < world_roles.size(); ++q)
    if (world_roles[q] < 0) {  // a lost spare's send fails
      ++waiting;
      if (MPI_Send(&word, 1, MPI_INT, static_cast<int>(q), kSpareTag, world) != MPI_SUCCESS)
        ++lost;
    }
  // The job does not watch its spares; a spare lost while waiting is said by another spare, or
  // here, at the end, where none was left to say it.
  if (lost > 0 && lost == waiting) {
    std::fprintf(stderr, "bspg: %d of the job's %d %s lost while waiting\n", lost, waiting,
                 waiting == 1 ? "spare was" : "spares were");
    std::fflush(stderr);
  }
}

// Before a job that stops together leaves its last barrier: no process of the job has left yet,
// so no spare can take the end for a loss (and revoke what 0 tells it on).
void let_spares_leave() { tell_spares(kLeaveWord); }

// Every process of the job at once, after a barrier (stop_together): process 0 lets the spares
// go, if the barrier did not already, and each leaves by itself with `status`, which the starter
// passes on (as end_for_restart).
[[noreturn]] void leave_together(int status) {
  tell_spares(kLeaveWord);
  leave_now(status);
}

}  // namespace

void release_spares() { tell_spares(kEndWord); }

namespace {

std::vector<std::string> words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> all;
  for (std::string w; in >> w;) all.push_back(w);
  return all;
}

// The ranks bsprun names in `file` so far (at most 64 KiB read; anything but numbers skipped).
std::vector<int> named_ranks(const std::string& file) {
  std::vector<int> ranks;
  const int fd = open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return ranks;
  std::string text;
  char buffer[4096];
  for (ssize_t got; text.size() < 65536 && (got = read(fd, buffer, sizeof buffer)) > 0;)
    text.append(buffer, static_cast<std::size_t>(got));
  close(fd);
  for (const std::string& w : words(text)) {
    const long r = whole_number(w.c_str(), 0, 1 << 30);
    if (r >= 0) ranks.push_back(static_cast<int>(r));
  }
  return ranks;
}

// The thread of watch_named_losses. A named process's connections are cut again on every look
// for kCutForSeconds: the MPI may open new ones to it meanwhile.
// It works on copies of the start's tables (the globals may be destroyed first at the end).
void watch_named_losses_thread(const std::string& file, const std::vector<std::string>& world_hosts,
                               const std::vector<std::string>& world_addresses, int world_rank) {
  constexpr double kCutForSeconds = 5;
  using Clock = std::chrono::steady_clock;
  const std::size_t size = world_addresses.size();
  std::vector<bool> named(size, false);
  std::vector<Clock::time_point> named_at(size);
  const std::vector<std::string> mine =
      words(world_addresses[static_cast<std::size_t>(world_rank)]);
  for (;;) {
    const timespec pause{0, 20L * 1000 * 1000};
    nanosleep(&pause, nullptr);
    const auto now = Clock::now();
    for (int r : named_ranks(file)) {
      const auto q = static_cast<std::size_t>(r);
      if (q >= size || r == world_rank || named[q]) continue;
      named[q] = true;
      named_at[q] = now;
      std::lock_guard<std::mutex> lock(named_mutex);
      if (named_hosts.find(world_hosts[q]) == std::string::npos)
        named_hosts += (named_hosts.empty() ? "" : ", ") + world_hosts[q];
    }
    std::vector<std::string> far;
    for (std::size_t q = 0; q < size; ++q)
      if (named[q] && std::chrono::duration<double>(now - named_at[q]).count() < kCutForSeconds)
        for (const std::string& a : words(world_addresses[q]))
          if (std::find(mine.begin(), mine.end(), a) == mine.end()) far.push_back(a);
    if (far.empty()) continue;
    const int cut = cut_links::cut_connections_to(far);
    if (cut > 0 && links_cut) {
      char what[80];
      std::snprintf(what, sizeof what, "cut %d more connections", cut);
      trace_step(what);
    }
    if (!links_cut.exchange(true)) {
      std::string to;
      for (const std::string& a : far) to += " " + a;
      char what[400];
      std::snprintf(what, sizeof what, "bsprun named lost processes: %d connections cut (to%s)",
                    cut, to.substr(0, 300).c_str());
      trace_step(what);
    }
  }
}

}  // namespace

void watch_named_losses() {
  if (!asked) return;
  const std::string& dir = exit_notes_directory_in_use();
  if (dir.empty()) return;
  std::thread(watch_named_losses_thread, dir + "/lost-ranks", world_hosts, world_addresses,
              world_rank)
      .detach();
}

bool before_finalize() {
  if (!asked) return true;
  release_spares();
  // Open MPI 5.0.7's MPI_Finalize sometimes waits for ever under its fault tolerance: in its
  // closing fence after a recovery (seen after two losses), and in stopping the heartbeat
  // detector's thread (seen with no loss at all). Every process has ended its part by now, so a
  // process still in it after five seconds ends by itself, with status 0.
  std::thread([] {
    sleep(5);
    leave_now(0);  // it ended well: bsprun must not take it for lost
  }).detach();
  if (!links_cut) return true;
  // Every living process's output is with the starter before process 0's line, which tells
  // bsprun that nothing more comes.
  drain_output();
  lost_peers::ignore_losses();  // those who leave first are not lost
  lost_peers::barrier_before_leaving(world);
  if (role == 0) {
    std::string hosts;
    {
      std::lock_guard<std::mutex> lock(named_mutex);
      hosts = named_hosts;
    }
    std::fprintf(stderr,
                 "bspg: the job ended without finalizing MPI: the lost processes on %s did not "
                 "answer, and the MPI's run-time still counts them\n",
                 hosts.c_str());
    std::fflush(stderr);
    drain_output();
  }
  return false;
}

void set_forget_section_hook(void (*forget)()) { forget_section = forget; }

}  // namespace bspg::in_place
