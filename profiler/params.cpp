// params.cpp - see params.h.
#include "params.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>

namespace bspg::profile {

BspParameters read_bsp_parameters(const std::string& file) {
  BspParameters params;
  params.file = file;
  std::ifstream in(file);
  if (!in) {
    params.problem = file + ": " + std::strerror(errno);
    return params;
  }
  // bspbench writes its parameters in the comment lines before the table.
  constexpr int kHeaderLines = 64;
  std::string line;
  for (int n = 0; n < kHeaderLines && std::getline(in, line); ++n) {
    if (line.empty() || line[0] != '#') break;
    int p = 0;
    if (std::sscanf(line.c_str(), "# bspbench: %*[^,], p = %d", &p) == 1 && p > 0)
      params.measured_p = p;
    double g_us = 0, g_flop = 0, l_us = 0;
    if (std::sscanf(line.c_str(), "# bspg: g = %lf us = %lf flop, l = %lf us", &g_us, &g_flop,
                    &l_us) == 3) {
      if (!std::isfinite(g_us) || !std::isfinite(l_us) || g_us < 0 || l_us < 0) {
        params.problem = file + ": g = " + std::to_string(g_us) +
                         " us, l = " + std::to_string(l_us) +
                         " us cannot be costs (measure them again)";
        return params;
      }
      params.g_s = g_us * 1e-6;
      params.l_s = l_us * 1e-6;
      params.found = true;
    }
  }
  if (!params.found) params.problem = file + ": no \"# bspg: g = ...\" line (not bspbench's)";
  return params;
}

}  // namespace bspg::profile
