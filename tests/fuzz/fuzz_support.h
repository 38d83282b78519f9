// fuzz_support.h - what the fuzz targets share: the input as text, and the way a target reports a
// broken promise of a reader (a crash, so that libFuzzer keeps the input and a replay test fails).
#pragma once

#include <sys/mman.h>
#include <sys/types.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace bspg::fuzz {

inline std::string as_text(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// One memory file (memfd) per target, holding the input for readers that take a file: emptied,
// filled with data and rewound at each call. Returns its descriptor.
inline int memory_file_holding(const std::uint8_t* data, std::size_t size) {
  static const int fd = [] {
    const int made = memfd_create("fuzz-input", MFD_CLOEXEC);
    if (made < 0) std::abort();
    return made;
  }();
  if (ftruncate(fd, 0) != 0) std::abort();
  for (std::size_t done = 0; done < size;) {
    const ssize_t wrote = pwrite(fd, data + done, size - done, static_cast<off_t>(done));
    if (wrote <= 0) std::abort();
    done += static_cast<std::size_t>(wrote);
  }
  if (lseek(fd, 0, SEEK_SET) != 0) std::abort();
  return fd;
}

// Aborts, naming the promise, when `holds` is false.
inline void expect(bool holds, const char* promise) {
  if (holds) return;
  std::fprintf(stderr, "fuzz target: broken promise: %s\n", promise);
  std::abort();
}

}  // namespace bspg::fuzz
