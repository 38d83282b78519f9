// lending.cpp - PageLender: large puts' pages lent to their receivers (lending.hpp).
#include "lending.hpp"

#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "errors.hpp"
#include "transport_internal.hpp"

#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP 4
#endif
#ifndef USERFAULTFD_IOC_NEW
#define USERFAULTFD_IOC_NEW _IO(0xAA, 0x00)
#endif

namespace bspg {
namespace {

constexpr std::size_t kPage = 4096;
constexpr std::size_t kHuge = std::size_t{2} << 20;  // holding areas keep the source's offset in
                                                     // a 2 MiB page: mremap then moves whole
                                                     // page tables
constexpr std::uint64_t kEvents =
    UFFD_FEATURE_EVENT_UNMAP | UFFD_FEATURE_EVENT_REMOVE | UFFD_FEATURE_EVENT_REMAP;

bool overlaps(const char* a, std::size_t an, const char* b, std::size_t bn) {
  return a < b + bn && b < a + an;
}

// A userfaultfd that sees the kernel's faults too: the system call where the kernel lets this
// process have one, else /dev/userfaultfd.
int open_userfaultfd() {
  int fd = static_cast<int>(syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK));
  if (fd < 0) {
    const int dev = ::open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);
    if (dev < 0) return -1;
    fd = ioctl(dev, USERFAULTFD_IOC_NEW, O_CLOEXEC | O_NONBLOCK);
    ::close(dev);
    if (fd < 0) return -1;
  }
  uffdio_api api{};
  api.api = UFFD_API;
  api.features = kEvents;
  if (ioctl(fd, UFFDIO_API, &api) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

bool read_memory(pid_t from_pid, const char* from, void* dst, std::size_t n) {
  std::size_t done = 0;
  while (done < n) {
    iovec local{static_cast<char*>(dst) + done, n - done};
    iovec remote{const_cast<char*>(from) + done, n - done};
    const ssize_t got = process_vm_readv(from_pid, &local, 1, &remote, 1, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    done += static_cast<std::size_t>(got);
  }
  return true;
}

// Moves the pages of [from, from + n) to `to` (mremap with MREMAP_FIXED), or where the kernel
// chooses (`to` null); with MREMAP_DONTUNMAP the range left behind stays mapped, empty. Returns
// where they are, or null. By the system call itself: UCX 1.13's memory hooks
// (Debian 12's MPICH loads them) pass mremap on without its fifth argument, and the pages went
// elsewhere. Those hooks keep UCX's registrations of memory with network cards current; the
// pages moved here are on one node, which UCX reaches through shared memory, never through a
// card.
char* move_pages(char* from, std::size_t n, char* to, bool leave_range) {
  const long flags =
      MREMAP_MAYMOVE | (to ? MREMAP_FIXED : 0) | (leave_range ? MREMAP_DONTUNMAP : 0);
  const long moved = syscall(SYS_mremap, from, n, n, flags, to);
  if (moved == -1 || (to && reinterpret_cast<char*>(moved) != to)) return nullptr;
  return reinterpret_cast<char*>(moved);
}

double now_us() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_nsec) / 1e3;
}

}  // namespace

void PageLender::open(MPI_Comm comm, int pid, bool one_node) {
  const char* chosen = transport_internal::transport_choices().lend_puts;  // a bad value stops here
  const Mode mode = std::strcmp(chosen, "on") == 0    ? Mode::On
                    : std::strcmp(chosen, "off") == 0 ? Mode::Off
                                                      : Mode::Auto;
  mode_ = mode;
  pid_ = pid;
  if (!one_node) return;
  int nprocs = 0;
  MPI_Comm_size(comm, &nprocs);
  // Where Yama allows ptrace only of descendants, process_vm_readv needs the reader named; any
  // process of this user may read ours (it could anyway without Yama).
  prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
  // Each process reads a word of every other's memory once: lending is possible only where every
  // receiver can read every sender.
  static std::uint64_t probe = 0x6273706c656e64ull;
  std::uint64_t mine[2] = {static_cast<std::uint64_t>(getpid()),
                           reinterpret_cast<std::uintptr_t>(&probe)};
  std::vector<std::uint64_t> all(2 * static_cast<std::size_t>(nprocs));
  MPI_Allgather(mine, 2, MPI_UINT64_T, all.data(), 2, MPI_UINT64_T, comm);
  int ok = mode != Mode::Off;
  for (int q = 0; q < nprocs && ok; ++q) {
    const std::size_t at = 2 * static_cast<std::size_t>(q);
    std::uint64_t word = 0;
    ok = read_memory(static_cast<pid_t>(all[at]),
                     reinterpret_cast<const char*>(static_cast<std::uintptr_t>(all[at + 1])), &word,
                     sizeof word) &&
         word == probe;
  }
  int everywhere = 0;
  MPI_Allreduce(&ok, &everywhere, 1, MPI_INT, MPI_MIN, comm);
  can_read_ = everywhere != 0;
  os_pids_.resize(static_cast<std::size_t>(nprocs));
  for (int q = 0; q < nprocs; ++q)
    os_pids_[static_cast<std::size_t>(q)] =
        static_cast<pid_t>(all[2 * static_cast<std::size_t>(q)]);
}

void PageLender::open_alone(Mode mode) {
  mode_ = mode;
  pid_ = 0;
  os_pids_.assign(1, getpid());
  can_read_ = mode != Mode::Off;
}

bool PageLender::start() {
  if (started_) return true;
  if (unusable_ || !can_read_ || mode_ == Mode::Off) return false;
  uffd_ = open_userfaultfd();
  stop_fd_ = uffd_ < 0 ? -1 : eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (uffd_ < 0 || stop_fd_ < 0) {
    if (uffd_ >= 0) ::close(uffd_);
    uffd_ = -1;
    unusable_ = true;
    return false;
  }
  thread_ = std::thread([this] { serve(); });
  started_ = true;
  return true;
}

void PageLender::close() {
  if (!started_) return;
  give_back();
  for (const Reserve& reserve : reserves_) munmap(reserve.base, reserve.bytes);
  reserves_.clear();
  const std::uint64_t one = 1;
  if (write(stop_fd_, &one, sizeof one) < 0) {
  }
  thread_.join();
  ::close(uffd_);
  ::close(stop_fd_);
  uffd_ = stop_fd_ = -1;
  started_ = false;
}

void PageLender::fail_lending(const char* what) const {
  fail("bsp_sync", "lending a large put's pages: %s failed (%s); BSPG_LEND_PUTS=off copies instead",
       what, std::strerror(errno));
}

bool PageLender::worth(std::size_t n, double copy_ns_per_byte) {
  if (n < kMinLendBytes || mode_ == Mode::Off || !start()) return false;
  if (mode_ == Mode::On) return true;
  time_the_copies();
  if (copy_ns_per_byte <= 0 || read_ns_per_byte_ <= 0) return false;
  LendCosts& c = lend_costs_[lend_class(n)];
  if (c.cost.samples < 2) return true;
  const double read_beyond_copy = std::max(0.0, read_ns_per_byte_ - copy_ns_per_byte_);
  // Only where clearly cheaper: the program pays for part of a lending later (its next touches
  // of the pages that moved back miss the TLB), which no timing here sees. On an Intel Xeon VM, 512
  // KiB puts estimated at 0.87 of the copy's cost were no faster lent; 1 and 4 MiB ones, at 0.65
  // and 0.5, were.
  const bool cheaper =
      (c.cost.ns_per_byte + read_beyond_copy) * 100 < copy_ns_per_byte * kLendMarginPercent;
  return ++c.puts % kRetryEvery == 0 ? !cheaper : cheaper;
}

double PageLender::lend_cost_per_byte(std::size_t n) const {
  return lend_costs_[lend_class(n)].cost.ns_per_byte;
}

bool PageLender::reads_hpput(std::size_t n) {
  if (n < kMinLendBytes || !reads_peers()) return false;
  if (mode_ == Mode::On) return true;
  time_the_copies();
  return read_ns_per_byte_ > 0 && read_ns_per_byte_ < 2 * copy_ns_per_byte_;
}

namespace {
constexpr std::size_t kTimedBytes = std::size_t{2} << 20;  // what the timings move: 2 MiB that
                                                           // the cache may hold
}  // namespace

void PageLender::time_the_copies() {
  // One memcpy against one read through the kernel (of this process's own memory), each the
  // fastest of three.
  if (copies_timed_) return;
  copies_timed_ = true;
  void* area = mmap(nullptr, 2 * kTimedBytes + kPage, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (area == MAP_FAILED) return;
  char* from = static_cast<char*>(area);
  char* to = from + kTimedBytes + kPage;
  std::memset(from, 1, kTimedBytes);
  std::memset(to, 2, kTimedBytes);
  double copy = 1e30, read_once = 1e30;
  for (int round = 0; round < 4; ++round) {
    double start = now_us();
    std::memcpy(to, from, kTimedBytes);
    __asm__ volatile("" ::"r"(to) : "memory");
    double end = now_us();
    if (round) copy = std::min(copy, end - start);
    start = now_us();
    const bool read_ok = read_memory(getpid(), from, to, kTimedBytes);
    end = now_us();
    if (!read_ok) break;
    if (round) read_once = std::min(read_once, end - start);
  }
  munmap(area, 2 * kTimedBytes + kPage);
  if (read_once >= 1e30) return;
  copy_ns_per_byte_ = 1e3 * copy / kTimedBytes;
  read_ns_per_byte_ = 1e3 * read_once / kTimedBytes;
}

PageLender::Reserve PageLender::take_reserve(std::size_t bytes) {
  // The smallest kept one that is large enough, else a new one.
  auto best = reserves_.end();
  for (auto it = reserves_.begin(); it != reserves_.end(); ++it)
    if (it->bytes >= bytes && (best == reserves_.end() || it->bytes < best->bytes)) best = it;
  if (best != reserves_.end()) {
    const Reserve found = *best;
    reserves_.erase(best);
    return found;
  }
  void* made = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (made == MAP_FAILED) return Reserve{};
  return Reserve{static_cast<char*>(made), bytes};
}

void PageLender::keep_reserve(const Reserve& reserve, char* holding, std::size_t n, bool emptied) {
  // The holding area [holding, holding + n) becomes reserved address space again: replaced where
  // it still holds pages (only this lender maps there), mapped again where moving its pages back
  // left a hole, unless the program took the hole meanwhile. Then the rest of the reserve, only
  // around the hole, is unmapped.
  const int flags =
      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | (emptied ? MAP_FIXED_NOREPLACE : MAP_FIXED);
  void* again = mmap(holding, n, PROT_NONE, flags, -1, 0);
  if (again == holding && reserves_.size() < kKeptReserves) {
    reserves_.push_back(reserve);
    return;
  }
  if (again == holding) {
    munmap(reserve.base, reserve.bytes);
    return;
  }
  if (again != MAP_FAILED)
    munmap(again, n);  // a kernel without MAP_FIXED_NOREPLACE put it elsewhere
  munmap(reserve.base, static_cast<std::size_t>(holding - reserve.base));
  munmap(holding + n, static_cast<std::size_t>(reserve.base + reserve.bytes - (holding + n)));
}

const char* PageLender::lend(char* begin, std::size_t n, std::size_t put_bytes) {
  if (!start()) return nullptr;
  const double start_us = now_us();
  std::lock_guard<std::mutex> hold(mutex_);
  for (auto it = lends_.rbegin(); it != lends_.rend(); ++it) {
    if (!overlaps(it->user, it->bytes, begin, n)) continue;
    if (it->state == State::Lent && it->user == begin && it->bytes == n) return it->holding;
    // Part of a lent range (its pages are away), or a range lent before in this superstep that
    // may still be watched (moving it would wait for an answer from serve(), which waits for this
    // thread's lock): copied instead.
    ++counts_.refused;
    return nullptr;
  }
  if (lends_.size() >= kMaxLends) {
    ++counts_.refused;
    return nullptr;
  }
  // Where the range holds a whole 2 MiB page of the address space, its holding area keeps the
  // range's offset in such a page, so that mremap moves whole page tables, in a reserve of
  // address space that later lendings use again (making one and unmapping it cost a third of
  // lending 4 MiB on an Intel Xeon virtual machine). Smaller ranges go where the kernel puts
  // them (moved into a reserve, they would split it in three).
  const auto at = reinterpret_cast<std::uintptr_t>(begin);
  const bool whole_huge_page = ((at + kHuge - 1) & ~(kHuge - 1)) + kHuge <= at + n;
  Reserve reserve;
  char* holding = nullptr;
  if (whole_huge_page) {
    reserve = take_reserve(n + kHuge);
    if (reserve.base == nullptr) {
      ++counts_.refused;
      return nullptr;
    }
    holding = reserve.base + (at - reinterpret_cast<std::uintptr_t>(reserve.base)) % kHuge;
  }
  if (char* moved = move_pages(begin, n, holding, true)) {
    holding = moved;
  } else {
    if (reserve.base) keep_reserve(reserve, holding, n, false);
    ++counts_.refused;
    return nullptr;
  }
  // Lent only from private anonymous memory: a shared or file mapping left behind still shows its
  // pages (and the program's writes would reach the holding area).
  unsigned char resident = 0;
  uffdio_register watch{};
  watch.range = {reinterpret_cast<std::uintptr_t>(begin), n};
  watch.mode = UFFDIO_REGISTER_MODE_MISSING;
  if ((mincore(begin, kPage, &resident) == 0 && (resident & 1)) ||
      ioctl(uffd_, UFFDIO_REGISTER, &watch) != 0) {
    if (!move_pages(holding, n, begin, false)) fail_lending("moving pages back");
    if (reserve.base) keep_reserve(reserve, holding, n, true);
    ++counts_.refused;
    return nullptr;
  }
  lends_.push_back({begin, n, holding, reserve, State::Lent, 1e3 * (now_us() - start_us),
                    put_bytes ? put_bytes : n});
  ++counts_.lent;
  return holding;
}

void PageLender::read(int pid, const char* from, void* dst, std::size_t n) const {
  if (pid == pid_) {  // our own pages: no need of the kernel
    std::memcpy(dst, from, n);
    return;
  }
  if (!read_memory(os_pids_[static_cast<std::size_t>(pid)], from, dst, n))
    fail("bsp_sync", "could not read the %zu bytes of a put that process %d lent (%s)", n, pid,
         std::strerror(errno));
}

void PageLender::restore(Lend& lend) {
  // Every page of the range back at once: the program that touches one page of its source is
  // likely to touch the rest (a buffer filled again), and one fault beats one per page. Its time
  // counts to the lending's cost: a program that fills its sources again before the sync makes
  // lending dearer than the copy at the call.
  const double start_us = now_us();
  std::size_t done = 0;
  while (done < lend.bytes) {
    uffdio_copy copy{};
    copy.dst = reinterpret_cast<std::uintptr_t>(lend.user + done);
    copy.src = reinterpret_cast<std::uintptr_t>(lend.holding + done);
    copy.len = lend.bytes - done;
    if (ioctl(uffd_, UFFDIO_COPY, &copy) == 0) break;
    const std::size_t copied = copy.copy > 0 ? static_cast<std::size_t>(copy.copy) : 0;
    if (errno == EAGAIN) {
      done += copied;
    } else if (errno == EEXIST) {
      done += copied + kPage;  // a page that is there already stays
    } else {
      fail_lending("putting a touched range back (UFFDIO_COPY)");
    }
  }
  lend.state = State::Restored;
  lend.cost_ns += 1e3 * (now_us() - start_us);
  ++counts_.restored;
}

void PageLender::serve() {
  for (;;) {
    pollfd fds[2] = {{uffd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents) return;
    // Messages are read under the lock: the kernel lets an munmap return once its message is
    // read, and give_back() must not find the range still lent after that.
    std::lock_guard<std::mutex> hold(mutex_);
    uffd_msg msg;
    while (::read(uffd_, &msg, sizeof msg) == static_cast<ssize_t>(sizeof msg)) {
      if (msg.event == UFFD_EVENT_PAGEFAULT) {
        char* at = reinterpret_cast<char*>(msg.arg.pagefault.address & ~std::uint64_t{kPage - 1});
        Lend* found = nullptr;
        for (auto it = lends_.rbegin(); it != lends_.rend() && !found; ++it)
          if (it->state == State::Lent && at >= it->user && at < it->user + it->bytes) found = &*it;
        if (found) {
          restore(*found);
          continue;
        }
        // A missing page of a watched range that holds nothing lent (the program discarded it
        // after it came back): zeros, as for any fresh page.
        uffdio_zeropage zero{};
        zero.range = {reinterpret_cast<std::uintptr_t>(at), kPage};
        if (ioctl(uffd_, UFFDIO_ZEROPAGE, &zero) != 0) {
          uffdio_range wake{reinterpret_cast<std::uintptr_t>(at), kPage};
          ioctl(uffd_, UFFDIO_WAKE, &wake);
        }
        continue;
      }
      // The program unmapped, discarded or moved memory: a lent range in it is no longer to be
      // given back there (its holding area still serves the receivers).
      const char* start = nullptr;
      std::size_t bytes = 0;
      if (msg.event == UFFD_EVENT_UNMAP || msg.event == UFFD_EVENT_REMOVE) {
        start = reinterpret_cast<const char*>(msg.arg.remove.start);
        bytes = static_cast<std::size_t>(msg.arg.remove.end - msg.arg.remove.start);
      } else if (msg.event == UFFD_EVENT_REMAP) {
        start = reinterpret_cast<const char*>(msg.arg.remap.from);
        bytes = static_cast<std::size_t>(msg.arg.remap.len);
      }
      for (Lend& lend : lends_)
        if (lend.state != State::Gone && overlaps(lend.user, lend.bytes, start, bytes)) {
          lend.state = State::Gone;
          ++counts_.gone;
        }
    }
  }
}

void PageLender::give_back() {
  std::lock_guard<std::mutex> hold(mutex_);
  for (Lend& lend : lends_) {
    const double start_us = now_us();
    const uffdio_range range{reinterpret_cast<std::uintptr_t>(lend.user), lend.bytes};
    switch (lend.state) {
      case State::Lent:
        // No longer watched first: moving pages onto a watched range would wait for an answer
        // from this thread's own lock.
        ioctl(uffd_, UFFDIO_UNREGISTER, &range);
        if (!move_pages(lend.holding, lend.bytes, lend.user, false))
          fail_lending("giving lent pages back (mremap)");
        if (lend.reserve.base) keep_reserve(lend.reserve, lend.holding, lend.bytes, true);
        break;
      case State::Restored:
      case State::Gone:  // where the range was discarded it is still watched
        ioctl(uffd_, UFFDIO_UNREGISTER, &range);
        if (lend.reserve.base)
          keep_reserve(lend.reserve, lend.holding, lend.bytes, false);
        else
          munmap(lend.holding, lend.bytes);
        break;
    }
    lend_costs_[lend_class(lend.put_bytes)].cost.add((lend.cost_ns + 1e3 * (now_us() - start_us)) /
                                                     static_cast<double>(lend.put_bytes));
  }
  lends_.clear();
}

std::size_t PageLender::kept_reserve_bytes() const {
  std::lock_guard<std::mutex> hold(mutex_);
  std::size_t bytes = 0;
  for (const Reserve& reserve : reserves_) bytes += reserve.bytes;
  return bytes;
}

PageLender::Counts PageLender::counts() const {
  std::lock_guard<std::mutex> hold(mutex_);
  return counts_;
}

}  // namespace bspg
