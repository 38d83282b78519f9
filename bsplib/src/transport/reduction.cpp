// reduction.cpp - reductions over a group: unsigned MAX and MIN of words, and MaxReduction.
#include <mpi.h>  // before mpi-ext.h
#include <unistd.h>

#if !defined(BSPG_HAVE_MPI_ALLREDUCE_INIT) && defined(BSPG_HAVE_MPIX_ALLREDUCE_INIT)
#include <mpi-ext.h>  // Open MPI 4's extensions: persistent collectives (MPIX_Allreduce_init)
#endif

#include <algorithm>

#include "lost_peers.hpp"
#include "transport.hpp"
#include "transport_internal.hpp"

namespace bspg {
using namespace transport_internal;  // the transport's own helpers (transport_internal.hpp)

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
  lost_peers::watch(node);
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
  lost_peers::watch(site_comm_);
  int site_rank = 0;
  MPI_Comm_rank(site_comm_, &site_rank);
  MPI_Comm_split(comm_, site_rank == 0 ? 0 : MPI_UNDEFINED, site, &leaders_comm_);
  lost_peers::watch(leaders_comm_);
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

}  // namespace bspg
