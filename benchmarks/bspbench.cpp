// bspbench - measures the BSP parameters r, g and l of bspg by the BSPedupack bspbench
// method (Bisseling, "Parallel Scientific Computation"), and in the same run the same
// h-relations done with raw MPI, so that the cost of bspg over MPI is visible. See --help.
#include <mpi.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "bench_support.h"
#include "bsp.h"
#include "bspg.h"
#include "hrelation.h"
#include "safe_paths.h"

extern char** environ;

namespace bspg::bench {
extern const char kBspbenchManual[];
}

namespace {

constexpr const char* kProgram = "bspbench";
constexpr long kHmaxLimit = 1000000;
constexpr int kFlopVectorLength = 1024;  // both vectors stay in the L1 cache
constexpr long kTableRowsShownInFull = 40;

// --help prints the manual page, bspbench(1) (man/pages/bspbench.1.md), rendered as text at
// build time, so that the two cannot say different things.
const char* const kUsage = bspg::bench::kBspbenchManual;

struct Options : bench::CommonOptions {
  long hmax = 256;
  bool plot = true;
  std::string prefix;  // empty: the default place
};

// Fills opt from the command line. Before bsp_begin: the exit status when main ends here,
// after an option error or --help (see bench::exit_before_begin).
std::optional<int> parse_options(int argc, char** argv, Options& opt) {
  bool hmax_given = false;
  const std::string error =
      bench::read_options(argc, argv, kProgram, opt,
                          {bench::flag("no-plot", &opt.plot, false),
                           bench::count("hmax", 1, kHmaxLimit, &opt.hmax, &hmax_given),
                           bench::text("out", "file name prefix", &opt.prefix)});
  if (error.empty() && opt.quick && !hmax_given) opt.hmax = 32;  // read_options does reps
  return bench::exit_before_begin(error, opt, kProgram, kUsage);
}

volatile double flop_sink;  // keeps the DAXPY results alive

// This process's computing rate in flop/s: DAXPY sweeps over L1-resident vectors, timed
// over `runs` runs of about `run_seconds` each; the median run counts.
double measure_flop_rate(int runs, double run_seconds) {
  const int n = kFlopVectorLength;
  std::vector<double> x(n), y(n);
  for (int i = 0; i < n; ++i) {
    x[i] = 1.0 / (i + 1);
    y[i] = i;
  }
  const double alpha = 1.0 / 3.0;
  auto sweeps = [&](long count) {
    for (long s = 0; s < count; ++s) {
      const double a = s % 2 == 0 ? alpha : -alpha;  // alternating sign keeps y bounded
      for (int i = 0; i < n; ++i) y[i] += a * x[i];
      // Each sweep really happens: the compiler may not merge or reorder sweeps.
      asm volatile("" : : "r"(y.data()) : "memory");
    }
  };
  long count = 16;
  double elapsed = 0;
  while (count < (1L << 40)) {
    const double start = bench::seconds_now();
    sweeps(count);
    elapsed = bench::seconds_now() - start;
    if (elapsed >= run_seconds / 4) break;
    count *= 2;
  }
  count = std::max(1L, static_cast<long>(count * run_seconds / std::max(elapsed, 1e-9)));
  std::vector<double> rates;
  for (int r = 0; r < runs; ++r) {
    const double start = bench::seconds_now();
    sweeps(count);
    const double seconds = bench::seconds_now() - start;
    rates.push_back(2.0 * n * count / std::max(seconds, 1e-12));
  }
  flop_sink = y[0] + y[n - 1];
  return bench::median(rates);
}

// Times every h-relation h = 0..hmax, reps times each, bspg and raw MPI alternating.
// Returns this process's times in seconds, index h * reps + rep.
void time_hrelations(const Options& opt, std::vector<double>& bspg, std::vector<double>& raw) {
  bench::WordRelation relation(opt.hmax);
  bsp_sync();  // the registration takes effect
  int serial = 0;
  auto timed = [&](long h, bool use_bspg) {
    const int rep = serial++;
    relation.prepare(h, rep);
    MPI_Barrier(MPI_COMM_WORLD);  // same start for both variants, outside the timing
    const double start = bench::seconds_now();
    if (use_bspg) {
      relation.exchange_bspg(h);
    } else {
      relation.exchange_raw(h);
    }
    const double seconds = bench::seconds_now() - start;
    const std::string why = relation.check(h, rep);
    if (!why.empty()) {
      bsp_abort("%s: the %s h-relation delivered wrong data on process %d: %s\n", kProgram,
                use_bspg ? "bspg" : "raw MPI", bsp_pid(), why.c_str());
    }
    return seconds;
  };
  // Warm-up: first contacts and first-touch of buffers belong to no measurement.
  for (int w = 0; w < 2; ++w) {
    timed(opt.hmax, true);
    timed(opt.hmax, false);
  }
  bspg.assign((opt.hmax + 1) * opt.reps, 0);
  raw.assign((opt.hmax + 1) * opt.reps, 0);
  for (long h = 0; h <= opt.hmax; ++h) {
    for (long rep = 0; rep < opt.reps; ++rep) {
      bspg[h * opt.reps + rep] = timed(h, true);
      raw[h * opt.reps + rep] = timed(h, false);
    }
  }
  relation.release();
  bsp_sync();
}

// ---- Two levels: inside each subjob and across subjobs (a job on several sites) ---------------

// Single-word puts to partners only: the other members of this process's subjob (inside), or the
// processes of the other subjobs (across). Both relations are symmetric, so a process receives
// from exactly its partners; each partner's words land in a block of their own.
class PartnerRelation {
 public:
  PartnerRelation(const std::vector<int>& subjob_of, bool inside, long hmax)
      : subjob_of_(subjob_of), inside_(inside), hmax_(hmax), me_(bsp_pid()) {
    partners_ = partners_of(me_);
    send_.assign(static_cast<size_t>(hmax), 0);
    recv_.assign(partners_.size() * static_cast<size_t>(hmax) + 1, 0);
    bsp_push_reg(recv_.data(), static_cast<int>(recv_.size() * sizeof(double)));
    // Where this process's words land at each partner: its index among that partner's partners;
    // and how many partners that partner deals its words to.
    for (int q : partners_) {
      const std::vector<int> theirs = partners_of(q);
      slot_at_.push_back(
          static_cast<long>(std::find(theirs.begin(), theirs.end(), me_) - theirs.begin()));
      their_count_.push_back(static_cast<long>(theirs.size()));
    }
  }
  void prepare(long h, int rep) {
    for (long i = 0; i < h; ++i) send_[static_cast<size_t>(i)] = value(rep, me_, i);
    std::fill(recv_.begin(), recv_.end(), -1.0);
  }
  // Word i to partner i mod n, in the partner's block for this process at position i / n.
  void exchange(long h) {
    const long n = static_cast<long>(partners_.size());
    for (long i = 0; i < h && n > 0; ++i) {
      const size_t k = static_cast<size_t>(i % n);
      const long at = slot_at_[k] * hmax_ + i / n;
      bsp_put(partners_[k], &send_[static_cast<size_t>(i)], recv_.data(),
              static_cast<int>(at * static_cast<long>(sizeof(double))), sizeof(double));
    }
    if (inside_)
      bspg_group_sync(bspg_subjob_group());
    else
      bsp_sync();
  }
  // "" when exactly this repetition's words from every partner arrived.
  std::string check(long h, int rep) const {
    for (size_t j = 0; j < partners_.size(); ++j) {
      // Partner j sent me its words i with i mod (its partner count) == my index among them.
      const int q = partners_[j];
      const long n = their_count_[j];
      for (long i = slot_at_[j]; i < h; i += n) {
        const double got = recv_[j * static_cast<size_t>(hmax_) + static_cast<size_t>(i / n)];
        if (got != value(rep, q, i))
          return "word " + std::to_string(i) + " of process " + std::to_string(q) + " is " +
                 std::to_string(got);
      }
    }
    return "";
  }
  void release() { bsp_pop_reg(recv_.data()); }

 private:
  std::vector<int> partners_of(int pid) const {
    std::vector<int> out;
    for (int q = 0; q < static_cast<int>(subjob_of_.size()); ++q)
      if (q != pid &&
          (subjob_of_[static_cast<size_t>(q)] == subjob_of_[static_cast<size_t>(pid)]) == inside_)
        out.push_back(q);
    return out;
  }
  static double value(int rep, int src, long i) { return rep * 1e6 + src * 1e4 + i % 9973; }
  std::vector<int> subjob_of_;
  bool inside_;
  long hmax_;
  int me_;
  std::vector<int> partners_;
  std::vector<long> slot_at_, their_count_;
  std::vector<double> send_, recv_;
};

// The h of the two-level measurements: 9 points from 0 to hmax (each superstep across sites
// costs a wide-area round trip, so not every h).
std::vector<long> level_points(long hmax) {
  std::vector<long> points;
  for (int k = 0; k <= 8; ++k) {
    const long h = hmax * k / 8;
    if (points.empty() || h != points.back()) points.push_back(h);
  }
  return points;
}

// Times the inside or across relation at each h of level_points, reps times; this process's
// seconds, index point * reps + rep.
std::vector<double> time_level(const Options& opt, const std::vector<int>& subjob_of, bool inside) {
  PartnerRelation relation(subjob_of, inside, opt.hmax);
  bsp_sync();
  const std::vector<long> points = level_points(opt.hmax);
  std::vector<double> times(points.size() * static_cast<size_t>(opt.reps), 0);
  int serial = 0;
  auto timed = [&](long h) {
    const int rep = serial++;
    relation.prepare(h, rep);
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = bench::seconds_now();
    relation.exchange(h);
    const double seconds = bench::seconds_now() - start;
    const std::string why = relation.check(h, rep);
    if (!why.empty())
      bsp_abort("%s: the h-relation %s delivered wrong data on process %d: %s\n", kProgram,
                inside ? "inside the subjobs" : "across subjobs", bsp_pid(), why.c_str());
    return seconds;
  };
  timed(opt.hmax);  // warm-up
  for (size_t k = 0; k < points.size(); ++k)
    for (long rep = 0; rep < opt.reps; ++rep)
      times[k * static_cast<size_t>(opt.reps) + static_cast<size_t>(rep)] = timed(points[k]);
  relation.release();
  bsp_sync();
  return times;
}

struct LevelSummary {
  std::vector<double> h, inside_median, across_median;  // microseconds
  bench::LineFit inside_fit, across_fit;
  int nsubjobs = 0;
};

LevelSummary summarize_levels(const Options& opt, const std::vector<double>& inside,
                              const std::vector<double>& across, int nsubjobs) {
  LevelSummary sum;
  sum.nsubjobs = nsubjobs;
  const std::vector<long> points = level_points(opt.hmax);
  const auto reps = static_cast<size_t>(opt.reps);
  for (size_t k = 0; k < points.size(); ++k) {
    std::vector<double> a(inside.begin() + static_cast<long>(k * reps),
                          inside.begin() + static_cast<long>((k + 1) * reps));
    std::vector<double> b(across.begin() + static_cast<long>(k * reps),
                          across.begin() + static_cast<long>((k + 1) * reps));
    for (double& t : a) t *= 1e6;
    for (double& t : b) t *= 1e6;
    sum.h.push_back(static_cast<double>(points[k]));
    sum.inside_median.push_back(bench::median(a));
    sum.across_median.push_back(bench::median(b));
  }
  sum.inside_fit = bench::fit_line(sum.h, sum.inside_median);
  sum.across_fit = bench::fit_line(sum.h, sum.across_median);
  return sum;
}

void print_levels(const LevelSummary& sum, double r) {
  const double flops_per_us = r * 1e-6;
  std::printf("\nTwo levels, %d subjobs (h = 0..%g in %zu steps, medians):\n", sum.nsubjobs,
              sum.h.back(), sum.h.size() - 1);
  std::printf("%6s %22s %22s\n", "h", "inside subjobs (us)", "across subjobs (us)");
  for (size_t k = 0; k < sum.h.size(); ++k)
    std::printf("%6.0f %22.2f %22.2f\n", sum.h[k], sum.inside_median[k], sum.across_median[k]);
  auto line = [&](const char* who, const bench::LineFit& fit) {
    std::printf("  %-16s g = %10.1f flop (%8.4f us) per word    l = %10.0f flop (%8.2f us)\n", who,
                fit.slope * flops_per_us, fit.slope, fit.intercept * flops_per_us, fit.intercept);
  };
  line("inside subjobs:", sum.inside_fit);
  line("across subjobs:", sum.across_fit);
  std::printf(
      "  (inside: puts to the subjob's other members, bspg_group_sync of the subjob;\n"
      "   across: puts to the other subjobs' processes only, bsp_sync)\n");
}

struct Summary {
  std::vector<double> h;                        // 0..hmax
  std::vector<double> bspg_median, raw_median;  // microseconds
  std::vector<double> bspg_min, raw_min;        // microseconds
  bench::LineFit bspg_fit, raw_fit;             // microseconds against h
};

Summary summarize(const Options& opt, const std::vector<double>& bspg,
                  const std::vector<double>& raw) {
  Summary sum;
  for (long h = 0; h <= opt.hmax; ++h) {
    const auto first = h * opt.reps, last = first + opt.reps;
    std::vector<double> b(bspg.begin() + first, bspg.begin() + last);
    std::vector<double> r(raw.begin() + first, raw.begin() + last);
    for (double& t : b) t *= 1e6;
    for (double& t : r) t *= 1e6;
    sum.h.push_back(static_cast<double>(h));
    sum.bspg_median.push_back(bench::median(b));
    sum.raw_median.push_back(bench::median(r));
    sum.bspg_min.push_back(*std::min_element(b.begin(), b.end()));
    sum.raw_min.push_back(*std::min_element(r.begin(), r.end()));
  }
  sum.bspg_fit = bench::fit_line(sum.h, sum.bspg_median);
  sum.raw_fit = bench::fit_line(sum.h, sum.raw_median);
  return sum;
}

double ratio(double a, double b) { return b > 0 ? a / b : 0; }

// Rows of the printed table: all of them, or an even selection for a long range.
bool shown_in_table(long h, long hmax) {
  if (hmax + 1 <= kTableRowsShownInFull) return true;
  const long stride = std::max(1L, hmax / 16);
  return h <= 2 || h % stride == 0 || h == hmax;
}

void print_results(const Options& opt, const Summary& sum, double r, const std::string& prefix) {
  std::printf("\n%6s %13s %15s %10s\n", "h", "bspg (us)", "raw MPI (us)", "bspg/raw");
  for (long h = 0; h <= opt.hmax; ++h) {
    if (!shown_in_table(h, opt.hmax)) continue;
    std::printf("%6ld %13.2f %15.2f %10.2f\n", h, sum.bspg_median[h], sum.raw_median[h],
                ratio(sum.bspg_median[h], sum.raw_median[h]));
  }
  if (opt.hmax + 1 > kTableRowsShownInFull) {
    std::printf("(every h from 0 to %ld is in %s.dat)\n", opt.hmax, prefix.c_str());
  }
  const double flops_per_us = r * 1e-6;
  std::printf("\nFitted T(h) = g*h + l, least squares over h = 0..%ld (medians):\n", opt.hmax);
  auto line = [&](const char* who, const bench::LineFit& fit) {
    std::printf("  %-9s g = %10.1f flop (%8.4f us) per word    l = %10.0f flop (%8.2f us)\n", who,
                fit.slope * flops_per_us, fit.slope, fit.intercept * flops_per_us, fit.intercept);
  };
  line("bspg:", sum.bspg_fit);
  line("raw MPI:", sum.raw_fit);
  std::printf("  bspg/raw: g %.2fx    l %.2fx\n", ratio(sum.bspg_fit.slope, sum.raw_fit.slope),
              ratio(sum.bspg_fit.intercept, sum.raw_fit.intercept));
}

// gnuplot single-quoted string: a quote is written twice.
std::string gnuplot_quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

void write_data(FILE* file, const Options& opt, const Summary& sum, double r,
                const LevelSummary* levels) {
  const double flops_per_us = r * 1e-6;
  std::fprintf(file, "# bspbench: h-relations of single-word bsp_put vs raw MPI, p = %d\n",
               bsp_nprocs());
  std::fprintf(file, "# %ld repetitions per h, medians and minima in microseconds\n", opt.reps);
  std::fprintf(file, "# r = %.6g flop/s\n", r);
  std::fprintf(file, "# bspg:    g = %.6g us = %.6g flop, l = %.6g us = %.6g flop\n",
               sum.bspg_fit.slope, sum.bspg_fit.slope * flops_per_us, sum.bspg_fit.intercept,
               sum.bspg_fit.intercept * flops_per_us);
  std::fprintf(file, "# raw MPI: g = %.6g us = %.6g flop, l = %.6g us = %.6g flop\n",
               sum.raw_fit.slope, sum.raw_fit.slope * flops_per_us, sum.raw_fit.intercept,
               sum.raw_fit.intercept * flops_per_us);
  if (levels) {
    std::fprintf(file, "# inside subjobs: g = %.6g us = %.6g flop, l = %.6g us = %.6g flop\n",
                 levels->inside_fit.slope, levels->inside_fit.slope * flops_per_us,
                 levels->inside_fit.intercept, levels->inside_fit.intercept * flops_per_us);
    std::fprintf(file, "# across subjobs: g = %.6g us = %.6g flop, l = %.6g us = %.6g flop\n",
                 levels->across_fit.slope, levels->across_fit.slope * flops_per_us,
                 levels->across_fit.intercept, levels->across_fit.intercept * flops_per_us);
    std::fprintf(file, "# levels (h inside_median_us across_median_us), %d subjobs:\n",
                 levels->nsubjobs);
    for (size_t k = 0; k < levels->h.size(); ++k)
      std::fprintf(file, "# level %ld %.4f %.4f\n", static_cast<long>(levels->h[k]),
                   levels->inside_median[k], levels->across_median[k]);
  }
  std::fprintf(file, "# h bspg_median_us raw_median_us ratio bspg_min_us raw_min_us\n");
  for (size_t i = 0; i < sum.h.size(); ++i) {
    std::fprintf(file, "%ld %.4f %.4f %.4f %.4f %.4f\n", static_cast<long>(sum.h[i]),
                 sum.bspg_median[i], sum.raw_median[i],
                 ratio(sum.bspg_median[i], sum.raw_median[i]), sum.bspg_min[i], sum.raw_min[i]);
  }
}

void write_plot_script(FILE* file, const Options& opt, const Summary& sum, double r,
                       const std::string& prefix, const LevelSummary* levels) {
  const double flops_per_us = r * 1e-6;
  std::fprintf(file, "# bspbench: time of an h-relation against h, bspg and raw MPI, with the\n");
  std::fprintf(file, "# least-squares lines T(h) = g*h + l. Redraw with: gnuplot %s.gp\n",
               prefix.c_str());
  std::fprintf(file, "set terminal pngcairo size 1000,650 font 'Sans,10'\n");
  std::fprintf(file, "set output %s\n", gnuplot_quoted(prefix + ".png").c_str());
  std::fprintf(file,
               "set title \"bspbench: p = %d, r = %.1f Mflop/s, %ld repetitions per h "
               "(medians)\\nbspg: g = %.1f flop, l = %.0f flop     raw MPI: g = %.1f flop, "
               "l = %.0f flop\"\n",
               bsp_nprocs(), r * 1e-6, opt.reps, sum.bspg_fit.slope * flops_per_us,
               sum.bspg_fit.intercept * flops_per_us, sum.raw_fit.slope * flops_per_us,
               sum.raw_fit.intercept * flops_per_us);
  std::fprintf(file, "set xlabel 'h (64-bit words sent and received per process)'\n");
  std::fprintf(file, "set ylabel 'time of one h-relation (microseconds)'\n");
  std::fprintf(file, "set key top left\nset grid\nset xrange [0:%ld]\nset yrange [0:*]\n",
               opt.hmax);
  std::fprintf(file, "g_bspg = %.9g; l_bspg = %.9g; g_raw = %.9g; l_raw = %.9g\n",
               sum.bspg_fit.slope, sum.bspg_fit.intercept, sum.raw_fit.slope,
               sum.raw_fit.intercept);
  if (levels)
    std::fprintf(file, "g_in = %.9g; l_in = %.9g; g_across = %.9g; l_across = %.9g\n",
                 levels->inside_fit.slope, levels->inside_fit.intercept, levels->across_fit.slope,
                 levels->across_fit.intercept);
  const std::string data = gnuplot_quoted(prefix + ".dat");
  std::fprintf(file,
               "plot %s using 1:2 with points pt 7 ps 0.7 lc rgb '#c0392b' "
               "title 'bspg, single-word bsp\\_put (median)', \\\n"
               "     g_bspg*x + l_bspg with lines lw 2 lc rgb '#c0392b' "
               "title sprintf('bspg fit: %%.4f us * h + %%.1f us', g_bspg, l_bspg), \\\n"
               "     %s using 1:3 with points pt 5 ps 0.7 lc rgb '#2471a3' "
               "title 'raw MPI, pack + Alltoall + Alltoallv + unpack (median)', \\\n"
               "     g_raw*x + l_raw with lines lw 2 lc rgb '#2471a3' "
               "title sprintf('raw MPI fit: %%.4f us * h + %%.1f us', g_raw, l_raw)%s\n",
               data.c_str(), data.c_str(), levels ? ", \\" : "");
  if (!levels) return;
  // The two levels: their medians as inline data, and their fits.
  std::fprintf(file,
               "     '-' using 1:2 with points pt 9 ps 1 lc rgb '#1e8449' "
               "title 'inside subjobs, bspg\\_group\\_sync (median)', \\\n"
               "     g_in*x + l_in with lines lw 2 dt 2 lc rgb '#1e8449' "
               "title sprintf('inside fit: %%.4f us * h + %%.1f us', g_in, l_in), \\\n"
               "     '-' using 1:2 with points pt 11 ps 1 lc rgb '#7d3c98' "
               "title 'across subjobs, bsp\\_sync (median)', \\\n"
               "     g_across*x + l_across with lines lw 2 dt 2 lc rgb '#7d3c98' "
               "title sprintf('across fit: %%.4f us * h + %%.1f us', g_across, l_across)\n");
  for (int which = 0; which < 2; ++which) {
    for (size_t k = 0; k < levels->h.size(); ++k)
      std::fprintf(file, "%.0f %.4f\n", levels->h[k],
                   which == 0 ? levels->inside_median[k] : levels->across_median[k]);
    std::fprintf(file, "e\n");
  }
}

// Runs gnuplot on the script; "" on success, else what went wrong.
std::string run_gnuplot(const std::string& script) {
  std::vector<char*> args = {const_cast<char*>("gnuplot"), const_cast<char*>(script.c_str()),
                             nullptr};
  pid_t child = 0;
  const int err = posix_spawnp(&child, "gnuplot", nullptr, nullptr, args.data(), environ);
  if (err != 0) {
    return std::string("cannot start gnuplot: ") + std::strerror(err) +
           " (install gnuplot-nox, or use --no-plot)";
  }
  int status = 0;
  if (waitpid(child, &status, 0) < 0)
    return std::string("waiting for gnuplot: ") + std::strerror(errno);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
    return "gnuplot not found (install gnuplot-nox, or use --no-plot)";
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return "gnuplot failed on " + script + " (its message is above)";
  }
  return "";
}

// Never through a link, nor into another user's file (safe_paths.h).
FILE* open_for_writing(const std::string& path) {
  std::string why;
  FILE* file = bspg::safe_paths::create_stream(path, "w", why, 0644, false);
  if (!file) {
    bsp_abort("%s: cannot write %s: %s (choose another place with --out)\n", kProgram, path.c_str(),
              why.c_str());
  }
  return file;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  if (const auto status = parse_options(argc, argv, opt)) return *status;

  bsp_begin(bsp_nprocs());
  bench::require_mpi_world(kProgram);
  const int pid = bsp_pid(), nprocs = bsp_nprocs();
  std::string prefix = opt.prefix;
  if (prefix.empty()) prefix = access(".", W_OK) == 0 ? "bspbench" : "/tmp/bspbench";
  FILE* data_file = nullptr;
  if (pid == 0) {
    data_file = open_for_writing(prefix + ".dat");
    std::printf("bspbench: BSP parameters of bspg next to raw MPI, p = %d\n", nprocs);
    std::printf(
        "  h-relations of h = 0..%ld 64-bit words, one bsp_put per word, %ld repetitions"
        " per h;\n  medians, bspg and raw MPI repetitions interleaved, a superstep "
        "timed by its slowest process\n",
        opt.hmax, opt.reps);
    const std::string overload = bench::overload_note();
    if (!overload.empty()) {
      std::printf(
          "  note: %s: other programs share the CPUs, so times scatter and r, g\n"
          "  and l are less certain than on an idle machine\n",
          overload.c_str());
    }
    std::printf("\n");
    std::fflush(stdout);
  }

  const double my_rate = opt.quick ? measure_flop_rate(5, 0.02) : measure_flop_rate(11, 0.05);
  const std::vector<double> rates = bench::gather_to_root(my_rate);
  double r = 0;
  if (pid == 0) {
    double low = rates[0], high = rates[0];
    for (double rate : rates) {
      r += rate / nprocs;
      low = std::min(low, rate);
      high = std::max(high, rate);
    }
    std::printf("r = %.1f Mflop/s  (DAXPY, mean over %d processes; min %.1f, max %.1f)\n", r * 1e-6,
                nprocs, low * 1e-6, high * 1e-6);
    std::fflush(stdout);
  }

  std::vector<double> bspg_times, raw_times;
  time_hrelations(opt, bspg_times, raw_times);
  bench::max_to_root(bspg_times);
  bench::max_to_root(raw_times);

  // On several subjobs (sites), g and l inside them and across them.
  const int nsubjobs = bspg_nsubjobs();
  std::vector<double> inside_times, across_times;
  if (nsubjobs > 1) {
    std::vector<int> subjob_of(static_cast<size_t>(nprocs), 0);
    bsp_push_reg(subjob_of.data(), nprocs * static_cast<int>(sizeof(int)));
    bsp_sync();
    const int mine = bspg_subjob();
    for (int q = 0; q < nprocs; ++q)
      bsp_put(q, &mine, subjob_of.data(), pid * static_cast<int>(sizeof(int)), sizeof(int));
    bsp_sync();
    bsp_pop_reg(subjob_of.data());
    bsp_sync();
    inside_times = time_level(opt, subjob_of, true);
    across_times = time_level(opt, subjob_of, false);
    bench::max_to_root(inside_times);
    bench::max_to_root(across_times);
  }

  bool make_plot = false;
  if (pid == 0) {
    const Summary sum = summarize(opt, bspg_times, raw_times);
    print_results(opt, sum, r, prefix);
    LevelSummary levels;
    if (nsubjobs > 1) {
      levels = summarize_levels(opt, inside_times, across_times, nsubjobs);
      print_levels(levels, r);
    }
    const LevelSummary* level_summary = nsubjobs > 1 ? &levels : nullptr;
    write_data(data_file, opt, sum, r, level_summary);
    std::fclose(data_file);
    FILE* script = open_for_writing(prefix + ".gp");
    write_plot_script(script, opt, sum, r, prefix, level_summary);
    std::fclose(script);
    std::printf("\ndata: %s.dat   gnuplot script: %s.gp", prefix.c_str(), prefix.c_str());
    if (opt.plot) std::printf("   plot: %s.png", prefix.c_str());
    std::printf("\n");
    std::fflush(stdout);
    make_plot = opt.plot;
  }
  bsp_end();

  // Only process 0 gets here; the others are not kept waiting for gnuplot.
  if (!make_plot) return 0;
  // gnuplot follows links when it writes the picture: it gets a regular file of this user's.
  std::string png_error;
  const int png = bspg::safe_paths::create_named_file(prefix + ".png", png_error, 0644);
  if (png < 0) {
    std::fprintf(stderr, "%s: no plot: cannot write %s.png: %s\n", kProgram, prefix.c_str(),
                 png_error.c_str());
    return 1;
  }
  close(png);
  const std::string plot_error = run_gnuplot(prefix + ".gp");
  if (!plot_error.empty()) {
    std::fprintf(stderr, "%s: no plot: %s\n", kProgram, plot_error.c_str());
    return 1;
  }
  return 0;
}
