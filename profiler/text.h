// text.h - how bspprof writes numbers and names into its outputs, and a buffered output file.
#ifndef BSPG_PROFILER_TEXT_H
#define BSPG_PROFILER_TEXT_H

#include <cstdint>
#include <cstdio>
#include <string>

namespace bspg::profile {

// A header's host name as text that is safe on a terminal and in CSV, JSON and gnuplot: up to
// the first NUL, every byte that is not printable ASCII shown as '?'.
std::string printable_text(const char* bytes, std::size_t size);

// value with the given number of decimals, trailing zeros (and a bare point) left out.
void append_fixed(std::string& out, double value, int decimals);
// Seconds to the nanosecond: "0.0012", "3", "-0.5".
inline void append_seconds(std::string& out, double seconds) { append_fixed(out, seconds, 9); }
void append_integer(std::string& out, std::uint64_t value);
void append_integer(std::string& out, std::int64_t value);
inline void append_integer(std::string& out, std::int32_t value) {
  append_integer(out, static_cast<std::int64_t>(value));
}

std::string csv_field(const std::string& text);       // quoted only where needed (RFC 4180)
std::string gnuplot_quoted(const std::string& text);  // 'text', a quote written twice

// For people: "12.345 s", "3.210 ms", "45.6 us"; "4096 B", "64.0 KiB", "1.5 MiB".
std::string human_seconds(double seconds);
std::string human_bytes(std::uint64_t bytes);

// A file written through a large buffer: append to buffer(), then call written(). Remembers the
// first error, so that one check at close() covers every write.
class OutputFile {
 public:
  OutputFile() = default;
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  ~OutputFile();

  bool open(const std::string& path);  // false: error() says why
  std::string& buffer() { return buffer_; }
  void written() {
    if (buffer_.size() >= kFlushBytes) flush();
  }
  bool close();  // false when anything failed since open (error() says what)
  const std::string& path() const { return path_; }
  const std::string& error() const { return error_; }

 private:
  static constexpr std::size_t kFlushBytes = 1 << 16;
  void flush();
  std::FILE* file_ = nullptr;
  std::string buffer_;
  std::string path_;
  std::string error_;
};

}  // namespace bspg::profile

#endif
