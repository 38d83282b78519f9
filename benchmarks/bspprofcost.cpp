// bspprofcost - what the superstep profiler costs: a loop of small supersteps (each process puts
// one word to its right neighbour, then bsp_sync) timed with profiling off and on, alternately,
// in one run (each timing is one SPMD section; BSPG_PROFILE is set only for the profiled ones).
// Prints the median time per superstep of each, their ratio, and the profile's bytes per
// superstep and process. Its processes' peak memory with a long run: /usr/bin/time -v.
//
//   mpirun -np 2 bspprofcost [--supersteps N] [--rounds R] [--dir DIR]
#include <bsp.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_support.h"

namespace bspg::bench {
extern const char kBspprofcostManual[];
}

namespace {

// --help prints the manual page, bspprofcost(1) (man/pages/bspprofcost.1.md), rendered as text at
// build time, so that the two cannot say different things.
const char* const kUsage = bspg::bench::kBspprofcostManual;

long supersteps = 1000;
int rounds = 7;
std::string dir = "bspprofcost-profile";
double seconds_per_superstep = 0;  // of the last section, on process 0

void loop() {
  bsp_begin(bsp_nprocs());
  const int p = bsp_nprocs(), s = bsp_pid();
  static double word_in, word_out;
  bsp_push_reg(&word_in, sizeof word_in);
  bsp_sync();
  bsp_sync();  // all are here: the timing starts together
  const double start = bsp_time();
  for (long i = 0; i < supersteps; ++i) {
    word_out = static_cast<double>(i);
    bsp_put((s + 1) % p, &word_out, &word_in, 0, sizeof word_out);
    bsp_sync();
  }
  if (s == 0) seconds_per_superstep = (bsp_time() - start) / static_cast<double>(supersteps);
  bsp_pop_reg(&word_in);
  bsp_end();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  bsp_init(loop, argc, argv);
  bench::CommonOptions common;  // only its help: no --quick or --reps here
  long rounds_read = rounds;
  bench::Option help = bench::flag("help", &common.help);
  help.letter = 'h';
  const std::string error = bench::read_options(
      argc, argv, "bspprofcost",
      {help, bench::count("supersteps", 1, 100000000, &supersteps),
       bench::count("rounds", 1, 1000, &rounds_read), bench::text("dir", "directory", &dir)});
  if (const auto status = bench::exit_before_begin(error, common, "bspprofcost", kUsage))
    return *status;
  rounds = static_cast<int>(rounds_read);
  std::vector<double> off, on;
  int sections = 0, last_profiled = 0;
  for (int r = 0; r < rounds; ++r)
    for (int profiled = 0; profiled < 2; ++profiled) {
      const bool on_now = (profiled + r) % 2 == 1;  // alternate which goes first
      if (on_now)
        setenv("BSPG_PROFILE", dir.c_str(), 1);
      else
        unsetenv("BSPG_PROFILE");
      if (on_now) last_profiled = sections;
      loop();
      ++sections;
      (on_now ? on : off).push_back(seconds_per_superstep);
    }
  struct stat st {};
  const std::string file = dir + "/raw/a0.s" + std::to_string(last_profiled) + ".p0.bspprof";
  const bool have_file = stat(file.c_str(), &st) == 0;
  const double off_us = median(off) * 1e6, on_us = median(on) * 1e6;
  std::printf("bspprofcost: p = %d, %ld supersteps of one single-word put, %d rounds each\n",
              bsp_nprocs(), supersteps, rounds);
  std::printf("  profiling off: %8.3f us per superstep (median)\n", off_us);
  std::printf("  profiling on:  %8.3f us per superstep (median)\n", on_us);
  std::printf("  on/off: %.3fx (overhead %+.1f%%)\n", on_us / off_us, (on_us / off_us - 1) * 100);
  if (have_file)
    std::printf("  profile: %.1f bytes per superstep and process (%s)\n",
                static_cast<double>(st.st_size) / static_cast<double>(supersteps + 3),
                file.c_str());
  return 0;
}
