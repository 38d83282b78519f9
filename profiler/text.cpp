// text.cpp - see text.h.
#include "text.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>

#include "safe_paths.h"

namespace bspg::profile {

std::string printable_text(const char* bytes, std::size_t size) {
  std::string out;
  for (std::size_t i = 0; i < size && bytes[i] != '\0'; ++i) {
    const auto c = static_cast<unsigned char>(bytes[i]);
    out += c >= 0x20 && c < 0x7f ? static_cast<char>(c) : '?';
  }
  return out;
}

void append_fixed(std::string& out, double value, int decimals) {
  char text[80];
  auto [end, error] =
      std::to_chars(text, text + sizeof text, value, std::chars_format::fixed, decimals);
  if (error != std::errc()) {  // too many digits for fixed notation: huge values only
    const int n = std::snprintf(text, sizeof text, "%.17g", value);
    out.append(text, static_cast<std::size_t>(n));
    return;
  }
  if (std::memchr(text, '.', static_cast<std::size_t>(end - text)) != nullptr) {
    while (end[-1] == '0') --end;
    if (end[-1] == '.') --end;
  }
  if (end - text == 2 && text[0] == '-' && text[1] == '0') {
    out += '0';
    return;
  }
  out.append(text, end);
}

void append_integer(std::string& out, std::uint64_t value) {
  char text[24];
  const auto result = std::to_chars(text, text + sizeof text, value);
  out.append(text, result.ptr);
}

void append_integer(std::string& out, std::int64_t value) {
  char text[24];
  const auto result = std::to_chars(text, text + sizeof text, value);
  out.append(text, result.ptr);
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string gnuplot_quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

std::string human_seconds(double seconds) {
  char text[64];
  const double size = std::fabs(seconds);
  if (size >= 1 || size == 0)
    std::snprintf(text, sizeof text, "%.3f s", seconds);
  else if (size >= 1e-3)
    std::snprintf(text, sizeof text, "%.3f ms", seconds * 1e3);
  else
    std::snprintf(text, sizeof text, "%.1f us", seconds * 1e6);
  return text;
}

std::string human_bytes(std::uint64_t bytes) {
  char text[64];
  const double b = static_cast<double>(bytes);
  if (bytes < 10000)
    std::snprintf(text, sizeof text, "%llu B", static_cast<unsigned long long>(bytes));
  else if (b < 10000.0 * 1024)
    std::snprintf(text, sizeof text, "%.1f KiB", b / 1024);
  else if (b < 10000.0 * 1024 * 1024)
    std::snprintf(text, sizeof text, "%.1f MiB", b / (1024.0 * 1024));
  else
    std::snprintf(text, sizeof text, "%.1f GiB", b / (1024.0 * 1024 * 1024));
  return text;
}

OutputFile::~OutputFile() {
  if (file_ != nullptr) std::fclose(file_);
}

bool OutputFile::open(const std::string& path) {
  path_ = path;
  error_.clear();
  buffer_.clear();
  // Never through a link, never into a directory that others can write (safe_paths.h).
  std::string why;
  file_ = safe_paths::create_stream(path, "w", why);
  if (file_ == nullptr) {
    error_ = std::string("cannot write ") + path + ": " + why;
    return false;
  }
  buffer_.reserve(kFlushBytes + 4096);
  return true;
}

void OutputFile::flush() {
  if (file_ != nullptr && error_.empty() && !buffer_.empty() &&
      std::fwrite(buffer_.data(), 1, buffer_.size(), file_) != buffer_.size())
    error_ = std::string("writing ") + path_ + " failed: " + std::strerror(errno);
  buffer_.clear();
}

bool OutputFile::close() {
  if (file_ == nullptr) return false;
  flush();
  if (std::fclose(file_) != 0 && error_.empty())
    error_ = std::string("writing ") + path_ + " failed: " + std::strerror(errno);
  file_ = nullptr;
  return error_.empty();
}

}  // namespace bspg::profile
