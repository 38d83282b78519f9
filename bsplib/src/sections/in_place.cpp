// in_place.cpp - spares, the job's world without them, and the recovery (see in_place.hpp).
#include "in_place.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#if defined(BSPG_HAVE_ULFM)
#include <mpi-ext.h>
#endif
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

#include "errors.hpp"
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
constexpr int kShardTag = 32002;  // a lost process's shard, to the spare that takes its place
constexpr int kEndWord = 1;
constexpr std::size_t kHostBytes = 64;

// What each process says of itself at the start and at each recovery.
struct Self {
  int role;                 // pid in the job, -1 for a spare
  int os_pid;               // its process id on its host
  int recoveries;           // recoveries in place so far (the same everywhere)
  int nwards;               // copies held (their pids follow, in a second exchange)
  int subjob;               // BSPG_SUBJOB (bsprun's grid path), -1 where unset
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
void (*forget_section)() = nullptr;
std::atomic<bool> in_recovery{false};
std::atomic<int> recoveries_started{0};
constexpr int kRecoveryLimitSeconds = 10;
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
  const char* subjob = std::getenv("BSPG_SUBJOB");
  self.subjob = subjob != nullptr && *subjob >= '0' && *subjob <= '9' ? std::atoi(subjob) : -1;
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

// The recovery cannot be done in place: the lowest living process says why, and the job ends
// for bsprun's restart.
[[noreturn, maybe_unused]] void end_for_restart(MPI_Comm alive, const std::vector<int>& lost,
                                                const char* why) {
  int rank = 0;
  MPI_Comm_rank(alive, &rank);
  if (rank == 0) {
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
    MPI_Abort(alive, kEndedForRestart);  // carries the status to mpirun
  }
  // The others end by themselves, once process 0 has spoken: under fault tolerance an abort need
  // not end them, and several aborts at once have left Open MPI 5.0.7's mpirun waiting for ever.
  usleep(200000);
  std::_Exit(kEndedForRestart);
}

[[maybe_unused]] void restore_globals() {
  for (const Saved& s : saved_globals)
    std::memcpy(reinterpret_cast<void*>(s.page.begin), s.bytes.data(), s.bytes.size());
}

// Every living process meets here after a loss. Never returns: it leaves for the recovery point.
[[noreturn]] void recover(const char* /*where*/) {
#if defined(BSPG_HAVE_ULFM)
  const double started = MPI_Wtime();
  std::fflush(stdout);
  lost_peers::revoke_all();
  MPIX_Comm_revoke(world);
  // A recovery that does not end (Open MPI 5.0.7's shrink has been seen to wait for ever when a
  // second process was lost in the middle of it) ends the job for a restart.
  const int this_recovery = ++recoveries_started;
  std::thread([this_recovery] {
    sleep(kRecoveryLimitSeconds);
    if (recoveries_started != this_recovery || !in_recovery) return;
    if (role == 0) {
      std::fprintf(stderr,
                   "bspg: a process was lost; no recovery in place: the recovery did not end "
                   "within %d s; the job ends for a restart\n",
                   kRecoveryLimitSeconds);
      std::fflush(stderr);
    } else {
      sleep(1);
    }
    std::_Exit(kEndedForRestart);
  }).detach();
  // Losses close together (a host's processes) are best seen at once: a moment for the MPI to
  // report them before the world is shrunk.
  usleep(50000);
  MPI_Comm alive = MPI_COMM_NULL;
  std::vector<Self> all;
  std::vector<int> wards_of;  // every process's wards, in rank order
  std::vector<int> ward_counts;
  // Shrink and learn who is left; a loss during this starts it again on the smaller world.
  for (int attempt = 0;; ++attempt) {  // a loss during the recovery starts it again
    if (attempt > 100) std::_Exit(kEndedForRestart);
    MPIX_Comm_shrink(world, &alive);
    MPI_Comm_set_errhandler(alive, MPI_ERRORS_RETURN);
    int size = 0;
    MPI_Comm_size(alive, &size);
    const Self mine = describe_self();
    all.assign(static_cast<std::size_t>(size), Self{});
    int rc = MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, alive);
    // The checkpoint to go back to: the newest every process of the job has whole (a process
    // whose last checkpoint's end a loss cut short has only the one before).
    std::uint64_t target = UINT64_MAX;
    bool everyone_has_it = true;
    if (rc == MPI_SUCCESS) {
      for (const Self& s : all)
        if (s.role >= 0) target = std::min(target, s.kept);
      if (target == UINT64_MAX) target = 0;
      for (const Self& s : all)
        if (s.role >= 0 && target > 0 && s.kept != target && s.before != target)
          everyone_has_it = false;
      if (role >= 0 && target > 0 && everyone_has_it) memory_copies::use(target);
    }
    // Who holds copies of whose shard of it.
    std::vector<int> my_wards = memory_copies::kept_wards();
    int my_count = static_cast<int>(my_wards.size());
    ward_counts.assign(static_cast<std::size_t>(size), 0);
    std::vector<int> displacements(static_cast<std::size_t>(size), 0);
    if (rc == MPI_SUCCESS)
      rc = MPI_Allgather(&my_count, 1, MPI_INT, ward_counts.data(), 1, MPI_INT, alive);
    int total = 0;
    if (rc == MPI_SUCCESS) {
      for (int q = 0; q < size; ++q) {
        all[static_cast<std::size_t>(q)].nwards = ward_counts[static_cast<std::size_t>(q)];
        displacements[static_cast<std::size_t>(q)] = total;
        total += ward_counts[static_cast<std::size_t>(q)];
      }
      wards_of.assign(static_cast<std::size_t>(total), -1);
      rc = MPI_Allgatherv(my_wards.data(), my_count, MPI_INT, wards_of.data(), ward_counts.data(),
                          displacements.data(), MPI_INT, alive);
    }
    int ok = rc == MPI_SUCCESS ? 1 : 0;
    if (rc == MPI_SUCCESS) MPIX_Comm_agree(alive, &ok);
    if (!ok) {
      MPIX_Comm_revoke(alive);
      world = alive;
      continue;
    }
    int me = 0;
    MPI_Comm_rank(alive, &me);
    const int nprocs = static_cast<int>(known.size());
    std::vector<int> holder_of(static_cast<std::size_t>(nprocs), -1);  // pid -> rank of a holder
    std::vector<bool> present(static_cast<std::size_t>(nprocs), false);
    std::vector<int> spare_ranks;
    std::uint64_t lowest_kept = UINT64_MAX, highest_kept = 0;
    for (int q = 0; q < size; ++q) {
      const Self& s = all[static_cast<std::size_t>(q)];
      if (s.role >= 0 && s.role < nprocs) {
        present[static_cast<std::size_t>(s.role)] = true;
        const std::uint64_t has = everyone_has_it ? target : s.kept;
        lowest_kept = std::min(lowest_kept, has);
        highest_kept = std::max(highest_kept, has);
      } else {
        spare_ranks.push_back(q);
      }
    }
    // Who holds a copy of each pid's shard of the checkpoint all kept (the lowest rank that does).
    for (int q = 0, at = 0; q < size; ++q) {
      const Self& s = all[static_cast<std::size_t>(q)];
      for (int w = 0; w < s.nwards; ++w, ++at) {
        const int ward = wards_of[static_cast<std::size_t>(at)];
        if (ward >= 0 && ward < nprocs && holder_of[static_cast<std::size_t>(ward)] < 0 &&
            s.role >= 0 && lowest_kept == highest_kept)
          holder_of[static_cast<std::size_t>(ward)] = q;
      }
    }
    std::vector<int> lost;
    for (int r = 0; r < nprocs; ++r)
      if (!present[static_cast<std::size_t>(r)]) lost.push_back(r);
    const int used = all.empty() ? recoveries : all[0].recoveries;
    if (std::getenv("BSPG_TRACE_RECOVERY") != nullptr) {
      std::string text;
      for (const Self& s : all)
        text += " [" + std::to_string(s.role) + " kept " + std::to_string(s.kept) + "/" +
                std::to_string(s.before) + "]";
      std::fprintf(stderr, "bspg trace: attempt %d rank %d of %d, role %d, target %llu%s:%s\n",
                   attempt, me, size, role, static_cast<unsigned long long>(target),
                   everyone_has_it ? "" : " (not everywhere)", text.c_str());
    }
    const std::uint64_t n = lowest_kept == UINT64_MAX ? 0 : lowest_kept;
    if (!lost.empty() && lost.front() == 0)
      end_for_restart(alive, lost, "process 0 runs main's sequential part");
    if (lost.size() > spare_ranks.size())
      end_for_restart(alive, lost,
                      spare_ranks.empty() ? "no spare is left"
                                          : "fewer spares are left than processes were lost");
    if (used >= allowed)
      end_for_restart(alive, lost, "the recoveries allowed (bsprun --restarts) are used up");
    if (lowest_kept != highest_kept)
      end_for_restart(alive, lost, "the processes left keep different checkpoints in memory");
    for (int r : lost)
      if (n > 0 && holder_of[static_cast<std::size_t>(r)] < 0) {
        const std::string why = "no process left holds a copy of process " + std::to_string(r) +
                                "'s shard of checkpoint " + std::to_string(n) +
                                " (bsprun --copies keeps more)";
        end_for_restart(alive, lost, why.c_str());
      }

    // The spares, in rank order, take the lost pids in order.
    int new_role = role;
    std::vector<int> taker(static_cast<std::size_t>(nprocs), -1);
    for (std::size_t k = 0; k < lost.size(); ++k) {
      taker[static_cast<std::size_t>(lost[k])] = spare_ranks[k];
      if (spare_ranks[k] == me) new_role = lost[k];
    }
    // Each lost shard, from its holder to its taker; all agree that it went well (else: again).
    bool again = false;
    for (int r : lost) {
      if (n == 0) break;
      const int from = holder_of[static_cast<std::size_t>(r)],
                to = taker[static_cast<std::size_t>(r)];
      if (me == from) {
        std::string bytes;
        const bool ok = memory_copies::read_whole(memory_copies::kept_copy(r), bytes);
        unsigned long long length = ok ? bytes.size() : ~0ULL;
        MPI_Send(&length, 1, MPI_UNSIGNED_LONG_LONG, to, kShardTag, alive);
        for (std::size_t at = 0; ok && at < bytes.size(); at += std::size_t{1} << 30)
          MPI_Send(bytes.data() + at,
                   static_cast<int>(std::min(bytes.size() - at, std::size_t{1} << 30)), MPI_BYTE,
                   to, kShardTag, alive);
      } else if (me == to) {
        unsigned long long length = 0;
        if (MPI_Recv(&length, 1, MPI_UNSIGNED_LONG_LONG, from, kShardTag, alive,
                     MPI_STATUS_IGNORE) != MPI_SUCCESS ||
            length == ~0ULL)
          again = true;
        std::string bytes(again ? 0 : length, '\0');
        for (std::size_t at = 0; at < bytes.size(); at += std::size_t{1} << 30)
          if (MPI_Recv(bytes.data() + at,
                       static_cast<int>(std::min(bytes.size() - at, std::size_t{1} << 30)),
                       MPI_BYTE, from, kShardTag, alive, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            end_for_restart(alive, lost, "a shard could not be brought to the spare");
        memory_copies::adopt(n, all[static_cast<std::size_t>(from)].run, bytes);
      }
    }
    // The new job: the survivors and the spares that took a place, ranked by pid.
    int whole = again ? 0 : 1;
    if (MPIX_Comm_agree(alive, &whole) != MPI_SUCCESS || !whole) {
      MPIX_Comm_revoke(alive);
      world = alive;
      continue;
    }
    MPI_Comm new_job = MPI_COMM_NULL;
    int joined =
        MPI_Comm_split(alive, new_role >= 0 ? 0 : MPI_UNDEFINED, new_role, &new_job) == MPI_SUCCESS;
    if (MPIX_Comm_agree(alive, &joined) != MPI_SUCCESS || !joined) {  // all go on, or all again
      MPIX_Comm_revoke(alive);
      world = alive;
      continue;
    }
    std::string who = lost.empty() ? "no process of the job" : "", hosts;
    for (int r : lost) {
      who += (who.empty() ? "" : ", ") + describe_lost(r);
      hosts += std::string(hosts.empty() ? "" : ", ") +
               all[static_cast<std::size_t>(taker[static_cast<std::size_t>(r)])].host;
    }
    world_roles.assign(static_cast<std::size_t>(size), -1);
    for (int q = 0; q < size; ++q) {
      const Self& s = all[static_cast<std::size_t>(q)];
      int r = s.role;
      for (int l : lost)
        if (taker[static_cast<std::size_t>(l)] == q) r = l;
      world_roles[static_cast<std::size_t>(q)] = r;
      if (r >= 0 && r < nprocs) {  // who runs pid r now; the subjob stays the pid's
        const int subjob = known[static_cast<std::size_t>(r)].subjob;
        known[static_cast<std::size_t>(r)] = s;
        known[static_cast<std::size_t>(r)].subjob = subjob;
      }
    }
    // A spare that takes a place takes its subjob too (bsprun gave spares one past the job's).
    if (spare && new_role >= 0) {
      const int subjob = known[static_cast<std::size_t>(new_role)].subjob;
      if (subjob >= 0) setenv("BSPG_SUBJOB", std::to_string(subjob).c_str(), 1);
    }
    world = alive;
    job = new_job;
    role = new_role;
    spare = new_role < 0;
    recoveries = used + 1;
    if (!spare) watch_job();
    if (role == 0) {
      // "from checkpoint N: ... lost, ...", or where none was taken yet, ": ... lost, ..., from
      // the start" (bsprun reads the line).
      const std::string from = n > 0 ? " from checkpoint " + std::to_string(n) : std::string();
      std::string taken;
      if (lost.size() == 1)
        taken = ", a spare on " + hosts + " took its place";
      else if (!lost.empty())
        taken = ", spares on " + hosts + " took their places";
      if (n == 0) taken += ", from the start (no checkpoint yet)";
      std::fflush(stdout);
      std::fprintf(stderr, "bspg: recovered in place%s: %s lost%s, in %.3f s\n", from.c_str(),
                   who.c_str(), taken.c_str(), MPI_Wtime() - started);
      std::fflush(stderr);
    }
    // Back to the start, as a fresh process: the abandoned section is forgotten (not freed: its
    // communicators are revoked), the globals are put back, and bspg_resume reads memory.
    if (forget_section != nullptr) forget_section();
    forget_sections();
    memory_copies::resume_from_memory(!spare);
    restore_globals();
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
  memory_copies::turn_on();
  set_before_stop(check_before_stop);
  if (!spare) watch_job();
}

bool has_spares() { return asked; }
bool is_spare() { return spare; }
MPI_Comm job_world() { return job; }

void serve_as_spare() {
#if defined(BSPG_HAVE_ULFM)
  int word = 0;
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_Irecv(&word, 1, MPI_INT, MPI_ANY_SOURCE, kSpareTag, world, &request);
  for (;;) {
    const int rc = MPI_Wait(&request, MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS) {  // the job ended
      g_phase = Phase::After;
      before_finalize();
      MPI_Finalize();
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

void release_spares() {
  if (!asked || role != 0) return;
  int waiting = 0, lost = 0;
  for (std::size_t q = 0; q < world_roles.size(); ++q)
    if (world_roles[q] < 0) {  // a lost spare's send fails
      ++waiting;
      if (MPI_Send(&kEndWord, 1, MPI_INT, static_cast<int>(q), kSpareTag, world) != MPI_SUCCESS)
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

void before_finalize() {
  if (!asked) return;
  release_spares();
  // Open MPI 5.0.7's MPI_Finalize sometimes waits for ever under its fault tolerance: in its
  // closing fence after a recovery (seen after two losses), and in stopping the heartbeat
  // detector's thread (seen with no loss at all). Every process has ended its part by now, so a
  // process still in it after five seconds ends by itself, with status 0.
  std::thread([] {
    sleep(5);
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(0);
  }).detach();
}

void set_forget_section_hook(void (*forget)()) { forget_section = forget; }

}  // namespace bspg::in_place
