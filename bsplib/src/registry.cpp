#include "registry.hpp"

#include <algorithm>
#include <functional>

namespace bspg {

Registry::PopResult Registry::pop(const void* address) {
  auto it = by_address_.find(address);
  if (it != by_address_.end()) {
    // Most recent registration of this address that is not already being popped.
    for (auto slot = it->second.rbegin(); slot != it->second.rend(); ++slot) {
      if (std::find(pending_pops_.begin(), pending_pops_.end(), *slot) == pending_pops_.end()) {
        pending_pops_.push_back(*slot);
        return PopResult::Ok;
      }
    }
  }
  return is_pending_push(address) ? PopResult::OnlyPending : PopResult::NotRegistered;
}

bool Registry::is_pending_push(const void* address) const {
  for (const Pending& p : pending_pushes_)
    if (p.address == address) return true;
  return false;
}

std::uint64_t Registry::pending_pop_digest() const {
  std::uint64_t digest = 1469598103934665603ull;  // FNV-1a over the slot ids, in order
  for (int slot : pending_pops_) {
    digest ^= static_cast<std::uint64_t>(slot) + 1;
    digest *= 1099511628211ull;
  }
  return digest;
}

std::vector<std::uint64_t> Registry::pending_push_words() const {
  std::vector<std::uint64_t> words;
  words.reserve(2 * pending_pushes_.size());
  for (const Pending& p : pending_pushes_) {
    words.push_back(reinterpret_cast<std::uintptr_t>(p.address));
    words.push_back(static_cast<std::uint64_t>(p.size));
  }
  return words;
}

int Registry::allocate_slot() {
  if (!free_slots_.empty()) {
    int slot = free_slots_.back();
    free_slots_.pop_back();
    return slot;
  }
  int slot = static_cast<int>(owner_.size());
  owner_.push_back(nullptr);
  addresses_.resize(addresses_.size() + static_cast<std::size_t>(nprocs_), nullptr);
  sizes_.resize(sizes_.size() + static_cast<std::size_t>(nprocs_), -1);
  return slot;
}

void Registry::apply(const std::vector<std::uint64_t>& gathered) {
  cached_address_ = nullptr;
  cached_slot_ = -1;
  for (int slot : pending_pops_) {
    auto& stack = by_address_[owner_[static_cast<std::size_t>(slot)]];
    stack.erase(std::find(stack.begin(), stack.end(), slot));
    if (stack.empty()) by_address_.erase(owner_[static_cast<std::size_t>(slot)]);
    for (int pid = 0; pid < nprocs_; ++pid) {
      addresses_[index(slot, pid)] = nullptr;
      sizes_[index(slot, pid)] = -1;
    }
    owner_[static_cast<std::size_t>(slot)] = nullptr;
    free_slots_.push_back(slot);
  }
  std::sort(free_slots_.begin(), free_slots_.end(), std::greater<int>());
  pending_pops_.clear();

  const std::size_t count = pending_pushes_.size();
  for (std::size_t k = 0; k < count; ++k) {
    int slot = allocate_slot();
    for (int pid = 0; pid < nprocs_; ++pid) {
      std::size_t base = (static_cast<std::size_t>(pid) * count + k) * 2;
      addresses_[index(slot, pid)] = reinterpret_cast<char*>(static_cast<std::uintptr_t>(gathered[base]));
      sizes_[index(slot, pid)] = static_cast<std::int64_t>(gathered[base + 1]);
    }
    owner_[static_cast<std::size_t>(slot)] = pending_pushes_[k].address;
    by_address_[pending_pushes_[k].address].push_back(slot);
  }
  pending_pushes_.clear();
}

std::size_t Registry::live_slots() const {
  std::size_t live = 0;
  for (std::size_t slot = 0; slot < owner_.size(); ++slot)
    if (sizes_[slot * static_cast<std::size_t>(nprocs_)] >= 0) ++live;
  return live;
}

}  // namespace bspg
