// copy.hpp - memory copies for transfers on one node: chunks into a receive buffer, large puts.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <ctime>

#if defined(__x86_64__)
#include <cpuid.h>
#include <emmintrin.h>  // SSE2: non-temporal stores (every x86-64 processor has them)
#endif

namespace bspg {

#if defined(__x86_64__)
// One 64-byte line: four 16-byte loads, then four stores, around the cache (non-temporal; `to`
// starts a line) or through it.
template <bool kAroundCache>
inline void copy_line(char* to, const char* from) {
  const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from));
  const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + 16));
  const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + 32));
  const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + 48));
  const auto store = [](char* at, __m128i value) {
    if constexpr (kAroundCache)
      _mm_stream_si128(reinterpret_cast<__m128i*>(at), value);
    else
      _mm_storeu_si128(reinterpret_cast<__m128i*>(at), value);
  };
  store(to, a);
  store(to + 16, b);
  store(to + 32, c);
  store(to + 48, d);
}
#endif

// memcpy whose stores bypass the cache (non-temporal), for copies far larger than a core's cache
// (a large put's copy at the call and the receiver's at the sync): the destination's lines are
// not read first, and the copy does not evict what the program works on. The C library does the
// same above its own threshold, but takes that from the cache size the processor reports, which
// virtual machines often give wrong (hundreds of MiB), and then copies 16 MiB through the cache.
// Ends with a store fence, so that a later release orders these stores like any other.
inline void copy_streaming(void* dst, const void* src, std::size_t n) {
#if defined(__x86_64__)
  auto* to = static_cast<char*>(dst);
  const auto* from = static_cast<const char*>(src);
  const std::size_t head =
      std::min<std::size_t>((64 - reinterpret_cast<std::uintptr_t>(to) % 64) % 64, n);
  std::memcpy(to, from, head);
  std::size_t at = head;
  for (; at + 64 <= n; at += 64) copy_line<true>(to + at, from + at);
  _mm_sfence();
  std::memcpy(to + at, from + at, n - at);
#else
  std::memcpy(dst, src, n);
#endif
}

// A copy through the cache by 16-byte moves, not the C library's: from about 2 KiB on, glibc
// copies with `rep movsb`, whose speed depends on the processor and, on some, on where source and
// destination lie relative to each other. On an AMD EPYC (Zen 4) virtual machine a 128 KiB copy
// took 4 to 12 times as long at some offsets of the source within its page as at others, and as
// these moves; at other offsets `rep movsb` was the faster. MidCopyChooser times both.
inline void copy_through_cache(void* dst, const void* src, std::size_t n) {
#if defined(__x86_64__)
  auto* to = static_cast<char*>(dst);
  const auto* from = static_cast<const char*>(src);
  std::size_t at = 0;
  for (; at + 64 <= n; at += 64) {
    copy_line<false>(to + at, from + at);
    __asm__ volatile("" ::: "memory");  // stays a loop: the compiler would make it a memcpy call
  }
  std::memcpy(to + at, from + at, n - at);
#else
  std::memcpy(dst, src, n);
#endif
}

// Copies below this size into memory another core reads next go by copy_for_reader's own moves.
constexpr std::size_t kReaderCopyBytes = std::size_t{32} << 10;

#if defined(__x86_64__)
// Whether the processor has PREFETCHW (AMD since K8, Intel since Broadwell; CPUID 0x80000001,
// ECX bit 8).
inline bool has_prefetchw() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(0x80000001, &eax, &ebx, &ecx, &edx) && (ecx & (1u << 8)) != 0;
}
#endif

// memcpy for a chunk that another process on this node reads right after (the transport's copy
// into its receive buffer), measured on an AMD EPYC (Zen 4) whose cores now share a cache, now
// do not:
// - From 2 KiB up the C library copies with `rep movsb`. The reader's sync then cost about 0.4 us
//   more (a step in the cost of an h-relation at about 100 words) where the cores share no
//   cache: BSPedupack's fit put l at 2.1-2.7 times the empty superstep.
// - Plain stores need each line taken from the reader's cache first (it read the part two syncs
//   ago). Asked for all at once (PREFETCHW) before the first store, those transfers overlap
//   instead of waiting in turn behind the stores.
// From kReaderCopyBytes on, `rep movsb` was the faster there (4096 single-word puts: 80 KiB).
inline void copy_for_reader(void* dst, const void* src, std::size_t n) {
#if defined(__x86_64__)
  if (n >= kReaderCopyBytes) {
    std::memcpy(dst, src, n);
    return;
  }
  static const bool prefetchw = has_prefetchw();
  if (prefetchw)
    for (std::size_t line = 0; line < n; line += 64)
      __asm__ volatile("prefetchw %0" ::"m"(static_cast<char*>(dst)[line]));
#endif
  copy_through_cache(dst, src, n);
}

// Copies whose way is chosen by timing them. Whether a large copy is faster through the cache or
// around it depends on the processor, on where the processes run, and may change while they run.
// Between cores that share a cache, a megabyte the writer leaves in the cache reaches the reader
// at cache speed, and bypassing it halves the speed; between cores that share none (two sockets,
// two core complexes; a virtual machine's cores now on one, now on two), every line written into
// a cache must first be fetched from the other core's, and bypassing the cache is twice as fast.
// Copies larger than a core's cache were always sent around it (an AMD EPYC's choice), which a
// processor with a larger cache or slower non-temporal stores may not share. Smaller copies choose
// between the C library's memcpy and copy_through_cache (above). So each place that copies (a
// put's copy at the call, the receiver's at the sync) times its copies, keeps a running cost per
// byte of each way for each size class (a copy's cost per byte changes with how much of it the
// caches hold), takes the cheaper, and tries the other one copy in kRetryEvery of the class, so
// that it follows a change. Way 0 is always the C library's memcpy; the other way, kOtherWay, is
// taken only where it costs less than kMarginPercent percent of memcpy's.
using CopyWay = void (*)(void* dst, const void* src, std::size_t n);

// A way's running cost per byte, measured (here, and by PageLender for lending). The first sample
// only stands in until the second replaces it (a first copy into fresh memory also pays for its
// pages); later ones move the cost a quarter of the way toward them, and one more than four times
// the cost (a moment's preemption) counts as four times.
struct RunningCost {
  double ns_per_byte = 0;  // 0: no sample yet
  int samples = 0;         // counted up to 2

  void add(double sample_ns_per_byte) {
    if (sample_ns_per_byte <= 0) sample_ns_per_byte = 1e-6;
    if (samples < 2)
      ns_per_byte = sample_ns_per_byte, ++samples;
    else
      ns_per_byte += (std::min(sample_ns_per_byte, 4 * ns_per_byte) - ns_per_byte) / 4;
  }
};

// Size classes that double from `smallest`; the last takes every larger size.
inline int size_class(std::size_t n, std::size_t smallest, int classes) {
  int k = 0;
  for (std::size_t limit = smallest * 2; n >= limit && k < classes - 1; limit *= 2) ++k;
  return k;
}

template <std::size_t kSmallest, int kClassCount, CopyWay kOtherWay, int kMarginPercent>
class TimedCopyChoice {
 public:
  static constexpr unsigned kRetryEvery = 16;
  static constexpr int kClasses = kClassCount;

  // A copy of kSmallest or more, by the way its size class finds cheaper.
  void copy(void* dst, const void* src, std::size_t n) {
    const bool other_way = choose(n);
    const std::int64_t start = now_ns();
    if (other_way)
      kOtherWay(dst, src, n);
    else
      std::memcpy(dst, src, n);
    record(other_way, static_cast<double>(now_ns() - start) / static_cast<double>(n), n);
  }

  // Which way the next copy of n bytes takes (true: the other way than memcpy); for tests.
  bool choose(std::size_t n = kSmallest) {
    Costs& c = costs_[class_of(n)];
    if (c.way[0].samples < 2) return false;
    if (c.way[1].samples < 2) return true;
    const bool cheaper = other_way_cheaper(c);
    return ++c.copies % kRetryEvery == 0 ? !cheaper : cheaper;
  }
  // A copy's cost per byte, measured: into that way's running cost for its size class.
  void record(bool other_way, double ns_per_byte, std::size_t n = kSmallest) {
    costs_[class_of(n)].way[other_way ? 1 : 0].add(ns_per_byte);
  }
  // What a copy of n bytes costs per byte by the way its class would take now (0: not measured).
  double cost_per_byte(std::size_t n) const {
    const Costs& c = costs_[class_of(n)];
    if (c.way[1].samples == 0) return c.way[0].ns_per_byte;
    if (c.way[0].samples == 0) return c.way[1].ns_per_byte;
    return c.way[other_way_cheaper(c) ? 1 : 0].ns_per_byte;
  }
  // Classes double in size from kSmallest; the last takes every larger copy.
  static int class_of(std::size_t n) { return size_class(n, kSmallest, kClasses); }

 private:
  static std::int64_t now_ns() {
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return static_cast<std::int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
  }
  struct Costs {
    RunningCost way[2];  // memcpy, the other way
    unsigned copies = 0;
  };
  static bool other_way_cheaper(const Costs& c) {
    return c.way[1].ns_per_byte * kMarginPercent < c.way[0].ns_per_byte * 100;
  }
  Costs costs_[kClasses];
};

// From kChosenCopyBytes up: memcpy, or around the cache (copy_streaming). Size classes 512 KiB-1
// MiB, 1-2, 2-4, 4-8, 8-16, 16 MiB and more.
constexpr std::size_t kChosenCopyBytes = std::size_t{512} << 10;

using CopyChooser = TimedCopyChoice<kChosenCopyBytes, 6, copy_streaming, 100>;

// From kMidChosenBytes to kChosenCopyBytes: memcpy, or copy_through_cache. Size classes 64-128,
// 128-256 and 256-512 KiB. (Below, a copy takes about a microsecond or less, and timing it would
// cost a noticeable part of it.) Own moves only where they take less than two thirds of memcpy's
// time: part of a copy's cost shows at the reader, which the timing does not see. On that EPYC,
// with Open MPI 4.1 (where the two ways time alike), taking own moves at any advantage made 64 KiB
// puts 1.2 times as dear; with MPICH 4.0 (where memcpy was 2 to 12 times slower) they won by far.
constexpr std::size_t kMidChosenBytes = std::size_t{64} << 10;

using MidCopyChooser = TimedCopyChoice<kMidChosenBytes, 3, copy_through_cache, 150>;

// The timed copies of one place that copies puts (a sender's into the regions, a receiver's into
// the destinations): from kMidChosenBytes up, each size by its own chooser.
class ChosenCopies {
 public:
  void copy(void* dst, const void* src, std::size_t n) {
    if (n >= kChosenCopyBytes)
      large_.copy(dst, src, n);
    else
      mid_.copy(dst, src, n);
  }
  // Per byte, measured (0: not yet, or below kMidChosenBytes).
  double cost_per_byte(std::size_t n) const {
    return n >= kChosenCopyBytes  ? large_.cost_per_byte(n)
           : n >= kMidChosenBytes ? mid_.cost_per_byte(n)
                                  : 0;
  }

 private:
  CopyChooser large_;
  MidCopyChooser mid_;
};

// The copies of puts packed into a stream at the call (between nodes, or where the regions are
// unavailable), one set for the process: they bypassed the cache from a fixed 4 MiB, an AMD
// EPYC's choice; on an Intel Xeon virtual machine non-temporal stores moved 14-21 GB/s where
// memcpy moved 15-50.
inline ChosenCopies& stream_copies() {
  static ChosenCopies copies;
  return copies;
}

}  // namespace bspg
