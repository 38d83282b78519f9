// params.cpp - bsp_s, bsp_l, bsp_g, bsp_nhalf (bsp_level1.h): the machine's BSP parameters from
// bspbench's saved results (PREFIX.dat), or fixed defaults. Read once per process; no superstep.
#include <bsp_level1.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

namespace {

struct Parameters {
  double s = 1e9;      // flop/s
  double l = 10000.0;  // flop
  double g = 100.0;    // flop per word
  int nhalf = 100;     // words
};

// The value before " flop" in text after `key` ("g = 0.02 us = 119.4 flop" gives 119.4 for
// "g = "), or a negative number when it is not there.
double flop_value(const std::string& text, const char* key) {
  const size_t at = text.find(key);
  if (at == std::string::npos) return -1;
  const size_t unit = text.find(" flop", at);
  if (unit == std::string::npos) return -1;
  const size_t number = text.rfind("= ", unit);
  if (number == std::string::npos || number < at) return -1;
  const std::string digits = text.substr(number + 2, unit - number - 2);
  char* end = nullptr;
  const double value = std::strtod(digits.c_str(), &end);
  return end != digits.c_str() && *end == '\0' ? value : -1;
}

// Reads s, g and l from a bspbench .dat file. "" when done, else why not.
std::string read_bspbench(const std::string& path, Parameters& out) {
  std::ifstream file(path);
  if (!file) return std::strerror(errno);
  double s = -1, g = -1, l = -1;
  std::string line;
  while (std::getline(file, line)) {
    if (line.rfind("# r = ", 0) == 0) {
      char* end = nullptr;
      const double value = std::strtod(line.c_str() + 6, &end);
      if (end != line.c_str() + 6 && std::strncmp(end, " flop/s", 7) == 0) s = value;
    } else if (line.rfind("# bspg:", 0) == 0) {
      const size_t comma = line.find(", l = ");
      if (comma == std::string::npos) continue;
      g = flop_value(line.substr(0, comma), "g = ");
      l = flop_value(line.substr(comma), "l = ");
    }
  }
  if (!(s > 0 && std::isfinite(s)) || !(g > 0 && std::isfinite(g)) ||
      !(l >= 0 && std::isfinite(l))) {
    return "no \"# r = R flop/s\" and \"# bspg: g = ... flop, l = ... flop\" lines with "
           "positive values (is it bspbench's PREFIX.dat?)";
  }
  out.s = s;
  out.g = g;
  out.l = l;
  const double half = std::ceil(l / g);
  out.nhalf = half < 1 ? 1 : half > 1e9 ? 1000000000 : static_cast<int>(half);
  return "";
}

Parameters load(const char* call) {
  Parameters params;
  const char* named = std::getenv("BSPG_BSPBENCH");
  if (named != nullptr && named[0] != '\0') {
    if (std::strcmp(named, "none") == 0) return params;
    const std::string why = read_bspbench(named, params);
    if (!why.empty()) {
      // Not a collective call, possibly outside the SPMD section: no pid in the message.
      bsp_abort("bspg: %s: environment variable BSPG_BSPBENCH='%s': cannot use it: %s\n", call,
                named, why.c_str());
    }
    return params;
  }
  for (const char* path : {"bspbench.dat", "/tmp/bspbench.dat"}) {
    Parameters found;
    if (read_bspbench(path, found).empty()) return found;
  }
  return params;
}

const Parameters& parameters(const char* call) {
  static const Parameters params = load(call);
  return params;
}

}  // namespace

extern "C" {

double bsp_s(void) { return parameters("bsp_s").s; }
double bsp_l(void) { return parameters("bsp_l").l; }
double bsp_g(void) { return parameters("bsp_g").g; }
int bsp_nhalf(void) { return parameters("bsp_nhalf").nhalf; }

}  // extern "C"
