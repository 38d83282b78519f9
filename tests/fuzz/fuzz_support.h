// fuzz_support.h - what the fuzz targets share: the input as text, and the way a target reports a
// broken promise of a reader (a crash, so that libFuzzer keeps the input and a replay test fails).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace bspg::fuzz {

inline std::string as_text(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// Aborts, naming the promise, when `holds` is false.
inline void expect(bool holds, const char* promise) {
  if (holds) return;
  std::fprintf(stderr, "fuzz target: broken promise: %s\n", promise);
  std::abort();
}

}  // namespace bspg::fuzz
