// copy.hpp - memory copies for large transfers on one node.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <emmintrin.h>  // SSE2: non-temporal stores (every x86-64 processor has them)
#endif

namespace bspg {

// Copies of this size and more bypass the cache (copy_streaming).
constexpr std::size_t kStreamingCopyBytes = std::size_t{4} << 20;

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
  for (; at + 64 <= n; at += 64) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + at));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + at + 16));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + at + 32));
    const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + at + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(to + at), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(to + at + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(to + at + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(to + at + 48), d);
  }
  _mm_sfence();
  std::memcpy(to + at, from + at, n - at);
#else
  std::memcpy(dst, src, n);
#endif
}

}  // namespace bspg
