#include "transport.hpp"

#include <sched.h>
#include <sys/statvfs.h>
#include <unistd.h>

#if !defined(BSPG_HAVE_MPI_ALLREDUCE_INIT) && defined(BSPG_HAVE_MPIX_ALLREDUCE_INIT)
#include <mpi-ext.h>  // Open MPI 4's extensions: persistent collectives (MPIX_Allreduce_init)
#endif

#include <algorithm>
#include <chrono>
#include <cstring>
#include <ctime>
#include <limits>

#include "copy.hpp"
#include "errors.hpp"

namespace bspg {
namespace {

constexpr std::uint64_t kInitialBufferBytes = std::uint64_t{64} * 1024;
constexpr std::uint64_t kGranule = std::uint64_t{64} * 1024;
constexpr std::uint64_t kMaxTransferBytes = std::uint64_t{1} << 30;  // MPI counts are int

// What the user chose in the environment (bsp(3)), read once, at the first group's start
// (bsp_begin): a bad value is one line from there, whatever group would have read it later.
struct TransportChoices {
  const char* transport = nullptr;  // BSPG_TRANSPORT: one-sided, two-sided, mpi-rma; null: auto
  bool shared_reduction_always = false;  // BSPG_SHARED_REDUCTION=always
  bool shared_reduction_never = false;   // BSPG_SHARED_REDUCTION=never
};

const TransportChoices& transport_choices() {
  static const TransportChoices choices = [] {
    TransportChoices c;
    if (const char* chosen = std::getenv("BSPG_TRANSPORT"); chosen && *chosen) {
      for (const char* way : {"one-sided", "two-sided", "mpi-rma"})
        if (std::strcmp(chosen, way) == 0) c.transport = way;
      if (!c.transport)
        fail("bsp_begin",
             "BSPG_TRANSPORT='%s': choose one-sided, two-sided or mpi-rma (or leave it unset)",
             chosen);
    }
    if (const char* chosen = std::getenv("BSPG_SHARED_REDUCTION"); chosen && *chosen) {
      c.shared_reduction_always = std::strcmp(chosen, "always") == 0;
      c.shared_reduction_never = std::strcmp(chosen, "never") == 0;
      if (!c.shared_reduction_always && !c.shared_reduction_never &&
          std::strcmp(chosen, "auto") != 0)
        fail("bsp_begin",
             "BSPG_SHARED_REDUCTION='%s': choose auto, always or never (or leave it unset)",
             chosen);
    }
    return c;
  }();
  return choices;
}

// Runs `step` (a barrier, a reduction through MPI) so that plain stores into shared memory
// before it, here and in the other processes, are seen after it: a full fence on each side
// where `shared_memory` (MPI's messages order their own bytes, not ours).
template <typename Step>
void fenced(bool shared_memory, Step step) {
  if (shared_memory) __atomic_thread_fence(__ATOMIC_SEQ_CST);
  step();
  if (shared_memory) __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

// What a shared-memory window is allocated larger by, to start each part on a cache line.
constexpr std::uint64_t kLineBytes = 64;

template <typename T>
T* line_aligned(T* at) {
  const auto address = reinterpret_cast<std::uintptr_t>(at);
  return reinterpret_cast<T*>((address + kLineBytes - 1) / kLineBytes * kLineBytes);
}

// Every rank's part of a shared-memory window (MPI_Win_allocate_shared, kLineBytes larger than
// needed), at the address this process maps it, moved up to the next cache line. MPI promises no
// more than a word's alignment (Open MPI 4.1 starts parts 8 bytes past a line), and then every
// line the transport keeps apart, a reduction's slot or a chunk, would straddle two. Every process
// maps the segment at a page boundary, so all of them move each part alike.
template <typename T>
std::vector<T*> shared_bases(MPI_Win win, int ranks) {
  std::vector<T*> bases(static_cast<std::size_t>(ranks));
  for (int q = 0; q < ranks; ++q) {
    MPI_Aint bytes = 0;
    int unit = 0;
    T* base = nullptr;
    MPI_Win_shared_query(win, q, &bytes, &unit, &base);
    bases[static_cast<std::size_t>(q)] = line_aligned(base);
  }
  return bases;
}

// Idle waiting: poll first, as MPI's own waits do (yielding the core when Open MPI's
// mpi_yield_when_idle is set, as it is when processes outnumber cores), then sleep between polls,
// the pause doubling up to a cap that bounds the latency a long wait adds (at 1 ms a waiting
// process polls 1000 times a second, well under 1% of a core). How long to poll adapts: three
// times a typical recent wait (each counted at most 5 ms), from 1 ms to 15 ms, so that a sync whose
// peers are all there finishes while polling even where a collective takes milliseconds (many
// processes per core), and a wait of one second for a late peer costs at most about 2% of a core.
constexpr double kMinSpinSeconds = 1e-3, kMaxSpinSeconds = 15e-3, kWaitSampleCap = 5e-3;
constexpr long kFirstPauseNs = 50 * 1000;
constexpr long kMaxPauseNs = 1000 * 1000;
double typical_wait_seconds = 0;  // exponentially weighted average of recent waits (capped)
bool yield_between_polls = false;  // processes_on_this_node()

// One poll of the requests; true when all are complete.
inline bool poll(int n, MPI_Request* requests) {
  int done = 0;
  MPI_Testall(n, requests, &done, MPI_STATUSES_IGNORE);
  if (!done && yield_between_polls) sched_yield();
  return done != 0;
}

std::uint64_t round_up(std::uint64_t n, std::uint64_t unit) { return (n + unit - 1) / unit * unit; }

// MPI_Put / MPI_Get of any size (MPI counts are int).
template <class Op>
void in_pieces(std::uint64_t n, Op&& op) {
  for (std::uint64_t done = 0; done < n;) {
    std::uint64_t piece = std::min(n - done, kMaxTransferBytes);
    op(done, static_cast<int>(piece));
    done += piece;
  }
}

// Completes this process's RMA to each target in `targets` once (a target may be listed several
// times), and empties the list.
void flush_each(std::vector<int>& targets, MPI_Win win) {
  std::sort(targets.begin(), targets.end());
  targets.erase(std::unique(targets.begin(), targets.end()), targets.end());
  for (int target : targets) MPI_Win_flush(target, win);
  targets.clear();
}

}  // namespace

void processes_on_this_node(int count) {
#if defined(OPEN_MPI)
  (void)count;  // Open MPI yields in its own polls when its mpirun sees more processes than cores
#else
  cpu_set_t cpus;
  const int cores = sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus) : 1;
  yield_between_polls = count > cores;
#endif
}

void wait_any_idle(int n, MPI_Request* requests, int* index) {
  IdlePacer pacer;
  for (;;) {
    int done = 0;
    MPI_Testany(n, requests, index, &done, MPI_STATUS_IGNORE);
    if (done) return;
    pacer.idle();
  }
}

void wait_idle(int n, MPI_Request* requests, const std::function<void()>* also) {
  const auto poll_once = [also](int count, MPI_Request* r) {
    if (also) (*also)();
    return poll(count, r);
  };
  // A sync whose peers are all there ends within a few polls: no clock for those (reading it
  // costs about as much as a poll), and they count as waits of no length.
  for (int polls = 0; polls < 256; ++polls) {
    if (poll_once(n, requests)) {
      typical_wait_seconds *= 0.9;
      return;
    }
  }
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto finished = [&] {
    const double waited = std::chrono::duration<double>(Clock::now() - start).count();
    typical_wait_seconds = 0.9 * typical_wait_seconds + 0.1 * std::min(waited, kWaitSampleCap);
  };
  const double spin = std::clamp(3 * typical_wait_seconds, kMinSpinSeconds, kMaxSpinSeconds);
  const auto spin_until =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(spin));
  do {
    // The clock only every 16 polls: reading it costs about as much as a poll.
    for (int polls = 0; polls < 16; ++polls)
      if (poll_once(n, requests)) return finished();
  } while (Clock::now() < spin_until);
  long pause = kFirstPauseNs;
  for (;;) {
    timespec sleep_for{0, pause};
    nanosleep(&sleep_for, nullptr);
    if (poll_once(n, requests)) return finished();
    pause = std::min(pause * 2, kMaxPauseNs);
  }
}

void IdlePacer::idle() {
  const long long now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::steady_clock::now().time_since_epoch())
                            .count();
  if (idle_since_ns_ == 0) idle_since_ns_ = now;
  if (now - idle_since_ns_ < static_cast<long long>(kMinSpinSeconds * 1e9)) {
    if (yield_between_polls) sched_yield();
    return;
  }
  pause_ns_ = pause_ns_ ? std::min(pause_ns_ * 2, kMaxPauseNs) : kFirstPauseNs;
  timespec sleep_for{0, pause_ns_};
  nanosleep(&sleep_for, nullptr);
}

// ---- Unsigned reductions --------------------------------------------------------------------

namespace {

void max_of_words(void* in, void* inout, int* count, MPI_Datatype*) {
  const auto* a = static_cast<const std::uint64_t*>(in);
  auto* b = static_cast<std::uint64_t*>(inout);
  for (int i = 0; i < *count; ++i) b[i] = std::max(a[i], b[i]);
}

void min_of_words(void* in, void* inout, int* count, MPI_Datatype*) {
  const auto* a = static_cast<const std::uint64_t*>(in);
  auto* b = static_cast<std::uint64_t*>(inout);
  for (int i = 0; i < *count; ++i) b[i] = std::min(a[i], b[i]);
}

// The MPI's own op when it orders 2^63 + 1 and 1 as unsigned numbers, else one of bspg's.
MPI_Op checked_op(MPI_Op builtin, MPI_User_function* own, std::uint64_t expected) {
  std::uint64_t big = (std::uint64_t{1} << 63) + 1, result = 1;
  MPI_Reduce_local(&big, &result, 1, MPI_UINT64_T, builtin);
  if (result == expected) return builtin;
  MPI_Op op;
  MPI_Op_create(own, 1, &op);
  return op;
}

}  // namespace

MPI_Op unsigned_max_op() {
  static const MPI_Op op = checked_op(MPI_MAX, &max_of_words, (std::uint64_t{1} << 63) + 1);
  return op;
}

MPI_Op unsigned_min_op() {
  static const MPI_Op op = checked_op(MPI_MIN, &min_of_words, 1);
  return op;
}

// ---- MaxReduction -------------------------------------------------------------------------------

namespace {

// A mixed MPI op for reductions with sum words: MAX of the first words of each element, SUM of its
// last ones. An element is all of a reduction's words (one contiguous type per reduction), whose
// sum words are looked up by type.
std::vector<std::pair<MPI_Datatype, std::size_t>> mixed_types;  // type -> its words, sum words

std::size_t words_of(MPI_Datatype type, std::size_t* sums) {
  for (const auto& [t, packed] : mixed_types)
    if (t == type) {
      *sums = packed & 0xffff;
      return packed >> 16;
    }
  *sums = 0;
  return 0;
}

void max_and_sum(void* in, void* inout, int* count, MPI_Datatype* type) {
  std::size_t sums = 0;
  const std::size_t words = words_of(*type, &sums);
  const auto* a = static_cast<const std::uint64_t*>(in);
  auto* b = static_cast<std::uint64_t*>(inout);
  for (int e = 0; e < *count; ++e, a += words, b += words) {
    for (std::size_t i = 0; i + sums < words; ++i) b[i] = std::max(a[i], b[i]);
    for (std::size_t i = words - sums; i < words; ++i) b[i] += a[i];
  }
}

MPI_Op max_and_sum_op() {
  static MPI_Op op = [] {
    MPI_Op made;
    MPI_Op_create(&max_and_sum, 1, &made);
    return made;
  }();
  return op;
}

}  // namespace

void MaxReduction::combine(std::uint64_t* into, const std::uint64_t* from) const {
  const std::size_t n = mine_.size(), maxed = n - sum_words_;
  for (std::size_t i = 0; i < maxed; ++i) into[i] = std::max(into[i], from[i]);
  for (std::size_t i = maxed; i < n; ++i) into[i] += from[i];
}

MaxReduction::MaxReduction(MPI_Comm comm, int words, int tag, int sum_words,
                           const std::vector<int>& sites, bool notes)
    : comm_(comm), sum_words_(static_cast<std::size_t>(sum_words)), notes_(notes) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  mine_.assign(static_cast<std::size_t>(words), 0);
  theirs_.assign(static_cast<std::size_t>(words), 0);
  if (open_sites(rank, sites, tag)) return;
  if (open_shared(rank, size)) return;
  int reach = 1;  // the largest power of two not above size
  while (reach * 2 <= size) reach *= 2;
  if (size > kMaxStepProcesses) {
    collective_steps_ = true;
    for (int r = 1; r < size; r *= 2) ++messages_;  // recursive doubling, as libnbc is told to use
    if (sum_words_ > 0) {
      MPI_Type_contiguous(words, MPI_UINT64_T, &mixed_type_);
      MPI_Type_commit(&mixed_type_);
      mixed_types.emplace_back(mixed_type_,
                               static_cast<std::size_t>(words) << 16 | sum_words_);
    }
    const int count = sum_words_ > 0 ? 1 : words;
    const MPI_Datatype type = sum_words_ > 0 ? mixed_type_ : MPI_UINT64_T;
    const MPI_Op op = sum_words_ > 0 ? max_and_sum_op() : unsigned_max_op();
    // Chosen when bspg is configured (cmake/BspgMpi.cmake): MPI-4's persistent collective, Open
    // MPI 4's extension of it, or (neither) a non-blocking MPI_Iallreduce on every run.
#if defined(BSPG_HAVE_MPI_ALLREDUCE_INIT)
    MPI_Allreduce_init(mine_.data(), theirs_.data(), count, type, op, comm, MPI_INFO_NULL,
                       &collective_);
    persistent_ = true;
#elif defined(BSPG_HAVE_MPIX_ALLREDUCE_INIT)
    MPIX_Allreduce_init(mine_.data(), theirs_.data(), count, type, op, comm, MPI_INFO_NULL,
                        &collective_);
    persistent_ = true;
#else
    (void)count, (void)type, (void)op;
#endif
    return;
  }
  auto send = [&](std::uint64_t* from, int to, int step_tag, Step& step) {
    MPI_Send_init(from, words, MPI_UINT64_T, to, step_tag, comm, &step.requests[step.count++]);
    ++messages_;
  };
  auto receive = [&](std::uint64_t* into, int from, int step_tag, Step& step) {
    MPI_Recv_init(into, words, MPI_UINT64_T, from, step_tag, comm, &step.requests[step.count++]);
  };
  const int extra = size - reach;  // ranks 0..2*extra-1 pair up: the even one of a pair sits out
  const int virtual_rank = rank < 2 * extra ? (rank % 2 ? rank / 2 : -1) : rank - extra;
  auto real_rank = [&](int v) { return v < extra ? 2 * v + 1 : v + extra; };
  if (rank < 2 * extra) {  // fold the pair into its odd member
    Step step{{MPI_REQUEST_NULL, MPI_REQUEST_NULL}, 0, rank % 2 == 1};
    if (rank % 2)
      receive(theirs_.data(), rank - 1, tag, step);
    else
      send(mine_.data(), rank + 1, tag, step);
    steps_.push_back(step);
  }
  if (virtual_rank >= 0) {
    int round = 1;
    for (int mask = 1; mask < reach; mask <<= 1, ++round) {
      const int partner = real_rank(virtual_rank ^ mask);
      Step step{{MPI_REQUEST_NULL, MPI_REQUEST_NULL}, 0, true};
      send(mine_.data(), partner, tag + round, step);
      receive(theirs_.data(), partner, tag + round, step);
      steps_.push_back(step);
    }
  }
  if (rank < 2 * extra) {  // and hand the result back to the even one
    Step step{{MPI_REQUEST_NULL, MPI_REQUEST_NULL}, 0, false};
    if (rank % 2)
      send(mine_.data(), rank - 1, tag + 63, step);
    else
      receive(mine_.data(), rank + 1, tag + 63, step);
    steps_.push_back(step);
  }
}

bool MaxReduction::open_shared(int rank, int size) {
  if (size < 2 || size > kMaxShmProcesses) return false;
  // The collectives below block spinning: wait idly until everybody is here (a reduction is made
  // at a group's first sync, where a process may wait a long while for a late one).
  MPI_Request arrived;
  MPI_Ibarrier(comm_, &arrived);
  wait_idle(&arrived);
  // Every process must decide alike (the window is collective): all on one node, none of them
  // short of a core of its own (a spinning reader would keep the writer it waits for from running).
  MPI_Comm node;
  MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  int node_size = 0;
  MPI_Comm_size(node, &node_size);
  MPI_Comm_free(&node);
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  // BSPG_SHARED_REDUCTION=always or never overrides the count of cores (bsp(3)).
  const bool always = transport_choices().shared_reduction_always;
  const bool never = transport_choices().shared_reduction_never;
  int fits = node_size == size && !never && (always || cores >= size) ? 1 : 0, all_fit = 0;
  MPI_Allreduce(&fits, &all_fit, 1, MPI_INT, MPI_MIN, comm_);
  if (!all_fit) return false;
  rank_ = rank, size_ = size;
  // A run number, the words, then the notes for each other process (none for oneself), on
  // 64-byte lines of their own per slot. A reader waits for the run number and then loads the
  // rest, one core-to-core transfer for each further line: a sync of two processes (a header
  // of 6 words, one note) fits on one line.
  notes_at_ = 1 + mine_.size();
  slot_words_ = (notes_at_ + (notes_ ? static_cast<std::size_t>(size) - 1 : 0) + 7) / 8 * 8;
  std::uint64_t* base = nullptr;
  MPI_Win_allocate_shared(
      static_cast<MPI_Aint>(2 * slot_words_ * sizeof(std::uint64_t) + kLineBytes),
      sizeof(std::uint64_t), MPI_INFO_NULL, comm_, &base, &shared_);
  base = line_aligned(base);
  std::fill(base, base + 2 * slot_words_, 0);
  shared_bases_ = shared_bases<std::uint64_t>(shared_, size);
  MPI_Win_lock_all(MPI_MODE_NOCHECK, shared_);
  MPI_Win_sync(shared_);
  MPI_Barrier(comm_);  // every slot reads 0 before anybody's first run
  return true;
}

std::uint64_t* MaxReduction::slot(int rank, std::uint64_t run) const {
  return shared_bases_[static_cast<std::size_t>(rank)] + (run & 1) * slot_words_;
}

void MaxReduction::run_shared(std::uint64_t* words, const std::function<void()>* while_waiting,
                              const std::uint64_t* notes) {
  const std::uint64_t run = ++runs_;
  std::uint64_t* mine = slot(rank_, run);
  std::copy(words, words + mine_.size(), mine + 1);
  if (notes_) {  // always written: a reader may ask for them whatever this process sent
    std::uint64_t* to = mine + notes_at_;
    for (int q = 0; q < size_; ++q)
      if (q != rank_) *to++ = notes ? notes[q] : 0;
    own_note_ = notes ? notes[rank_] : 0;
  }
  __atomic_store_n(mine, run, __ATOMIC_RELEASE);
  for (int q = 0; q < size_; ++q) {
    if (q == rank_) continue;
    const std::uint64_t* theirs = slot(q, run);
    if (__atomic_load_n(theirs, __ATOMIC_ACQUIRE) != run) {
      // Waiting: spin a little (the others are usually a few hundred nanoseconds away), and let
      // MPI progress between spins, since a peer may wait in MPI_Win_flush for this process's MPI
      // to take its data (a one-sided put over point-to-point); later sleep between polls.
      IdlePacer pacer;
      int flag = 0;
      for (;;) {
        for (int spin = 0; spin < 64; ++spin) {
          if (__atomic_load_n(theirs, __ATOMIC_ACQUIRE) == run) break;
#if defined(__x86_64__) || defined(__i386__)
          __builtin_ia32_pause();
#endif
        }
        if (__atomic_load_n(theirs, __ATOMIC_ACQUIRE) == run) break;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm_, &flag, MPI_STATUS_IGNORE);
        if (while_waiting) (*while_waiting)();
        pacer.idle();
      }
    }
    combine(words, theirs + 1);
  }
}

bool MaxReduction::open_sites(int rank, const std::vector<int>& sites, int tag) {
  const auto size = static_cast<int>(sites.size());
  if (size < 2) return false;
  std::vector<int> distinct(sites);
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  const auto nsites = static_cast<int>(distinct.size());
  // One site, or every rank a site of its own: nothing to gain over the plain reduction. Nor with
  // two sites of equal size, one after the other, a power of two in all: recursive doubling
  // crosses between them once, and pairs each process with one of the other site, whose data
  // the reduction's message then follows on the same connection.
  if (nsites < 2 || nsites == size) return false;
  const auto first_site_size =
      static_cast<int>(std::count(sites.begin(), sites.end(), sites.front()));
  const bool halves = nsites == 2 && 2 * first_site_size == size &&
                      std::all_of(sites.begin(), sites.begin() + first_site_size,
                                  [&](int s) { return s == sites.front(); });
  if (halves && (size & (size - 1)) == 0) return false;
  const int site = sites[static_cast<std::size_t>(rank)];
  MPI_Comm_split(comm_, site, rank, &site_comm_);
  int site_rank = 0;
  MPI_Comm_rank(site_comm_, &site_rank);
  MPI_Comm_split(comm_, site_rank == 0 ? 0 : MPI_UNDEFINED, site, &leaders_comm_);
  const int words = static_cast<int>(mine_.size());
  in_site_ = std::make_unique<MaxReduction>(site_comm_, words, tag, static_cast<int>(sum_words_));
  identity_.assign(mine_.size(), 0);
  if (leaders_comm_ == MPI_COMM_NULL) return true;
  if (nsites > kMaxDirectSites) {
    among_sites_ =
        std::make_unique<MaxReduction>(leaders_comm_, words, tag, static_cast<int>(sum_words_));
    return true;
  }
  // All with all: one step, whatever the number of sites.
  int leader = 0;
  MPI_Comm_rank(leaders_comm_, &leader);
  from_sites_.assign(static_cast<std::size_t>(nsites) * mine_.size(), 0);
  for (int other = 0; other < nsites; ++other) {
    if (other == leader) continue;
    leader_requests_.push_back(MPI_REQUEST_NULL);
    MPI_Send_init(mine_.data(), words, MPI_UINT64_T, other, tag + 50, leaders_comm_,
                  &leader_requests_.back());
    leader_requests_.push_back(MPI_REQUEST_NULL);
    MPI_Recv_init(&from_sites_[static_cast<std::size_t>(other) * mine_.size()], words, MPI_UINT64_T,
                  other, tag + 50, leaders_comm_, &leader_requests_.back());
    messages_ += 1;
  }
  return true;
}

void MaxReduction::run_sites(std::uint64_t* words, const std::function<void()>* while_waiting) {
  in_site_->run(words, while_waiting);  // the site's
  if (among_sites_) {
    among_sites_->run(words, while_waiting);
  } else if (!leader_requests_.empty()) {
    std::copy(words, words + mine_.size(), mine_.begin());
    MPI_Startall(static_cast<int>(leader_requests_.size()), leader_requests_.data());
    wait_idle(static_cast<int>(leader_requests_.size()), leader_requests_.data(), while_waiting);
    int leader = 0;
    MPI_Comm_rank(leaders_comm_, &leader);
    for (std::size_t other = 0; other < from_sites_.size() / mine_.size(); ++other)
      if (static_cast<int>(other) != leader) combine(words, &from_sites_[other * mine_.size()]);
  }
  // The site's first rank hands the result to the others: they add nothing (zero is the identity
  // of MAX and of the sums).
  if (leaders_comm_ == MPI_COMM_NULL) std::copy(identity_.begin(), identity_.end(), words);
  in_site_->run(words, while_waiting);
}

std::uint64_t MaxReduction::bytes_per_run() const {
  const std::uint64_t word_bytes = mine_.size() * sizeof(std::uint64_t);
  if (in_site_)
    return 2 * in_site_->bytes_per_run() +
           (among_sites_ ? among_sites_->bytes_per_run()
                         : static_cast<std::uint64_t>(messages_) * 2 * word_bytes);
  return shared_ != MPI_WIN_NULL ? static_cast<std::uint64_t>(size_) * word_bytes
                                 : static_cast<std::uint64_t>(messages_) * 2 * word_bytes;
}

MaxReduction::~MaxReduction() {
  for (MPI_Request& r : leader_requests_) MPI_Request_free(&r);
  in_site_.reset();
  among_sites_.reset();
  if (site_comm_ != MPI_COMM_NULL) MPI_Comm_free(&site_comm_);
  if (leaders_comm_ != MPI_COMM_NULL) MPI_Comm_free(&leaders_comm_);
  if (mixed_type_ != MPI_DATATYPE_NULL) {
    for (auto it = mixed_types.begin(); it != mixed_types.end(); ++it)
      if (it->first == mixed_type_) {
        mixed_types.erase(it);
        break;
      }
    MPI_Type_free(&mixed_type_);
  }
  if (shared_ != MPI_WIN_NULL) {
    MPI_Win_unlock_all(shared_);
    MPI_Win_free(&shared_);
  }
  for (Step& step : steps_)
    for (int i = 0; i < step.count; ++i) MPI_Request_free(&step.requests[i]);
  if (persistent_) MPI_Request_free(&collective_);
}

void MaxReduction::run(std::uint64_t* words, const std::function<void()>* while_waiting,
                       const std::uint64_t* notes) {
  if (in_site_) return run_sites(words, while_waiting);
  if (shared_ != MPI_WIN_NULL) return run_shared(words, while_waiting, notes);
  std::copy(words, words + mine_.size(), mine_.begin());
  if (collective_steps_) {
    if (persistent_) {
      MPI_Start(&collective_);
    } else if (sum_words_ > 0) {
      MPI_Iallreduce(mine_.data(), theirs_.data(), 1, mixed_type_, max_and_sum_op(), comm_,
                     &collective_);
    } else {
      MPI_Iallreduce(mine_.data(), theirs_.data(), static_cast<int>(mine_.size()), MPI_UINT64_T,
                     unsigned_max_op(), comm_, &collective_);
    }
    wait_idle(&collective_, while_waiting);
    std::copy(theirs_.begin(), theirs_.end(), words);
    return;
  }
  for (Step& step : steps_) {
    MPI_Startall(step.count, step.requests);
    wait_idle(step.count, step.requests, while_waiting);
    if (step.combine) combine(mine_.data(), theirs_.data());
  }
  std::copy(mine_.begin(), mine_.end(), words);
}

// ---- Transport -------------------------------------------------------------------------------

Transport::Transport(MPI_Comm comm, std::vector<int> pids, int rank)
    : comm_(comm), pids_(std::move(pids)), rank_(rank) {
  // Wide where the group spans nodes (every process decides alike), unless the user chose.
  const TransportChoices& chosen = transport_choices();
  int want = 0;
  if (size() > 1) {
    MPI_Comm node;
    MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node);
    int node_size = 0;
    MPI_Comm_size(node, &node_size);
    MPI_Comm_free(&node);
    want = node_size < size() ? 1 : 0;
    // Shared memory needs every rank on this node; MPI's calls, a user who asked for them.
    int local = node_size == size() ? 1 : 0;
    if (chosen.transport) {
      want = std::strcmp(chosen.transport, "two-sided") == 0 ? 1 : 0;
      if (std::strcmp(chosen.transport, "mpi-rma") == 0) local = 0;
    }
    int mine[2] = {want, 1 - local}, all[2] = {0, 0};
    MPI_Allreduce(mine, all, 2, MPI_INT, MPI_MAX, comm_);
    wide_ = all[0] != 0;
    local_ = !wide_ && all[1] == 0;
  }
}

void Transport::allocate_window(std::uint64_t bytes, int disp_unit, MPI_Info info, char** base,
                                MPI_Win* win, std::vector<char*>* peers) {
  if (!local_) {
    MPI_Win_allocate(static_cast<MPI_Aint>(bytes), disp_unit, info, comm_, base, win);
    return;
  }
  MPI_Info shared_info;
  if (info == MPI_INFO_NULL)
    MPI_Info_create(&shared_info);
  else
    MPI_Info_dup(info, &shared_info);
  MPI_Info_set(shared_info, "alloc_shared_noncontig", "true");  // each part near its process
  MPI_Win_allocate_shared(static_cast<MPI_Aint>(bytes + kLineBytes), disp_unit, shared_info, comm_,
                          base, win);
  MPI_Info_free(&shared_info);
  *peers = shared_bases<char>(*win, size());
  *base = line_aligned(*base);
}

Transport::~Transport() { close(); }

void Transport::open() {
  if (wide_) {  // no windows: messages
    open_ = true;
    return;
  }
  // Window creation is a blocking collective that would spin while a peer is late: wait idly first.
  barrier();
  // Four counters; in shared memory a cache line of their own (eight words).
  char* counters = nullptr;
  std::vector<char*> peers;
  allocate_window(8 * sizeof(std::uint64_t), sizeof(std::uint64_t), MPI_INFO_NULL, &counters,
                  &counters_, &peers);
  counter_base_ = reinterpret_cast<std::uint64_t*>(counters);
  counter_peers_.clear();
  for (char* peer : peers) counter_peers_.push_back(reinterpret_cast<std::uint64_t*>(peer));
  for (int i = 0; i < 4; ++i) counter_base_[i] = 0;
  MPI_Win_lock_all(MPI_MODE_NOCHECK, counters_);
  open_ = true;
  open_channel(0);
}

void Transport::open_channel(int channel) {
  const auto q = static_cast<std::size_t>(size());
  for (int parity = 0; parity < 2; ++parity) {
    capacity_[channel][parity].assign(q, kInitialBufferBytes);
    allocate(channel, parity, kInitialBufferBytes);
  }
  channel_open_[channel] = true;
  // Nobody may reserve in a counter or buffer before its owner has set it up.
  MPI_Win_sync(counters_);
  barrier();
}

void Transport::allocate(int channel, int parity, std::uint64_t capacity) {
  MPI_Info info;
  MPI_Info_create(&info);
  // Only MPI_Put and MPI_BYTE reach these windows.
  MPI_Info_set(info, "accumulate_ops", "same_op");
  MPI_Info_set(info, "same_disp_unit", "true");
  Buffer& buffer = buffers_[channel][parity];
  allocate_window(capacity, 1, info, &buffer.base, &buffer.win, &buffer.peers);
  MPI_Info_free(&info);
  MPI_Win_lock_all(MPI_MODE_NOCHECK, buffer.win);
}

void Transport::close() {
  for (auto& reduction : reductions_) reduction.reset();
  barrier_.reset();
  if (!open_) return;
  if (wide_) {
    open_ = false;
    return;
  }
  for (int channel = 0; channel < kChannels; ++channel) {
    if (!channel_open_[channel]) continue;
    for (Buffer& buffer : buffers_[channel]) {
      MPI_Win_unlock_all(buffer.win);
      MPI_Win_free(&buffer.win);
      buffer.base = nullptr;
    }
    channel_open_[channel] = false;
  }
  MPI_Win_unlock_all(counters_);
  MPI_Win_free(&counters_);
  open_ = false;
}

void Transport::put_chunk(const Outgoing& chunk, std::uint64_t offset) {
  Stream& stream = *chunk.stream;
  ByteBuffer& records = stream.records();  // makes sure the headroom exists
  ChunkHeader header{static_cast<std::uint32_t>(kind_),
                     static_cast<std::uint32_t>(pids_[static_cast<std::size_t>(rank_)]),
                     stream.length(), chunk.notes};
  std::memcpy(records.data(), &header, sizeof header);

  Buffer& buffer = buffers_[channel_][parity_];
  const bool self = chunk.dst == rank_;
  auto place = [&](std::uint64_t at, const char* data, std::uint64_t n) {
    if (n == 0) return;
    if (self || local_) {
      copy_for_reader(
          (local_ ? buffer.peers[static_cast<std::size_t>(chunk.dst)] : buffer.base) + at, data, n);
      return;
    }
    in_pieces(n, [&](std::uint64_t done, int piece) {
      MPI_Put(data + done, piece, MPI_BYTE, chunk.dst, static_cast<MPI_Aint>(at + done), piece,
              MPI_BYTE, buffer.win);
    });
  };
  // The buffer's bytes, with the externals (user memory) in their places.
  std::uint64_t at = offset;
  std::size_t from = 0;
  for (const Stream::External& external : stream.externals()) {
    place(at, stream.buffer() + from, external.buffer_offset - from);
    at += external.buffer_offset - from;
    place(at, external.data, external.bytes);
    at += external.padded;
    from = external.buffer_offset;
  }
  place(at, stream.buffer() + from, stream.buffer_size() - from);
  if (!self && !local_) touched_.push_back(chunk.dst);
  if (across_sites(chunk.dst)) across_sites_ += sizeof(ChunkHeader) + align8(stream.length());
}

void Transport::flush_targets() { flush_each(touched_, buffers_[channel_][parity_].win); }

void Transport::round(ChunkKind kind, const std::vector<Outgoing>& out, std::uint64_t* words,
                      int nwords, const Arrival* on_arrival) {
  if (!open_) open();
  kind_ = kind;
  channel_ = channel(kind);
  if (wide_) return round_wide(out, words, nwords, on_arrival);
  if (!channel_open_[channel_]) open_channel(channel_);
  // The caller's words and "something is late".
  const auto count = static_cast<std::size_t>(nwords) + 1;
  // Tags: each reduction its own range, so that none can take another's messages.
  std::unique_ptr<MaxReduction>& reduction = reductions_[channel_];
  if (!reduction || static_cast<std::size_t>(reduction->words()) != count)
    reduction = std::make_unique<MaxReduction>(
        comm_, static_cast<int>(count), 1000 + 100 * channel_, 0, std::vector<int>{}, local_);
  if (local_ && reduction->shared()) return round_parts(out, words, nwords, *reduction);
  const std::size_t n = out.size();
  sizes_.resize(n);
  offsets_.assign(n, 0);
  requests_.resize(n);
  // Reserve room in every receiver's buffer: one atomic fetch-and-add each.
  for (std::size_t i = 0; i < n; ++i) {
    sizes_[i] = sizeof(ChunkHeader) + align8(out[i].stream->length());
    if (local_)
      offsets_[i] =
          __atomic_fetch_add(&counter_peers_[static_cast<std::size_t>(out[i].dst)][counter_index()],
                             sizes_[i], __ATOMIC_ACQ_REL);
    else
      MPI_Rget_accumulate(&sizes_[i], 1, MPI_UINT64_T, &offsets_[i], 1, MPI_UINT64_T, out[i].dst,
                          counter_index(), 1, MPI_UINT64_T, MPI_SUM, counters_, &requests_[i]);
  }
  if (n && !local_) wait_idle(static_cast<int>(n), requests_.data());

  // Place what fits; what does not waits for the buffer to grow.
  std::vector<std::size_t> late;
  for (std::size_t i = 0; i < n; ++i) {
    if (offsets_[i] + sizes_[i] <=
        capacity_[channel_][parity_][static_cast<std::size_t>(out[i].dst)])
      put_chunk(out[i], offsets_[i]);
    else
      late.push_back(i);
  }
  flush_targets();

  words_.assign(words, words + nwords);
  words_.push_back(late.empty() ? 0 : 1);
  // Shared memory: the copies above before the reduction, what others copied here after it. A
  // reduction through shared memory orders them itself; MPI's messages need the fences.
  fenced(local_ && !reduction->shared(), [&] { reduction->run(words_.data()); });
  std::copy(words_.begin(), words_.begin() + nwords, words);
  if (words_[count - 1]) grow(late, out);

  // Metadata: chunk headers and the counter's fetch-and-add both ways, and the reduction's rounds.
  metadata_ += n * (sizeof(ChunkHeader) + 2 * sizeof(std::uint64_t));
  metadata_ += reduction->bytes_per_run();
  scan();
  metadata_ += incoming_[channel_].size() * (sizeof(ChunkHeader) + 2 * sizeof(std::uint64_t));
}

// How much of an arriving chunk round_parts asks for ahead of its reader (who prefetches on from
// there as it walks).
constexpr std::uint64_t kArrivalPrefetchBytes = 1024;

// Prefetches the lines of [at + from, at + to), up to kArrivalPrefetchBytes from at.
static void prefetch_lines(const char* at, std::uint64_t from, std::uint64_t to) {
  to = std::min(to, kArrivalPrefetchBytes);
  for (std::uint64_t line = from / 64 * 64; line < to; line += 64) __builtin_prefetch(at + line);
}

void Transport::round_parts(const std::vector<Outgoing>& out, std::uint64_t* words, int nwords,
                            MaxReduction& reduction) {
  const auto q = static_cast<std::size_t>(size());
  notes_.assign(q, 0);
  std::uint64_t part = part_bytes(), late = 0;
  for (const Outgoing& chunk : out) {
    const std::uint64_t bytes = sizeof(ChunkHeader) + align8(chunk.stream->length());
    std::uint64_t& note = notes_[static_cast<std::size_t>(chunk.dst)];
    if (note) fail("bsp_sync", "internal error: two chunks for one process in one round");
    note = bytes;
    if (bytes <= part)
      put_chunk(chunk, static_cast<std::uint64_t>(rank_) * part);
    else
      late = std::max(late, bytes);
  }
  // The last word: the largest part a chunk needed that did not fit (times two), plus one where
  // something was sent. A process that asks for none of the notes reads nothing more.
  words_.assign(words, words + nwords);
  words_.push_back(late << 1 | (out.empty() ? 0 : 1));
  reduction.run(words_.data(), nullptr, notes_.data());
  std::copy(words_.begin(), words_.begin() + nwords, words);
  const std::uint64_t agreed = words_[static_cast<std::size_t>(nwords)];
  if (agreed >> 1) {
    // Somebody's chunk did not fit: every buffer of this round grows until each part holds the
    // largest (capacities stay equal everywhere), and every chunk is placed again.
    const std::uint64_t old_capacity = capacity_[channel_][parity_][0];
    const std::uint64_t capacity =
        round_up(std::max((agreed >> 1) * q, old_capacity + old_capacity / 2), kGranule);
    Buffer old = buffers_[channel_][parity_];
    allocate(channel_, parity_, capacity);
    MPI_Win_unlock_all(old.win);
    MPI_Win_free(&old.win);
    capacity_[channel_][parity_].assign(q, capacity);
    part = part_bytes();
    for (const Outgoing& chunk : out) put_chunk(chunk, static_cast<std::uint64_t>(rank_) * part);
    fenced(true, [&] { barrier(); });
  }
  std::vector<Incoming>& incoming = incoming_[channel_];
  incoming.clear();
  if (agreed & 1) {
    const char* base = buffers_[channel_][parity_].base;
    // Each part's lines on their way while the notes are read (they come from other cores): as
    // many as that sender's last chunk took (programs repeat their supersteps), at least the
    // first, at most kArrivalPrefetchBytes (the walk prefetches on from there); then the rest of
    // those lines once a note says more came. Otherwise the walk would ask for its second line
    // only after the first arrived: one more core-to-core transfer time in every superstep that
    // moves data, which is most of what it costs beyond an empty one.
    std::vector<std::uint64_t>& guessed = last_chunk_bytes_[channel_];
    guessed.resize(q, 0);
    for (std::size_t r = 0; r < q; ++r)
      prefetch_lines(base + r * part, 0, std::max<std::uint64_t>(guessed[r], 1));
    for (int r = 0; r < size(); ++r) {  // group rank order is pid order
      const std::uint64_t bytes = reduction.note_from(r);
      const char* at = base + static_cast<std::uint64_t>(r) * part;
      std::uint64_t& guess = guessed[static_cast<std::size_t>(r)];
      if (bytes > guess) prefetch_lines(at, std::max<std::uint64_t>(guess, 1), bytes);
      guess = bytes;
      if (!bytes) continue;
      ChunkHeader header;
      if (bytes < sizeof header || bytes > part ||
          (std::memcpy(&header, at, sizeof header),
           header.kind != static_cast<std::uint32_t>(kind_)) ||
          sizeof header + header.bytes != bytes)
        fail("bsp_sync", "internal error: damaged chunk from group rank %d in the receive buffer",
             r);
      incoming.push_back(
          {static_cast<int>(header.src), kind_, at + sizeof header, header.bytes, header.notes});
    }
  }
  // Metadata: chunk headers and the notes of their sizes both ways, and the reduction's words.
  metadata_ +=
      out.size() * (sizeof(ChunkHeader) + sizeof(std::uint64_t)) + reduction.bytes_per_run();
  metadata_ += incoming.size() * (sizeof(ChunkHeader) + sizeof(std::uint64_t));
}

void Transport::grow(const std::vector<std::size_t>& late, const std::vector<Outgoing>& out) {
  MPI_Win_sync(counters_);
  const std::uint64_t needed = counter_base_[counter_index()];
  const auto me = static_cast<std::size_t>(rank_);
  const std::uint64_t old_capacity = capacity_[channel_][parity_][me];
  std::uint64_t capacity = old_capacity;
  if (needed > capacity) capacity = round_up(std::max(needed, capacity + capacity / 2), kGranule);
  std::vector<std::uint64_t> capacities(static_cast<std::size_t>(size()));
  MPI_Allgather(&capacity, 1, MPI_UINT64_T, capacities.data(), 1, MPI_UINT64_T, comm_);
  // Every process needs a buffer at least this large, so somebody grows: a new window for all.
  Buffer old = buffers_[channel_][parity_];
  allocate(channel_, parity_, capacity);
  MPI_Win_sync(old.win);
  std::memcpy(buffers_[channel_][parity_].base, old.base, std::min(needed, old_capacity));
  MPI_Win_unlock_all(old.win);
  MPI_Win_free(&old.win);
  capacity_[channel_][parity_] = std::move(capacities);
  MPI_Win_sync(buffers_[channel_][parity_].win);
  barrier();  // every buffer holds its early chunks before the late ones arrive
  for (std::size_t i : late) put_chunk(out[i], offsets_[i]);
  flush_targets();
  fenced(local_, [&] { barrier(); });
}

void Transport::scan() {
  // The counter is only ever changed atomically (by other processes' fetch-and-adds through shared
  // memory, or by this process's own MPI progress): an acquire load sees every reservation of the
  // round. The buffer needs MPI's memory barrier only when something arrived.
  const std::uint64_t end = __atomic_load_n(&counter_base_[counter_index()], __ATOMIC_ACQUIRE);
  std::vector<Incoming>& incoming = incoming_[channel_];
  incoming.clear();
  if (end == 0) return;
  if (!local_) MPI_Win_sync(buffers_[channel_][parity_].win);
  const char* base = buffers_[channel_][parity_].base;
  std::uint64_t at = 0;
  while (at < end) {
    ChunkHeader header;
    if (end - at < sizeof header) break;
    std::memcpy(&header, base + at, sizeof header);
    const auto kind = static_cast<ChunkKind>(header.kind);
    if (kind != kind_ || header.bytes % 8 || header.bytes > end - at - sizeof header)
      fail("bsp_sync", "internal error: damaged chunk in the receive buffer at offset %llu",
           static_cast<unsigned long long>(at));
    incoming.push_back({static_cast<int>(header.src), kind, base + at + sizeof header,
                        header.bytes, header.notes});
    at += sizeof header + header.bytes;
  }
  if (at != end) fail("bsp_sync", "internal error: receive buffer ends inside a chunk");
  std::sort(incoming.begin(), incoming.end(),
            [](const Incoming& a, const Incoming& b) { return a.src < b.src; });
}

// ---- The wide transport: chunks as messages, the round ended by counting -----------------------

namespace {
constexpr int kWideTag = 3000;  // + 2 * channel + parity: consecutive syncs never share a tag
}  // namespace

int Transport::wide_tag(int channel) const { return kWideTag + 2 * channel + parity_; }

void Transport::send_wide(ChunkKind kind, const Outgoing& chunk) {
  WideChannel& wide = wide_channels_[channel(kind)];
  Stream& stream = *chunk.stream;
  ByteBuffer& records = stream.records();  // makes sure the headroom exists
  const ChunkHeader header{static_cast<std::uint32_t>(kind),
                           static_cast<std::uint32_t>(pids_[static_cast<std::size_t>(rank_)]),
                           stream.length(), chunk.notes};
  std::memcpy(records.data(), &header, sizeof header);
  const char* bytes = records.data();
  std::size_t n = records.size();
  if (!stream.externals().empty()) {  // user memory (bsp_hpsend) goes into one message with it
    wide_laid_out_.emplace_back();
    ByteBuffer& laid = wide_laid_out_.back();
    std::size_t from = 0;
    for (const Stream::External& external : stream.externals()) {
      laid.append(records.data() + from, external.buffer_offset - from);
      laid.append(external.data, external.bytes);
      std::memset(laid.extend(external.padded - external.bytes), 0,
                  external.padded - external.bytes);
      from = external.buffer_offset;
    }
    laid.append(records.data() + from, records.size() - from);
    bytes = laid.data();
    n = laid.size();
  }
  if (n > kMaxTransferBytes)
    fail("bsp_sync",
         "this superstep sends %llu bytes to process %d in one piece; between nodes one superstep "
         "sends at most 1 GiB to one process",
         static_cast<unsigned long long>(n), pids_[static_cast<std::size_t>(chunk.dst)]);
  if (chunk.dst == rank_) {  // our own: straight into a receive buffer, no message
    std::vector<ByteBuffer>& chunks = wide.chunks[parity_];
    if (wide.used == chunks.size()) chunks.emplace_back();
    ByteBuffer& into = chunks[wide.used++];
    into.clear();
    into.append(bytes, n);
    return;
  }
  if (across_sites(chunk.dst)) across_sites_ += n;
  wide.sends.push_back(MPI_REQUEST_NULL);
  MPI_Isend(bytes, static_cast<int>(n), MPI_BYTE, chunk.dst, wide_tag(channel(kind)), comm_,
            &wide.sends.back());
}

void Transport::reply(const Outgoing& chunk) {
  if (!wide_) fail("bsp_sync", "internal error: an early reply on a one-sided transport");
  send_wide(ChunkKind::Reply, chunk);
}

Transport::Incoming Transport::wide_incoming(int channel, const ByteBuffer& chunk) const {
  ChunkHeader header;
  if (chunk.size() < sizeof header) fail("bsp_sync", "internal error: a chunk without a header");
  std::memcpy(&header, chunk.data(), sizeof header);
  const auto kind = static_cast<ChunkKind>(header.kind);
  if ((kind != ChunkKind::Stream && kind != ChunkKind::Reply) || Transport::channel(kind) != channel ||
      header.bytes % 8 || header.bytes != chunk.size() - sizeof header)
    fail("bsp_sync", "internal error: damaged chunk from process %u", header.src);
  return {static_cast<int>(header.src), kind, chunk.data() + sizeof header, header.bytes,
          header.notes};
}

void Transport::take_in_wide(int channel, const Arrival* on_arrival) {
  WideChannel& wide = wide_channels_[channel];
  std::vector<ByteBuffer>& chunks = wide.chunks[parity_];
  for (;;) {
    int arrived = 0;
    MPI_Message message;
    MPI_Status status;
    MPI_Improbe(MPI_ANY_SOURCE, wide_tag(channel), comm_, &arrived, &message, &status);
    if (!arrived) break;
    int n = 0;
    MPI_Get_count(&status, MPI_BYTE, &n);
    if (wide.used == chunks.size()) chunks.emplace_back();  // moving a ByteBuffer keeps its bytes
    ByteBuffer& into = chunks[wide.used];
    wide.receiving.push_back(wide.used++);
    into.clear();
    char* at = into.extend(static_cast<std::size_t>(n));
    wide.receives.push_back(MPI_REQUEST_NULL);
    MPI_Imrecv(at, n, MPI_BYTE, &message, &wide.receives.back());
  }
  if (wide.receives.empty()) return;
  int done = 0;
  // Completed requests become MPI_REQUEST_NULL: each is counted, and shown, once.
  std::vector<int> indices(wide.receives.size());
  MPI_Testsome(static_cast<int>(wide.receives.size()), wide.receives.data(), &done,
               indices.data(), MPI_STATUSES_IGNORE);
  if (done == MPI_UNDEFINED) return;
  wide.received += static_cast<std::uint64_t>(done);
  if (on_arrival)
    for (int i = 0; i < done; ++i)
      (*on_arrival)(wide_incoming(
          channel, chunks[wide.receiving[static_cast<std::size_t>(indices[static_cast<std::size_t>(i)])]]));
}

void Transport::round_wide(const std::vector<Outgoing>& out, std::uint64_t* words, int nwords,
                           const Arrival* on_arrival) {
  // Channels this round carries: its own, and with early replies the reply channel too.
  const int last = on_arrival ? 1 : channel_;
  for (int c = channel_; c <= last; ++c) {
    WideChannel& wide = wide_channels_[c];
    wide.received = 0;
    wide.sends.clear();
    wide.receives.clear();
    wide.receiving.clear();
  }
  WideChannel& own = wide_channels_[channel_];
  const std::size_t first = own.used;
  // A small group without early replies also sums, per process, the chunks it is sent (one word
  // each): every process then knows after the first reduction how many chunks to wait for, and
  // no second reduction confirms (a wide-area round trip saved where the first one overtook the
  // data). Replies are sent as requests arrive, so their number is not known ahead: with them,
  // and in larger groups (a word per process in every reduction), the sums must agree instead.
  const std::size_t group = pids_.size();
  const bool exact = on_arrival == nullptr && group <= kMaxExactCountProcesses;
  sent_to_.assign(exact ? group : 0, 0);
  for (const Outgoing& chunk : out) {
    send_wide(kind_, chunk);
    if (exact && chunk.dst != rank_) ++sent_to_[static_cast<std::size_t>(chunk.dst)];
  }
  if (on_arrival)  // ours, which no message brings
    for (std::size_t i = first; i < own.used; ++i)
      (*on_arrival)(wide_incoming(channel_, own.chunks[parity_][i]));

  // The caller's words (MAX), then per channel the chunks sent and received (summed): once the
  // sums agree, every chunk of the round has arrived. The first reduction travels with the data;
  // where it overtook a chunk, another follows (or, exact, this process waits for its count).
  const int channels = last - channel_ + 1;
  const auto count = static_cast<std::size_t>(nwords + 2 * channels) + sent_to_.size();
  std::unique_ptr<MaxReduction>& reduction = reductions_[channel_];
  if (!reduction || static_cast<std::size_t>(reduction->words()) != count)
    reduction = std::make_unique<MaxReduction>(
        comm_, static_cast<int>(count), 1000 + 100 * channel_,
        2 * channels + static_cast<int>(sent_to_.size()), sites_);
  const auto take_in = [this, on_arrival, last] {
    for (int c = channel_; c <= last; ++c) take_in_wide(c, c == channel_ ? on_arrival : nullptr);
  };
  const std::function<void()> meanwhile = take_in;
  for (;;) {
    take_in();
    words_.assign(words, words + nwords);
    // Sends counted after the receives: a reply sent for a request just received counts now.
    for (int c = channel_; c <= last; ++c) {
      words_.push_back(wide_channels_[c].sends.size());
      words_.push_back(wide_channels_[c].received);
    }
    words_.insert(words_.end(), sent_to_.begin(), sent_to_.end());
    reduction->run(words_.data(), &meanwhile);
    metadata_ += reduction->bytes_per_run();
    if (exact) {
      // Every chunk sent to this process was counted before the reduction: wait for them all.
      const std::uint64_t expected = words_[static_cast<std::size_t>(nwords + 2 * channels + rank_)];
      IdlePacer pacer;
      for (;;) {
        const std::uint64_t before = own.received;
        take_in();
        if (own.received >= expected) break;
        if (own.received != before) pacer.reset();
        pacer.idle();
      }
      break;
    }
    bool all_arrived = true;
    for (int c = 0; c < channels; ++c)
      all_arrived = all_arrived && words_[static_cast<std::size_t>(nwords + 2 * c)] ==
                                       words_[static_cast<std::size_t>(nwords + 2 * c + 1)];
    if (all_arrived) break;
  }
  std::copy(words_.begin(), words_.begin() + nwords, words);
  for (int c = channel_; c <= last; ++c) {
    WideChannel& wide = wide_channels_[c];
    // Every chunk was received, so every send is matched; its completion is at hand.
    if (!wide.sends.empty()) wait_idle(static_cast<int>(wide.sends.size()), wide.sends.data());
    std::vector<Incoming>& incoming = incoming_[c];
    incoming.clear();
    for (std::size_t i = 0; i < wide.used; ++i)
      incoming.push_back(wide_incoming(c, wide.chunks[parity_][i]));
    std::sort(incoming.begin(), incoming.end(),
              [](const Incoming& a, const Incoming& b) { return a.src < b.src; });
    metadata_ += (wide.sends.size() + incoming.size()) * sizeof(ChunkHeader);
  }
  wide_laid_out_.clear();
}

void Transport::barrier() {
  if (!barrier_)
    barrier_ =
        std::make_unique<MaxReduction>(comm_, 1, 900, 0, wide_ ? sites_ : std::vector<int>{});
  std::uint64_t nothing = 0;
  barrier_->run(&nothing);
}

void Transport::end_sync() {
  if (!open_) return;
  if (wide_) {
    parity_ ^= 1;
    for (WideChannel& wide : wide_channels_) wide.used = 0;  // the new parity's chunks are read
    metadata_ = 0;
    across_sites_ = 0;
    return;
  }
  // Nobody reserves in these buffers again before we have entered the next sync (see the top).
  // Atomic stores, as every other change of the counters; the next sync's reduction orders them
  // before anybody's next reservation here.
  __atomic_store_n(&counter_base_[parity_], 0, __ATOMIC_RELEASE);
  __atomic_store_n(&counter_base_[2 + parity_], 0, __ATOMIC_RELEASE);
  parity_ ^= 1;
  metadata_ = 0;
  across_sites_ = 0;
}

// ---- Mailbox ---------------------------------------------------------------------------------

void Mailbox::open(MPI_Comm comm, int pid, int nprocs) {
  pid_ = pid;
  nprocs_ = nprocs;
  MPI_Comm node;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, pid, MPI_INFO_NULL, &node);
  int node_size = 0;
  MPI_Comm_size(node, &node_size);
  MPI_Comm_free(&node);
  processes_on_this_node(node_size);
  // Only when every process shares this node, and only while the regions stay small: 8 MiB in all,
  // 64 KiB to 1 MiB per peer (so none beyond 128 processes; large puts then go direct). Larger
  // regions come with use (grow).
  std::uint64_t region = (std::uint64_t{8} << 20) / static_cast<std::uint64_t>(nprocs);
  if (node_size != nprocs || nprocs == 1 || region < std::uint64_t{64} * 1024) return;
  comm_ = comm;
  region_bytes_ = std::min<std::uint64_t>(region, std::uint64_t{1} << 20) / 4096 * 4096;
  allocate();
}

void Mailbox::allocate() {
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "alloc_shared_noncontig", "true");  // each process's part near its core
  // A failed allocation is said in bspg's words, not the MPI's (affordable() makes it rare).
  MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  const int rc = MPI_Win_allocate_shared(
      static_cast<MPI_Aint>(region_bytes_ * static_cast<std::uint64_t>(nprocs_) + kLineBytes), 1,
      info, comm_, &base_, &win_);
  MPI_Comm_set_errhandler(comm_, MPI_ERRORS_ARE_FATAL);
  MPI_Info_free(&info);
  if (rc != MPI_SUCCESS)
    fail("bsp_sync",
         "could not allocate %llu MiB of shared memory for the regions of large puts (the MPI "
         "says error %d); the shared-memory file system (/dev/shm) may be full",
         static_cast<unsigned long long>(region_bytes_ * static_cast<std::uint64_t>(nprocs_) >> 20),
         rc);
  bases_ = shared_bases<char>(win_, nprocs_);
  base_ = line_aligned(base_);
  MPI_Win_lock_all(MPI_MODE_NOCHECK, win_);
}

std::uint64_t Mailbox::affordable() const {
  if (!available()) return 0;
  const std::uint64_t regions = static_cast<std::uint64_t>(nprocs_) * nprocs_;
  std::uint64_t all = std::numeric_limits<std::uint64_t>::max();
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0)
    all = static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page) / 4;
  struct statvfs shm;
  if (statvfs("/dev/shm", &shm) == 0)
    all = std::min<std::uint64_t>(all, static_cast<std::uint64_t>(shm.f_bavail) * shm.f_frsize / 2);
  return std::min(all / regions, kLargestRegion) / 4096 * 4096;
}

void Mailbox::grow(std::uint64_t region_bytes) {
  if (!available() || region_bytes <= region_bytes_) return;
  MPI_Win_unlock_all(win_);
  MPI_Win_free(&win_);
  region_bytes_ = (region_bytes + 4095) / 4096 * 4096;
  allocate();
}

void Mailbox::close() {
  if (win_ == MPI_WIN_NULL) return;
  MPI_Win_unlock_all(win_);
  MPI_Win_free(&win_);
  base_ = nullptr;
  bases_.clear();
}

void Mailbox::write(int target, std::uint64_t offset, const void* header, std::size_t header_bytes,
                    const void* payload, std::size_t payload_bytes) {
  char* at = base_ + static_cast<std::uint64_t>(target) * region_bytes_ + offset;
  std::memcpy(at, header, header_bytes);
  if (payload_bytes >= kChosenCopyBytes)
    writes_.copy(at + header_bytes, payload, payload_bytes);
  else
    std::memcpy(at + header_bytes, payload, payload_bytes);
}

void Mailbox::publish() {
  if (available()) MPI_Win_sync(win_);
}

void Mailbox::acquire() {
  if (available()) MPI_Win_sync(win_);
}

// ---- DirectWindow ------------------------------------------------------------------------------

void DirectWindow::open(MPI_Comm comm, int pid) {
  pid_ = pid;
  MPI_Win_create_dynamic(MPI_INFO_NULL, comm, &win_);
  MPI_Win_lock_all(MPI_MODE_NOCHECK, win_);
}

void DirectWindow::close() {
  if (win_ == MPI_WIN_NULL) return;
  MPI_Win_unlock_all(win_);
  MPI_Win_free(&win_);
}

void DirectWindow::attach_range(char* begin, char* end) {
  MPI_Win_attach(win_, begin, static_cast<MPI_Aint>(end - begin));
  attached_.emplace(begin, end);
}

void DirectWindow::attach(void* base, std::uint64_t bytes) {
  if (!base || !bytes) return;
  char* begin = static_cast<char*>(base);
  char* end = begin + bytes;
  areas_.emplace(begin, bytes);
  // Whatever attached range overlaps the new area joins it.
  auto it = attached_.upper_bound(begin);
  if (it != attached_.begin() && std::prev(it)->second > begin) --it;
  while (it != attached_.end() && it->first < end) {
    begin = std::min(begin, it->first);
    end = std::max(end, it->second);
    MPI_Win_detach(win_, it->first);
    it = attached_.erase(it);
  }
  attach_range(begin, end);
}

void DirectWindow::detach(void* base, std::uint64_t bytes) {
  if (!base || !bytes) return;  // never attached
  auto [area, last] = areas_.equal_range(static_cast<char*>(base));
  while (area != last && area->second != bytes) ++area;
  if (area == last) return;
  areas_.erase(area);
  // The attached range that held it is replaced by the unions of the areas left in it.
  auto range = std::prev(attached_.upper_bound(static_cast<char*>(base)));
  char* const range_end = range->second;
  MPI_Win_detach(win_, range->first);
  auto next = areas_.lower_bound(range->first);
  attached_.erase(range);
  char *begin = nullptr, *end = nullptr;
  for (; next != areas_.end() && next->first < range_end; ++next) {
    if (begin && next->first >= end) {
      attach_range(begin, end);
      begin = nullptr;
    }
    if (!begin) begin = next->first, end = next->first;
    end = std::max(end, next->first + next->second);
  }
  if (begin) attach_range(begin, end);
}

void DirectWindow::put(int target, std::uint64_t remote, const void* src, std::uint64_t n) {
  const char* from = static_cast<const char*>(src);
  if (target == pid_) {
    std::memcpy(reinterpret_cast<char*>(static_cast<std::uintptr_t>(remote)), from, n);
    return;
  }
  in_pieces(n, [&](std::uint64_t done, int piece) {
    MPI_Put(from + done, piece, MPI_BYTE, target, static_cast<MPI_Aint>(remote + done), piece,
            MPI_BYTE, win_);
  });
  targets_.push_back(target);
}

void DirectWindow::get(int target, std::uint64_t remote, void* dst, std::uint64_t n) {
  char* into = static_cast<char*>(dst);
  if (target == pid_) {
    std::memcpy(into, reinterpret_cast<const char*>(static_cast<std::uintptr_t>(remote)), n);
    return;
  }
  in_pieces(n, [&](std::uint64_t done, int piece) {
    gets_.emplace_back();
    MPI_Rget(into + done, piece, MPI_BYTE, target, static_cast<MPI_Aint>(remote + done), piece,
             MPI_BYTE, win_, &gets_.back());
  });
}

void DirectWindow::complete() {
  if (!gets_.empty()) wait_idle(static_cast<int>(gets_.size()), gets_.data());
  gets_.clear();
  flush_each(targets_, win_);
}

}  // namespace bspg
