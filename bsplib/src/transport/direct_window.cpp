// direct_window.cpp - DirectWindow: registered user memory in a dynamic window, for zero-copy RMA.
#include <algorithm>
#include <cstring>

#include "transport.hpp"
#include "transport_internal.hpp"

namespace bspg {
using namespace transport_internal;  // the transport's own helpers (transport_internal.hpp)

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
