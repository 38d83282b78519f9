// registry.hpp - the registration table. The n-th live registration is the same slot on every
// process; each slot knows every process's address and size for it, so a put or get is checked
// against the remote process's size before anything is sent. No MPI in here.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace bspg {

class Registry {
 public:
  explicit Registry(int nprocs = 1) : nprocs_(nprocs) {}

  // --- calls made between syncs (local) ---
  void push(const void* address, std::int64_t size) { pending_pushes_.push_back({address, size}); }
  enum class PopResult { Ok, NotRegistered, OnlyPending };
  // Marks the most recent live registration of address, not already being popped, for removal.
  PopResult pop(const void* address);

  // Slot of the most recent live registration of address, or -1.
  int lookup(const void* address) const {
    if (address == cached_address_ && cached_slot_ >= 0) return cached_slot_;
    auto it = by_address_.find(address);
    if (it == by_address_.end() || it->second.empty()) return -1;
    cached_address_ = address;
    cached_slot_ = it->second.back();
    return cached_slot_;
  }
  bool is_pending_push(const void* address) const;

  char* address(int slot, int pid) const { return addresses_[index(slot, pid)]; }
  std::int64_t size(int slot, int pid) const { return sizes_[index(slot, pid)]; }

  // --- what the sync needs ---
  std::size_t pending_push_count() const { return pending_pushes_.size(); }
  const std::vector<int>& pending_pops() const { return pending_pops_; }
  // Order-sensitive digest of the pending pops, so processes can compare them cheaply.
  std::uint64_t pending_pop_digest() const;
  // This process's pending pushes as (address, size) pairs, for the all-gather.
  std::vector<std::uint64_t> pending_push_words() const;

  // Applies the pops, then the pushes; `gathered` holds every process's pending_push_words()
  // in pid order (all of the same length). Slots freed by pops are reused lowest first, the same
  // way on every process.
  void apply(const std::vector<std::uint64_t>& gathered);

  std::size_t live_slots() const;

 private:
  struct Pending {
    const void* address;
    std::int64_t size;
  };
  std::size_t index(int slot, int pid) const {
    return static_cast<std::size_t>(slot) * static_cast<std::size_t>(nprocs_) +
           static_cast<std::size_t>(pid);
  }
  int allocate_slot();

  int nprocs_;
  std::vector<char*> addresses_;      // [slot * nprocs + pid]
  std::vector<std::int64_t> sizes_;   // [slot * nprocs + pid]; -1 for a free slot
  std::vector<const void*> owner_;    // [slot]: this process's address for it
  std::vector<int> free_slots_;       // kept sorted descending; back() is the lowest
  std::unordered_map<const void*, std::vector<int>> by_address_;  // stack of slots per address
  std::vector<Pending> pending_pushes_;
  std::vector<int> pending_pops_;
  mutable const void* cached_address_ = nullptr;
  mutable int cached_slot_ = -1;
};

}  // namespace bspg
