// params.h - the BSP parameters g and l of this machine, as bspbench measured and saved them.
#ifndef BSPG_PROFILER_PARAMS_H
#define BSPG_PROFILER_PARAMS_H

#include <string>

namespace bspg::profile {

struct BspParameters {
  bool found = false;
  double g_s = 0;       // seconds per 64-bit word of an h-relation
  double l_s = 0;       // seconds of a superstep's fixed cost
  int measured_p = 0;   // processes bspbench ran with; 0: not said
  std::string file;     // where they were looked for
  std::string problem;  // when not found: why
};

// Reads the "# bspg: g = ... us = ... flop, l = ... us = ... flop" line that bspbench writes
// at the top of its .dat file (g in microseconds per word, l in microseconds).
BspParameters read_bsp_parameters(const std::string& file);

// The BSP model's cost of a superstep: w + g*h + l, with h in bytes (8 to a word).
inline double predicted_seconds(const BspParameters& params, double max_compute_s, double h_bytes) {
  return max_compute_s + params.g_s * (h_bytes / 8) + params.l_s;
}

}  // namespace bspg::profile

#endif
