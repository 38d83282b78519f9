// transport.cpp - Transport: how its chunks move (user's choice), its windows, barrier, end_sync.
#include "transport.hpp"

#include <cstring>

#include "errors.hpp"
#include "lost_peers.hpp"
#include "transport_internal.hpp"

namespace bspg {
namespace transport_internal {

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
    if (const char* chosen = std::getenv("BSPG_LEND_PUTS"); chosen && *chosen) {
      c.lend_puts = nullptr;
      for (const char* way : {"auto", "on", "off"})
        if (std::strcmp(chosen, way) == 0) c.lend_puts = way;
      if (!c.lend_puts)
        fail("bsp_begin", "BSPG_LEND_PUTS='%s': choose auto, on or off (or leave it unset)",
             chosen);
    }
    return c;
  }();
  return choices;
}

}  // namespace transport_internal

using namespace transport_internal;  // the transport's own helpers (transport_internal.hpp)

namespace {

constexpr std::uint64_t kInitialBufferBytes = std::uint64_t{64} * 1024;

}  // namespace

// ---- Transport -------------------------------------------------------------------------------

Transport::Transport(MPI_Comm comm, std::vector<int> pids, int rank)
    : comm_(comm), pids_(std::move(pids)), rank_(rank) {
  // Wide where the group spans nodes (every process decides alike), unless the user chose.
  const TransportChoices& chosen = transport_choices();
  int want = 0;
  if (size() > 1) {
    MPI_Comm node;
    MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node);
    lost_peers::watch(node);
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

}  // namespace bspg
