// write_all.h - all of a buffer written to a file descriptor: write(2) again after a partial write
// or an interrupted one. Async-signal-safe: the crash line and the stop notices write with it from
// signal handlers. Header-only, for the library and bsprun alike.
#pragma once

#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <string_view>

namespace bspg {

// false when a write fails: errno says why (EIO where write wrote nothing).
inline bool write_all(int fd, const void* data, std::size_t n) {
  const char* at = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t done = ::write(fd, at, n);
    if (done < 0 && errno == EINTR) continue;
    if (done <= 0) {
      if (done == 0) errno = EIO;
      return false;
    }
    at += done;
    n -= static_cast<std::size_t>(done);
  }
  return true;
}

inline bool write_all(int fd, std::string_view text) {
  return write_all(fd, text.data(), text.size());
}

}  // namespace bspg
