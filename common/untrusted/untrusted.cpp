// untrusted.cpp - forms of names, addresses, users and paths; escaping for the terminal; reading
// a file that may be anything (a FIFO, /dev/zero, a huge file).
#include "untrusted.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

#include "safe_paths.h"

namespace bspg::untrusted {
namespace {

bool is_ascii_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

std::string hex_escape(unsigned char byte) {
  static const char kHex[] = "0123456789abcdef";
  return std::string("\\x") + kHex[byte >> 4] + kHex[byte & 15];
}

// Length of the valid UTF-8 sequence starting at text[i] (2-4), or 0 when there is none.
// Overlong forms, surrogates and code points above U+10FFFF are not valid.
std::size_t utf8_sequence_length(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[i + k]); };
  const unsigned char lead = byte(0);
  std::size_t length = 0;
  unsigned long code = 0;
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
    code = lead & 0x1fu;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    code = lead & 0x0fu;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    code = lead & 0x07u;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  for (std::size_t k = 1; k < length; ++k) {
    if ((byte(k) & 0xc0) != 0x80) return 0;
    code = (code << 6) | (byte(k) & 0x3fu);
  }
  const bool overlong = (length == 3 && code < 0x800) || (length == 4 && code < 0x10000);
  if (overlong || (code >= 0xd800 && code <= 0xdfff) || code > 0x10ffff) return 0;
  return length;
}

// A C1 control character (U+0080-U+009F) is the two bytes 0xc2 0x80-0x9f in UTF-8.
bool is_c1_at(std::string_view text, std::size_t i) {
  return i + 1 < text.size() && static_cast<unsigned char>(text[i]) == 0xc2 &&
         static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
         static_cast<unsigned char>(text[i + 1]) <= 0x9f;
}

bool is_c0_or_del(unsigned char byte) { return byte < 0x20 || byte == 0x7f; }

std::string control_name(unsigned char byte) {
  switch (byte) {
    case '\0':
      return "a NUL byte (\\x00)";
    case '\n':
      return "a newline (\\n)";
    case '\r':
      return "a carriage return (\\r)";
    case '\t':
      return "a tab (\\t)";
    case 0x1b:
      return "an escape character (\\x1b)";
    default:
      return "a control character (" + hex_escape(byte) + ")";
  }
}

std::string starts_with_dash() {
  return "it starts with '-' (ssh and mpirun would read it as an option)";
}

// "16 MiB", or a number of bytes for a limit below a MiB.
std::string size_text(std::size_t bytes) {
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes) + " bytes";
}

bool is_ipv4(const std::string& text) {
  in_addr address{};
  return inet_pton(AF_INET, text.c_str(), &address) == 1;
}

bool is_ipv6(const std::string& text) {
  in6_addr address{};
  return inet_pton(AF_INET6, text.c_str(), &address) == 1;
}

}  // namespace

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte == '\n') {
      out += "\\n";
    } else if (byte == '\r') {
      out += "\\r";
    } else if (byte == '\t') {
      out += "\\t";
    } else if (is_c0_or_del(byte)) {
      out += hex_escape(byte);
    } else if (byte >= 0x80) {
      const std::size_t length = utf8_sequence_length(text, i);
      if (length == 0 || is_c1_at(text, i)) {
        out += hex_escape(byte);  // one byte at a time: the next may start a valid sequence
        ++i;
        continue;
      }
      out.append(text.substr(i, length));
      i += length;
      continue;
    } else {
      out += static_cast<char>(byte);
    }
    ++i;
  }
  return out;
}

std::string excerpt(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return printable(text);
  return printable(text.substr(0, max_bytes)) + "...";
}

std::string control_character_problem(std::string_view text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    const std::string at = " at character " + std::to_string(i + 1);
    if (is_c0_or_del(byte)) return "it contains " + control_name(byte) + at;
    if (is_c1_at(text, i)) {
      return "it contains a control character (U+00" +
             hex_escape(static_cast<unsigned char>(text[i + 1])).substr(2) + ")" + at;
    }
  }
  return "";
}

std::string host_name_problem(std::string_view text) {
  if (text.empty()) return "it is empty";
  if (std::string problem = control_character_problem(text); !problem.empty()) return problem;
  if (text.front() == '-') return starts_with_dash();
  for (char c : text) {
    if (!is_ascii_alnum(c) && c != '-' && c != '_' && c != '.') {
      return "'" + printable(std::string_view(&c, 1)) +
             "' is not allowed (only letters, digits, '-', '_' and dots are)";
    }
  }
  if (text.size() > 253) return "it is longer than 253 characters";
  bool all_numeric = true;
  std::size_t start = 0;
  for (;;) {
    const std::size_t dot = text.find('.', start);
    const std::string_view part =
        text.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (part.empty()) return "it has an empty part (a dot at either end, or two dots in a row)";
    if (part.size() > 63) return "a part between dots is longer than 63 characters";
    if (part.front() == '-') return "the part '" + std::string(part) + "' starts with '-'";
    for (char c : part) all_numeric = all_numeric && is_digit(c);
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  if (all_numeric && !is_ipv4(std::string(text)))
    return "it is not an IPv4 address (four numbers from 0 to 255 separated by dots)";
  return "";
}

std::string address_without_brackets(std::string_view text) {
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']')
    return std::string(text.substr(1, text.size() - 2));
  return std::string(text);
}

std::string address_problem(std::string_view text) {
  if (text.empty()) return "it is empty";
  if (std::string problem = control_character_problem(text); !problem.empty()) return problem;
  if (text.front() == '-') return starts_with_dash();
  const std::string bare = address_without_brackets(text);
  if (bare.find(':') != std::string::npos || bare.size() != text.size()) {
    if (bare.find('%') != std::string::npos)
      return "IPv6 addresses with a zone (%interface) are not supported";
    if (!is_ipv6(bare)) return "it is not an IPv6 address, nor a host name or IPv4 address";
    return "";
  }
  return host_name_problem(text);
}

std::string user_name_problem(std::string_view text) {
  if (text.empty()) return "it is empty";
  if (std::string problem = control_character_problem(text); !problem.empty()) return problem;
  if (text.front() == '-') return starts_with_dash();
  if (text.size() > 64) return "it is longer than 64 characters";
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const bool final_dollar = c == '$' && i + 1 == text.size();
    if (!is_ascii_alnum(c) && c != '.' && c != '_' && c != '-' && !final_dollar) {
      return "'" + printable(std::string_view(&c, 1)) +
             "' is not allowed (only letters, digits, '.', '_' and '-' are)";
    }
  }
  return "";
}

std::string absolute_path_problem(std::string_view text) {
  if (text.empty()) return "it is empty";
  if (std::string problem = control_character_problem(text); !problem.empty()) return problem;
  if (text.size() > 4095) return "it is longer than 4095 bytes";
  if (text.front() != '/') return "it is not an absolute path";
  return "";
}

bool is_environment_name(std::string_view text) {
  if (text.empty() || is_digit(text.front())) return false;
  for (char c : text)
    if (!is_ascii_alnum(c) && c != '_') return false;
  return true;
}

std::string job_id_problem(std::string_view id) {
  if (id.empty() || id.size() > 64) return "it must have 1 to 64 characters";
  if (id[0] == '.' || id[0] == '-') return "it must not start with '.' or '-'";
  for (char c : id)
    if (!is_ascii_alnum(c) && c != '.' && c != '_' && c != '-')
      return "only letters, digits, '.', '_' and '-' may name a job";
  return "";
}

std::string checkpoint_dir_problem(std::string_view dir) {
  if (std::string problem = control_character_problem(dir); !problem.empty()) return problem;
  if (dir.size() > 1024) return "it is longer than 1024 bytes";
  const bool home = dir.rfind("~/", 0) == 0;
  if (!home && (dir.empty() || dir[0] != '/')) return "it must be an absolute path";
  std::istringstream parts(std::string(dir.substr(home ? 2 : 1)));
  std::string part;
  bool any = false;
  while (std::getline(parts, part, '/')) {
    if (part == "." || part == "..") return "it must not have a '.' or '..' component";
    any = any || !part.empty();
  }
  if (!any) return "it must name a directory below / (or below the home directory)";
  return "";
}

bool read_regular_file(const std::string& path, std::size_t max_bytes, std::string& text,
                       std::string& problem) {
  // Not blocking on a FIFO, and only a regular file (safe_paths.h).
  const int fd = safe_paths::open_regular_file(path, problem);
  if (fd < 0) return false;
  struct stat info {};
  if (fstat(fd, &info) != 0) {
    problem = std::strerror(errno);
  } else if (static_cast<unsigned long long>(info.st_size) > max_bytes) {
    problem = "it is " + std::to_string(info.st_size) + " bytes, more than the " +
              size_text(max_bytes) + " allowed";
  }
  if (!problem.empty()) {
    close(fd);
    return false;
  }
  // Read at most one byte beyond the limit: a file that grows after fstat is refused too.
  text.clear();
  char buffer[65536];
  for (;;) {
    const ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      problem = std::strerror(errno);
      break;
    }
    if (n == 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
    if (text.size() > max_bytes) {
      problem = "it grew beyond the " + size_text(max_bytes) + " allowed";
      break;
    }
  }
  close(fd);
  return problem.empty();
}

}  // namespace bspg::untrusted
