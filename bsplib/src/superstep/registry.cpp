#include "registry.hpp"

#include <algorithm>

namespace bspg {

void Registry::push(const void* address, std::int64_t size) {
  ops_.push_back({true, address, size, 0});
  ++push_count_;
}

bool Registry::consumed(std::uint64_t code) const {
  return std::find(consumed_.begin(), consumed_.end(), code) != consumed_.end();
}

bool Registry::pop(const void* address) {
  if (address == nullptr) {
    // NULL registrations cannot be told apart: with several, every NULL pop is flexible (it
    // takes what the others name, or the most recent NULL registration when everyone is flexible).
    std::size_t nulls = 0, null_pops = 0;
    if (auto it = by_address_.find(nullptr); it != by_address_.end()) nulls = it->second.size();
    for (const Op& op : ops_) {
      if (op.address != nullptr) continue;
      if (op.is_push)
        ++nulls;
      else
        ++null_pops;
    }
    if (null_pops >= nulls) return false;
    if (nulls > 1) {
      ops_.push_back({false, nullptr, 0, 0});
      ++pop_count_;
      return true;
    }
  }
  // The most recent registration of address not already named by a pop of this superstep:
  // this superstep's pushes first, then the live slots.
  std::uint64_t target = 0;
  std::size_t push_number = push_count_;
  for (auto op = ops_.rbegin(); op != ops_.rend() && !target; ++op) {
    if (!op->is_push) continue;
    --push_number;
    if (op->address == address && !consumed(kPendingPush | (push_number + 1)))
      target = kPendingPush | (push_number + 1);
  }
  if (auto it = by_address_.find(address); !target && it != by_address_.end())
    for (auto slot = it->second.rbegin(); slot != it->second.rend() && !target; ++slot)
      if (!consumed(static_cast<std::uint64_t>(*slot) + 1))
        target = static_cast<std::uint64_t>(*slot) + 1;
  if (!target) return false;
  consumed_.push_back(target);
  ops_.push_back({false, address, 0, target});
  ++pop_count_;
  return true;
}

bool Registry::is_pending_push(const void* address) const {
  for (const Op& op : ops_)
    if (op.is_push && op.address == address) return true;
  return false;
}

bool Registry::overlaps_local(const void* address, std::uint64_t n) const {
  const auto begin = reinterpret_cast<std::uintptr_t>(address);
  for (const auto& [area, slots] : by_address_) {
    if (area == nullptr || slots.empty()) continue;
    const auto start = reinterpret_cast<std::uintptr_t>(area);
    for (int slot : slots) {
      const auto bytes = static_cast<std::uint64_t>(owner_size_[static_cast<std::size_t>(slot)]);
      if (begin < start + bytes && start < begin + n) return true;
    }
  }
  return false;
}

std::uint64_t Registry::op_order_digest() const {
  std::uint64_t digest = 1469598103934665603ull;  // FNV-1a over the kinds, in order
  for (const Op& op : ops_) {
    digest ^= op.is_push ? 1u : 2u;
    digest *= 1099511628211ull;
  }
  return digest;
}

std::vector<std::uint64_t> Registry::pop_codes() const {
  std::vector<std::uint64_t> codes;
  for (const Op& op : ops_)
    if (!op.is_push) codes.push_back(op.code);
  return codes;
}

std::string Registry::describe_pop(std::uint64_t code) {
  if (code & kPendingPush)
    return "the area of its bsp_push_reg number " + std::to_string(code & ~kPendingPush) +
           " of this superstep";
  return "the registration in slot " + std::to_string(code - 1);
}

std::vector<std::uint64_t> Registry::pending_push_words() const {
  std::vector<std::uint64_t> words;
  words.reserve(2 * push_count_);
  for (const Op& op : ops_) {
    if (!op.is_push) continue;
    words.push_back(reinterpret_cast<std::uintptr_t>(op.address));
    words.push_back(static_cast<std::uint64_t>(op.size));
  }
  return words;
}

int Registry::allocate_slot() {
  if (!free_slots_.empty()) {
    int slot = *free_slots_.begin();
    free_slots_.erase(free_slots_.begin());
    return slot;
  }
  int slot = static_cast<int>(owner_.size());
  owner_.push_back(nullptr);
  owner_size_.push_back(0);
  addresses_.resize(addresses_.size() + static_cast<std::size_t>(nprocs_), nullptr);
  sizes_.resize(sizes_.size() + static_cast<std::size_t>(nprocs_), -1);
  return slot;
}

void Registry::remove_slot(int slot, Change& change) {
  const void* owner = owner_[static_cast<std::size_t>(slot)];
  auto& stack = by_address_[owner];
  stack.erase(std::find(stack.begin(), stack.end(), slot));
  if (stack.empty()) by_address_.erase(owner);
  change.removed.emplace_back(const_cast<char*>(static_cast<const char*>(owner)),
                              owner_size_[static_cast<std::size_t>(slot)]);
  for (int pid = 0; pid < nprocs_; ++pid) {
    addresses_[index(slot, pid)] = nullptr;
    sizes_[index(slot, pid)] = -1;
  }
  owner_[static_cast<std::size_t>(slot)] = nullptr;
  free_slots_.insert(slot);
}

Registry::Change Registry::apply(const std::vector<std::uint64_t>& decided,
                                 const std::vector<std::uint64_t>& gathered) {
  cached_address_ = nullptr;
  cached_slot_ = -1;
  Change change;
  std::vector<int> pushed;  // slot of every push of this superstep, in order
  std::size_t pop_number = 0;
  for (const Op& op : ops_) {
    if (op.is_push) {
      const int slot = allocate_slot();
      const std::size_t k = pushed.size();
      for (int pid = 0; pid < nprocs_; ++pid) {
        const std::size_t base = (static_cast<std::size_t>(pid) * push_count_ + k) * 2;
        addresses_[index(slot, pid)] =
            reinterpret_cast<char*>(static_cast<std::uintptr_t>(gathered[base]));
        sizes_[index(slot, pid)] = static_cast<std::int64_t>(gathered[base + 1]);
      }
      owner_[static_cast<std::size_t>(slot)] = op.address;
      owner_size_[static_cast<std::size_t>(slot)] = op.size;
      by_address_[op.address].push_back(slot);
      pushed.push_back(slot);
      continue;
    }
    const std::uint64_t code = op.code ? op.code : decided[pop_number];
    ++pop_number;
    int slot = -1;
    if (code == 0) {
      // Every process popped NULL flexibly: the most recent NULL registration, as everywhere.
      auto it = by_address_.find(nullptr);
      if (it != by_address_.end() && !it->second.empty()) slot = it->second.back();
    } else if (code & kPendingPush) {
      const std::uint64_t number = (code & ~kPendingPush) - 1;
      if (number < pushed.size()) slot = pushed[number];
    } else if (code - 1 < owner_.size() && live(static_cast<int>(code - 1))) {
      slot = static_cast<int>(code - 1);
    }
    if (slot < 0 || !live(slot) ||
        (op.code == 0 && owner_[static_cast<std::size_t>(slot)] != nullptr)) {
      change.error = "this process pops NULL, but the other processes pop " + describe_pop(code) +
                     ", which this process did not register as NULL";
      break;
    }
    remove_slot(slot, change);
  }
  ops_.clear();
  consumed_.clear();
  push_count_ = pop_count_ = 0;
  return change;
}

}  // namespace bspg
