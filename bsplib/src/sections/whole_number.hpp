// whole_number.hpp - the whole numbers that bsprun gives the processes in their environment
// (master mode's pool, BSPG_SPARES, BSPG_RECOVERIES), read strictly: digits only.
#pragma once

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <string>

namespace bspg {

// A whole number in [low, high] (low >= 0), or -1.
inline long whole_number(const std::string& text, long low, long high) {
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) return -1;
  errno = 0;
  char* end = nullptr;
  const long value = std::strtol(text.c_str(), &end, 10);
  if (*end != '\0' || errno == ERANGE || value < low || value > high) return -1;
  return value;
}

}  // namespace bspg
