// params.cpp - see params.h.
#include "params.h"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "safe_paths.h"

namespace bspg::profile {

BspParameters read_bsp_parameters(const std::string& file) {
  BspParameters params;
  params.file = file;
  // A FIFO or a device in its place is refused at once instead of waited on.
  std::string why;
  const int fd = safe_paths::open_regular_file(file, why);
  if (fd < 0) {
    params.problem = file + ": " + why;
    return params;
  }
  std::FILE* in = fdopen(fd, "r");
  if (in == nullptr) {
    params.problem = file + ": " + std::strerror(errno);
    close(fd);
    return params;
  }
  // bspbench writes its parameters in the comment lines before the table.
  constexpr int kHeaderLines = 64;
  std::string line;
  char piece[512];
  for (int n = 0; n < kHeaderLines && std::fgets(piece, sizeof piece, in) != nullptr; ++n) {
    // A longer line comes in pieces: only the first can be a "# bspg:" line.
    line = piece;
    if (!line.empty() && line.back() == '\n') line.pop_back();
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
        std::fclose(in);
        return params;
      }
      params.g_s = g_us * 1e-6;
      params.l_s = l_us * 1e-6;
      params.found = true;
    }
  }
  std::fclose(in);
  if (!params.found) params.problem = file + ": no \"# bspg: g = ...\" line (not bspbench's)";
  return params;
}

}  // namespace bspg::profile
