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

#include "errors.hpp"

namespace bspg {
namespace {

constexpr std::uint64_t kInitialBufferBytes = std::uint64_t{64} * 1024;
constexpr std::uint64_t kGranule = std::uint64_t{64} * 1024;
constexpr std::uint64_t kMaxTransferBytes = std::uint64_t{1} << 30;  // MPI counts are int

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

void wait_idle(int n, MPI_Request* requests) {
  // A sync whose peers are all there ends within a few polls: no clock for those (reading it
  // costs about as much as a poll), and they count as waits of no length.
  for (int polls = 0; polls < 256; ++polls) {
    if (poll(n, requests)) {
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
      if (poll(n, requests)) return finished();
  } while (Clock::now() < spin_until);
  long pause = kFirstPauseNs;
  for (;;) {
    timespec sleep_for{0, pause};
    nanosleep(&sleep_for, nullptr);
    if (poll(n, requests)) return finished();
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

MaxReduction::MaxReduction(MPI_Comm comm, int words, int tag) : comm_(comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  mine_.assign(static_cast<std::size_t>(words), 0);
  theirs_.assign(static_cast<std::size_t>(words), 0);
  int reach = 1;  // the largest power of two not above size
  while (reach * 2 <= size) reach *= 2;
  if (size > kMaxStepProcesses) {
    collective_steps_ = true;
    for (int r = 1; r < size; r *= 2) ++messages_;  // recursive doubling, as libnbc is told to use
    // Chosen when bspg is configured (cmake/BspgMpi.cmake): MPI-4's persistent collective, Open
    // MPI 4's extension of it, or (neither) a non-blocking MPI_Iallreduce on every run.
#if defined(BSPG_HAVE_MPI_ALLREDUCE_INIT)
    MPI_Allreduce_init(mine_.data(), theirs_.data(), words, MPI_UINT64_T, unsigned_max_op(), comm,
                       MPI_INFO_NULL, &collective_);
    persistent_ = true;
#elif defined(BSPG_HAVE_MPIX_ALLREDUCE_INIT)
    MPIX_Allreduce_init(mine_.data(), theirs_.data(), words, MPI_UINT64_T, unsigned_max_op(), comm,
                        MPI_INFO_NULL, &collective_);
    persistent_ = true;
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

MaxReduction::~MaxReduction() {
  for (Step& step : steps_)
    for (int i = 0; i < step.count; ++i) MPI_Request_free(&step.requests[i]);
  if (persistent_) MPI_Request_free(&collective_);
}

void MaxReduction::run(std::uint64_t* words) {
  std::copy(words, words + mine_.size(), mine_.begin());
  if (collective_steps_) {
    if (persistent_) {
      MPI_Start(&collective_);
    } else {
      MPI_Iallreduce(mine_.data(), theirs_.data(), static_cast<int>(mine_.size()), MPI_UINT64_T,
                     unsigned_max_op(), comm_, &collective_);
    }
    wait_idle(&collective_);
    std::copy(theirs_.begin(), theirs_.end(), words);
    return;
  }
  for (Step& step : steps_) {
    MPI_Startall(step.count, step.requests);
    wait_idle(step.count, step.requests);
    if (step.combine)
      for (std::size_t i = 0; i < mine_.size(); ++i) mine_[i] = std::max(mine_[i], theirs_[i]);
  }
  std::copy(mine_.begin(), mine_.end(), words);
}

// ---- Transport -------------------------------------------------------------------------------

Transport::Transport(MPI_Comm comm, std::vector<int> pids, int rank)
    : comm_(comm), pids_(std::move(pids)), rank_(rank) {}

Transport::~Transport() { close(); }

void Transport::open() {
  // Window creation is a blocking collective that would spin while a peer is late: wait idly first.
  barrier();
  MPI_Win_allocate(4 * sizeof(std::uint64_t), sizeof(std::uint64_t), MPI_INFO_NULL, comm_,
                   &counter_base_, &counters_);
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
  MPI_Win_allocate(static_cast<MPI_Aint>(capacity), 1, info, comm_, &buffer.base, &buffer.win);
  MPI_Info_free(&info);
  MPI_Win_lock_all(MPI_MODE_NOCHECK, buffer.win);
}

void Transport::close() {
  for (auto& reduction : reductions_) reduction.reset();
  barrier_.reset();
  if (!open_) return;
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
    if (self) {
      std::memcpy(buffer.base + at, data, n);
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
  if (!self) touched_.push_back(chunk.dst);
}

void Transport::flush_targets() { flush_each(touched_, buffers_[channel_][parity_].win); }

void Transport::round(ChunkKind kind, const std::vector<Outgoing>& out, std::uint64_t* words,
                      int nwords) {
  if (!open_) open();
  kind_ = kind;
  channel_ = channel(kind);
  if (!channel_open_[channel_]) open_channel(channel_);
  const std::size_t n = out.size();
  sizes_.resize(n);
  offsets_.assign(n, 0);
  requests_.resize(n);
  // Reserve room in every receiver's buffer: one atomic fetch-and-add each.
  for (std::size_t i = 0; i < n; ++i) {
    sizes_[i] = sizeof(ChunkHeader) + align8(out[i].stream->length());
    MPI_Rget_accumulate(&sizes_[i], 1, MPI_UINT64_T, &offsets_[i], 1, MPI_UINT64_T, out[i].dst,
                        counter_index(), 1, MPI_UINT64_T, MPI_SUM, counters_, &requests_[i]);
  }
  if (n) wait_idle(static_cast<int>(n), requests_.data());

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

  // The caller's words and "something is late".
  const auto count = static_cast<std::size_t>(nwords) + 1;
  // Tags: each reduction its own range, so that none can take another's messages.
  std::unique_ptr<MaxReduction>& reduction = reductions_[channel_];
  if (!reduction || static_cast<std::size_t>(reduction->words()) != count)
    reduction =
        std::make_unique<MaxReduction>(comm_, static_cast<int>(count), 1000 + 100 * channel_);
  words_.assign(words, words + nwords);
  words_.push_back(late.empty() ? 0 : 1);
  reduction->run(words_.data());
  std::copy(words_.begin(), words_.begin() + nwords, words);
  if (words_[count - 1]) grow(late, out);

  // Metadata: chunk headers and the counter's fetch-and-add both ways, and the reduction's rounds.
  metadata_ += n * (sizeof(ChunkHeader) + 2 * sizeof(std::uint64_t));
  metadata_ +=
      static_cast<std::uint64_t>(reduction->messages_sent()) * 2 * count * sizeof(std::uint64_t);
  scan();
  metadata_ += incoming_[channel_].size() * (sizeof(ChunkHeader) + 2 * sizeof(std::uint64_t));
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
  barrier();
}

void Transport::scan() {
  // The counter is only ever changed atomically (by other processes' fetch-and-adds through shared
  // memory, or by this process's own MPI progress): an acquire load sees every reservation of the
  // round. The buffer needs MPI's memory barrier only when something arrived.
  const std::uint64_t end = __atomic_load_n(&counter_base_[counter_index()], __ATOMIC_ACQUIRE);
  std::vector<Incoming>& incoming = incoming_[channel_];
  incoming.clear();
  if (end == 0) return;
  MPI_Win_sync(buffers_[channel_][parity_].win);
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
    incoming.push_back(
        {static_cast<int>(header.src), kind, at + sizeof header, header.bytes, header.notes});
    at += sizeof header + header.bytes;
  }
  if (at != end) fail("bsp_sync", "internal error: receive buffer ends inside a chunk");
  std::sort(incoming.begin(), incoming.end(),
            [](const Incoming& a, const Incoming& b) { return a.src < b.src; });
}

void Transport::barrier() {
  if (!barrier_) barrier_ = std::make_unique<MaxReduction>(comm_, 1, 900);
  std::uint64_t nothing = 0;
  barrier_->run(&nothing);
}

void Transport::end_sync() {
  if (!open_) return;
  // Nobody reserves in these buffers again before we have entered the next sync (see the top).
  // Atomic stores, as every other change of the counters; the next sync's reduction orders them
  // before anybody's next reservation here.
  __atomic_store_n(&counter_base_[parity_], 0, __ATOMIC_RELEASE);
  __atomic_store_n(&counter_base_[2 + parity_], 0, __ATOMIC_RELEASE);
  parity_ ^= 1;
  metadata_ = 0;
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
      static_cast<MPI_Aint>(region_bytes_ * static_cast<std::uint64_t>(nprocs_)), 1, info, comm_,
      &base_, &win_);
  MPI_Comm_set_errhandler(comm_, MPI_ERRORS_ARE_FATAL);
  MPI_Info_free(&info);
  if (rc != MPI_SUCCESS)
    fail("bsp_sync",
         "could not allocate %llu MiB of shared memory for the regions of large puts (the MPI "
         "says error %d); the shared-memory file system (/dev/shm) may be full",
         static_cast<unsigned long long>(region_bytes_ * static_cast<std::uint64_t>(nprocs_) >> 20),
         rc);
  bases_.resize(static_cast<std::size_t>(nprocs_));
  for (int q = 0; q < nprocs_; ++q) {
    MPI_Aint size = 0;
    int unit = 0;
    MPI_Win_shared_query(win_, q, &size, &unit, &bases_[static_cast<std::size_t>(q)]);
  }
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
