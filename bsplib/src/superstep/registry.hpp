// registry.hpp - the registration table. The n-th live registration is the same slot on every
// process; each slot knows every process's address and size for it, so a put or get is checked
// against the remote process's size before anything is sent. No MPI in here.
//
// bsp_push_reg and bsp_pop_reg are collective and take effect at the next bsp_sync, in call order:
// an area may be pushed and popped in the same superstep. A pop names the most recent registration
// of its address that is not already being popped (pending pushes of this superstep first). A
// process that registered NULL several times (it has no such array) cannot tell its NULL
// registrations apart, so its pop of NULL is "flexible": it takes whichever NULL registration the
// other processes pop. Slots freed by pops are reused lowest first, identically everywhere.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace bspg {

class Registry {
 public:
  explicit Registry(int nprocs = 1) : nprocs_(nprocs) {}

  // --- calls made between syncs (local) ---
  void push(const void* address, std::int64_t size);
  // False when address has no registration left to pop (live or pushed in this superstep).
  bool pop(const void* address);

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
  // True when [address, address+n) overlaps an area this process registered.
  bool overlaps_local(const void* address, std::uint64_t n) const;

  char* address(int slot, int pid) const { return addresses_[index(slot, pid)]; }
  std::int64_t size(int slot, int pid) const { return sizes_[index(slot, pid)]; }

  // --- what the sync needs ---
  std::size_t pending_push_count() const { return push_count_; }
  std::size_t pending_pop_count() const { return pop_count_; }
  // Digest of the order of this superstep's pushes and pops.
  std::uint64_t op_order_digest() const;
  // The registration each pop names, in call order: a code (slot + 1, or kPendingPush | (push
  // number + 1) for an area pushed in this superstep) or 0 for a flexible NULL pop.
  std::vector<std::uint64_t> pop_codes() const;
  static constexpr std::uint64_t kPendingPush = std::uint64_t{1} << 62;
  static std::string describe_pop(std::uint64_t code);
  // This process's pending pushes as (address, size) pairs, for the all-gather.
  std::vector<std::uint64_t> pending_push_words() const;

  // Applies this superstep's pushes and pops in call order. decided: the agreed code of every pop
  // (0 where all processes were flexible); gathered: every process's pending_push_words() in pid
  // order. Returns "" or why this process cannot follow (a NULL pop the others resolved to an
  // area this process did not register as NULL). Lists the local areas removed (the areas added
  // are the pending pushes).
  struct Change {
    std::vector<std::pair<char*, std::int64_t>> removed;  // address and size, as pushed
    std::string error;
  };
  Change apply(const std::vector<std::uint64_t>& decided,
               const std::vector<std::uint64_t>& gathered);

  std::size_t live_slots() const { return owner_.size() - free_slots_.size(); }
  // pid's registered sizes of the live slots, in slot order.
  std::vector<std::int64_t> live_sizes(int pid) const {
    std::vector<std::int64_t> sizes;
    for (int slot = 0; slot < static_cast<int>(owner_.size()); ++slot)
      if (live(slot)) sizes.push_back(sizes_[index(slot, pid)]);
    return sizes;
  }

 private:
  struct Op {
    bool is_push;
    const void* address;
    std::int64_t size;   // push
    std::uint64_t code;  // pop: what it names (0 flexible)
  };
  std::size_t index(int slot, int pid) const {
    return static_cast<std::size_t>(slot) * static_cast<std::size_t>(nprocs_) +
           static_cast<std::size_t>(pid);
  }
  // A slot is live from its push to its pop; free slots have size -1 everywhere.
  bool live(int slot) const { return sizes_[index(slot, 0)] >= 0; }
  int allocate_slot();
  void remove_slot(int slot, Change& change);
  bool consumed(std::uint64_t code) const;

  int nprocs_;
  std::vector<char*> addresses_;          // [slot * nprocs + pid]
  std::vector<std::int64_t> sizes_;       // [slot * nprocs + pid]; -1 for a free slot
  std::vector<const void*> owner_;        // [slot]: this process's address for it
  std::vector<std::int64_t> owner_size_;  // [slot]: and its size
  std::set<int> free_slots_;              // reused lowest first
  // Live slots per address, oldest first.
  std::unordered_map<const void*, std::vector<int>> by_address_;
  std::vector<Op> ops_;                  // this superstep's pushes and pops, in call order
  std::vector<std::uint64_t> consumed_;  // registrations this superstep's pops already name
  std::size_t push_count_ = 0, pop_count_ = 0;
  mutable const void* cached_address_ = nullptr;
  mutable int cached_slot_ = -1;
};

}  // namespace bspg
