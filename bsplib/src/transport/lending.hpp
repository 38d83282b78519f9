// lending.hpp - large puts on one node that move once: the source's pages lent to the receivers.
//
// bsp_put leaves its source to the program as soon as it returns, so a large put on one node is
// normally copied twice: into the mailbox at the call, into its destination at the sync. A
// PageLender moves it once where this machine makes that cheaper:
// - At the call, the source's whole pages move (mremap with MREMAP_DONTUNMAP: page tables, no data)
//   into a holding area of the lender's own. The source's range stays mapped but empty, and
//   watched (userfaultfd, missing pages).
// - At the sync, each receiver copies from the holding area straight into its destination
//   (process_vm_readv: one copy, as MPI's single-copy transfers make).
// - After the sync's last barrier, when every receiver has read, the pages move back.
// Whatever touches the source's range before then faults: the program reading or writing it, the
// kernel (read(), write(), an MPI receive into it), a get served from it at the sync. The
// lender's thread then puts the whole lent range back (UFFDIO_COPY from the holding area), one
// copy, as the call would have made, and the receivers still read the holding area, which only
// the lender touches. A range the program unmaps (free) or moves meanwhile costs nothing: the
// receivers read the holding area all the same, and it is freed after the sync. A range that
// cannot be lent (not private anonymous memory, an older kernel) is copied at the call, as before.
//
// Costs, measured on an AMD EPYC virtual machine: lending 11-18 us and giving back 13-22 us for 1
// to 16 MiB; the receiver's process_vm_readv moved 14 GB/s where a memcpy moved 55. On an Intel
// Xeon virtual machine: lending 7 us and giving back 10 us for 1 MiB, 20 us each for 4 and 16 MiB
// (with the reserves kept; 25-33 and 23-28 us before), and process_vm_readv moved about what a
// memcpy moved (16 and 17 GB/s). Whether one copy through the kernel beats two memcpys therefore
// depends on the machine, and on the program (a source it touches before the sync is put back
// by a copy): worth() decides by what lendings and copies of each size cost here, and
// reads_hpput() by timings taken at the first large put.
//
// Needs userfaultfd that handles the kernel's faults too (root, vm.unprivileged_userfaultfd=1, or
// read-write access to /dev/userfaultfd), Linux 5.7 (MREMAP_DONTUNMAP), and process_vm_readv
// between the job's processes (the same user; each process allows the others where Yama
// restricts ptrace). Without them every put is copied as before.
#pragma once

#include <mpi.h>
#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "copy.hpp"

namespace bspg {

class PageLender {
 public:
  // BSPG_LEND_PUTS (bsp(3)): auto (by timings), on (whenever it can, for tests), off.
  enum class Mode { Auto, On, Off };
  // Puts from this size on may be lent (their whole pages; the bytes around them are copied).
  static constexpr std::size_t kMinLendBytes = std::size_t{256} << 10;
  // At most this many ranges lent in one superstep; later puts are copied.
  static constexpr std::size_t kMaxLends = 512;

  PageLender() = default;
  PageLender(const PageLender&) = delete;
  PageLender& operator=(const PageLender&) = delete;
  ~PageLender() { close(); }

  // Collective over comm where one_node (every process of comm on this node, the same on all):
  // finds whether every process can read every other's memory (process_vm_readv). Lending starts
  // at the first put that asks. The mode is BSPG_LEND_PUTS's.
  void open(MPI_Comm comm, int pid, bool one_node);
  // Without MPI (unit tests): this process alone, reading its own memory.
  void open_alone(Mode mode);
  void close();  // gives back whatever is lent, ends the thread

  // Whether a put of n bytes should be lent: n >= kMinLendBytes, lending works here, and (Auto)
  // lending costs less than the copy at the call, whose cost per byte the caller measured
  // (copy_ns_per_byte; 0: not yet, and the put is copied). Lending's cost is what this process's
  // own lendings of the size took (lending, putting back what the program touched, giving back),
  // plus what a read through the kernel costs beyond a memcpy (timed once, on 2 MiB). Each size
  // class lends twice to learn its cost, then takes the cheaper way, and the other one put in 16
  // (a virtual machine's cores move; a program may start touching its sources).
  bool worth(std::size_t n, double copy_ns_per_byte);
  // Lends the pages [begin, begin + n) (page-aligned) of a put of put_bytes (n where 0; its size
  // class keeps the lending's cost): where the receivers read them until give_back(), or null
  // where they cannot be lent (they are then to be copied). The same range lent twice in a
  // superstep is one lending.
  const char* lend(char* begin, std::size_t n, std::size_t put_bytes = 0);
  // Copies n bytes at `from`, lent by process pid, into dst.
  void read(int pid, const char* from, void* dst, std::size_t n) const;
  // Once every receiver has read: the lent pages go back where they were (or are freed, where
  // the program touched or unmapped their range meanwhile).
  void give_back();
  bool lending() const { return !lends_.empty(); }
  // Whether every process of the job may read every other's memory (and BSPG_LEND_PUTS is not
  // off): a bsp_hpput's source, which stays as it is until the sync, is then read where it lies.
  bool reads_peers() const { return can_read_ && mode_ != Mode::Off; }
  // Whether a bsp_hpput of n bytes (kMinLendBytes and more) that the regions could take is read
  // where it lies instead: reads_peers(), and (Auto) one read through the kernel costs less than
  // the two copies through the regions. The first call takes the timings of the copies (about
  // half a millisecond, shared with worth()).
  bool reads_hpput(std::size_t n);

  // What happened so far (tests, benchmarks).
  struct Counts {
    std::uint64_t lent = 0;      // ranges lent
    std::uint64_t restored = 0;  // ranges put back early because something touched them
    std::uint64_t gone = 0;      // ranges the program unmapped or moved while they were lent
    std::uint64_t refused = 0;   // ranges that could not be lent (copied instead)
  };
  Counts counts() const;
  // What lending n bytes costs per byte, as measured so far (0: not yet); for tests.
  double lend_cost_per_byte(std::size_t n) const;
  // The address space kept for later lendings (tests).
  std::size_t kept_reserve_bytes() const;
  static constexpr unsigned kRetryEvery = 16;
  static constexpr int kLendMarginPercent = 80;  // lent where estimated below 80% of the copy

 private:
  enum class State { Lent, Restored, Gone };
  // Address space kept for holding areas (PROT_NONE, no memory), used again by later lendings.
  struct Reserve {
    char* base = nullptr;
    std::size_t bytes = 0;
  };
  static constexpr std::size_t kKeptReserves = 16;
  struct Lend {
    char* user;  // the program's range (empty while Lent)
    std::size_t bytes;
    char* holding;    // where its pages are while lent
    Reserve reserve;  // the address space holding lies in (2 MiB larger, for alignment), if any
    State state;
    double cost_ns;         // lending it, and putting it back if the program touched it
    std::size_t put_bytes;  // of the put it belongs to
  };
  // Size classes of lendings: 256-512 KiB, 512 KiB-1 MiB, ... 8-16 MiB, 16 MiB and more.
  static constexpr int kLendClasses = 7;
  static int lend_class(std::size_t n) { return size_class(n, kMinLendBytes, kLendClasses); }
  struct LendCosts {
    RunningCost cost;
    unsigned puts = 0;
  };
  bool start();  // userfaultfd and the thread; false where this process cannot lend
  void serve();  // the thread: faults and events of the lent ranges
  void restore(Lend& lend);
  Reserve take_reserve(std::size_t bytes);
  // Gives the reserve back for later lendings, once holding is empty (emptied: its pages moved
  // away, which left a hole) or its pages are no longer needed.
  void keep_reserve(const Reserve& reserve, char* holding, std::size_t n, bool emptied);
  void time_the_copies();  // copy_ns_per_byte_ and read_ns_per_byte_
  void fail_lending(const char* what) const;

  Mode mode_ = Mode::Off;
  bool can_read_ = false;  // every process can read every other's memory
  bool started_ = false, unusable_ = false;
  std::vector<pid_t> os_pids_;  // by BSP pid
  int pid_ = 0;
  int uffd_ = -1, stop_fd_ = -1;
  std::thread thread_;
  mutable std::mutex mutex_;  // lends_ and counts_, between the program's thread and serve()
  std::vector<Lend> lends_;
  std::vector<Reserve> reserves_;  // not in use
  Counts counts_;
  bool copies_timed_ = false;
  double copy_ns_per_byte_ = 0, read_ns_per_byte_ = 0;  // 0: not measured
  LendCosts lend_costs_[kLendClasses];
};

}  // namespace bspg
