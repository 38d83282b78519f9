// bspcases - what a BSPlib user on one machine meets first, case by case, bspg against raw MPI
// in one run: the empty superstep, single-word puts, bulk puts of 64 KiB to 16 MiB (bsp_put and
// bsp_hpput), 100,000 messages, and the fit BSPedupack's bspbench makes. See --help.
#include <mpi.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "bench_support.h"
#include "bsp.h"
#include "hrelation.h"
#include "safe_paths.h"

namespace bspg::bench {
extern const char kBspcasesManual[];
}

namespace {

constexpr const char* kProgram = "bspcases";
constexpr int kWarmupRepetitions = 2;
constexpr int kSyncsPerRepetition = 16;  // supersteps too short to time alone
constexpr long kMessages = 100000;
constexpr int kFitIterations = 100;  // supersteps per h in the fit, as BSPedupack's bspbench
constexpr int kFitPasses = 5;        // fits made; the medians of their g, l, T(0) and l / T(0)

// --help prints the manual page, bspcases(1) (man/pages/bspcases.1.md), rendered as text at
// build time, so that the two cannot say different things.
const char* const kUsage = bspg::bench::kBspcasesManual;

const std::vector<std::string> kCaseNames = {"sync",  "word", "words",  "put",
                                             "hpput", "send", "hpmove", "fit"};

struct Options : bench::CommonOptions {
  std::string csv;
  std::set<std::string> cases;
  long hmax = 1024;
  bool hmax_given = false;
  bool wants(const std::string& name) const { return cases.empty() || cases.count(name) > 0; }
};

std::optional<int> parse_options(int argc, char** argv, Options& opt) {
  const std::string error = bench::read_options(
      argc, argv, kProgram, opt,
      {bench::text("csv", "file name", &opt.csv),
       bench::count("hmax", 16, 65536, &opt.hmax, &opt.hmax_given),
       bench::cases(kCaseNames, &opt.cases)});
  if (opt.quick && !opt.hmax_given) opt.hmax = 256;
  if (!opt.reps_given && !opt.quick) opt.reps = 21;
  return bench::exit_before_begin(error, opt, kProgram, kUsage);
}

// Process 0 prints rows as they come and counts the targets.
class Table {
 public:
  explicit Table(const std::string& csv_path) {
    if (bsp_pid() != 0) return;
    if (!csv_path.empty()) {
      std::string why;  // never through a link, nor into another user's file
      csv_ = bspg::safe_paths::create_stream(csv_path, "w", why, 0644, false);
      if (!csv_)
        bsp_abort("%s: cannot write %s: %s\n", kProgram, csv_path.c_str(), why.c_str());
      std::fprintf(csv_,
                   "case,size,bspg_median_us,raw_median_us,ratio,target,result,min_ratio,"
                   "ratio_q1,ratio_q3\n");
    }
    std::printf("%-8s %9s %12s %12s %8s %8s  %-6s %9s  %s\n", "case", "size", "bspg (us)",
                "raw MPI (us)", "ratio", "target", "result", "min ratio", "spread");
  }
  ~Table() {
    if (csv_) std::fclose(csv_);
  }

  void add(const char* name, const std::string& size, const bench::Alternation& t, double target) {
    if (bsp_pid() != 0) return;
    const bool pass = t.ratio() <= target;
    count(pass);
    char target_text[32];
    std::snprintf(target_text, sizeof target_text, "<= %gx", target);
    std::printf("%-8s %9s %12.2f %12.2f %7.2fx %8s  %-6s %8.2fx  %.2f-%.2fx\n", name, size.c_str(),
                t.bspg_us, t.raw_us, t.ratio(), target_text, pass ? "PASS" : "FAIL", t.min_ratio(),
                t.ratio_q1, t.ratio_q3);
    std::fflush(stdout);
    if (csv_)
      std::fprintf(csv_, "%s,%s,%.3f,%.3f,%.4f,%g,%s,%.4f,%.4f,%.4f\n", name, size.c_str(),
                   t.bspg_us, t.raw_us, t.ratio(), target, pass ? "PASS" : "FAIL", t.min_ratio(),
                   t.ratio_q1, t.ratio_q3);
  }

  void count(bool pass) {
    ++targets_;
    if (pass) ++met_;
  }

  void finish() const {
    if (bsp_pid() != 0) return;
    std::printf("\n%d of %d targets met\n", met_, targets_);
  }

 private:
  FILE* csv_ = nullptr;
  int targets_ = 0, met_ = 0;
};

std::string size_text(long bytes) {
  char text[48];
  if (bytes >= (1L << 20))
    std::snprintf(text, sizeof text, "%ld MiB", bytes >> 20);
  else
    std::snprintf(text, sizeof text, "%ld KiB", bytes >> 10);
  return text;
}

void verify(const char* variant, const std::string& why) {
  if (why.empty()) return;
  bsp_abort("%s: %s: wrong data on process %d: %s\n", kProgram, variant, bsp_pid(), why.c_str());
}

// One timed exchange of a relation: untimed preparation and alignment, the exchange, the check.
template <typename Relation, typename Exchange>
double timed(Relation& relation, long size, int rep, const char* variant, Exchange exchange) {
  relation.prepare(size, rep);
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = bench::seconds_now();
  exchange();
  const double seconds = bench::seconds_now() - start;
  verify(variant, relation.check(size, rep));
  return seconds;
}

void run_sync(const Options& opt, Table& table) {
  auto loop = [](auto step) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = bench::seconds_now();
    for (int i = 0; i < kSyncsPerRepetition; ++i) step();
    return (bench::seconds_now() - start) / kSyncsPerRepetition;
  };
  table.add("sync", "-",
            bench::time_alternating(
                opt.reps, kWarmupRepetitions, [&](int) { return loop([] { bsp_sync(); }); },
                [&](int) { return loop([] { MPI_Barrier(MPI_COMM_WORLD); }); }),
            1.4);
}

void run_words(const Options& opt, Table& table) {
  bench::WordRelation relation(4096);
  bsp_sync();
  if (opt.wants("word")) {
    // Sixteen one-word supersteps per repetition; the last one's data is checked.
    auto sixteen = [&](int rep, bool bspg) {
      double seconds = 0;
      for (int i = 0; i < kSyncsPerRepetition; ++i)
        seconds += timed(relation, 1, rep, bspg ? "word, bspg" : "word, raw MPI",
                         [&] { bspg ? relation.exchange_bspg(1) : relation.exchange_raw(1); });
      return seconds / kSyncsPerRepetition;
    };
    table.add("word", "1 word",
              bench::time_alternating(
                  opt.reps, kWarmupRepetitions, [&](int rep) { return sixteen(rep, true); },
                  [&](int rep) { return sixteen(rep, false); }),
              1.0);
  }
  if (opt.wants("words")) {
    table.add("words", "4096 words",
              bench::time_alternating(
                  opt.reps, kWarmupRepetitions,
                  [&](int rep) {
                    return timed(relation, 4096, rep, "words, bspg",
                                 [&] { relation.exchange_bspg(4096); });
                  },
                  [&](int rep) {
                    return timed(relation, 4096, rep, "words, raw MPI",
                                 [&] { relation.exchange_raw(4096); });
                  }),
              3.0);
  }
  relation.release();
  bsp_sync();
}

void run_blocks(const Options& opt, Table& table) {
  const int ndest = bsp_nprocs() > 1 ? bsp_nprocs() - 1 : 1;
  const std::vector<long> sizes = {64L << 10, 1L << 20, 4L << 20,
                                   16L << 20};  // bytes per destination
  bench::BlockRelation relation(sizes.back() / 8 * ndest + 1);
  bsp_sync();
  for (bool hp : {false, true}) {
    const char* name = hp ? "hpput" : "put";
    if (!opt.wants(name)) continue;
    for (long bytes : sizes) {
      const long h = bytes / 8 * ndest;
      const std::string bspg_variant = std::string(name) + ", bspg";
      table.add(name, size_text(bytes),
                bench::time_alternating(
                    opt.reps, kWarmupRepetitions,
                    [&](int rep) {
                      return timed(relation, h, rep, bspg_variant.c_str(),
                                   [&] { relation.exchange_bspg(h, hp); });
                    },
                    [&](int rep) {
                      return timed(relation, h, rep, "put, raw MPI",
                                   [&] { relation.exchange_raw(h); });
                    }),
                hp                   ? 1.0
                : bytes < (1L << 20) ? 1.5
                                     : 1.1);
    }
  }
  relation.release();
  bsp_sync();
}

void run_messages(const Options& opt, Table& table) {
  bench::MessageRelation relation(kMessages);
  bsp_sync();  // the tag size takes effect
  for (bool hp : {false, true}) {
    const char* name = hp ? "hpmove" : "send";
    if (!opt.wants(name)) continue;
    const std::string bspg_variant = std::string(name) + ", bspg";
    table.add(name, "100000 msg",
              bench::time_alternating(
                  opt.reps, kWarmupRepetitions,
                  [&](int rep) {
                    return timed(relation, kMessages, rep, bspg_variant.c_str(),
                                 [&] { relation.exchange_bspg(kMessages, hp); });
                  },
                  [&](int rep) {
                    return timed(relation, kMessages, rep, "messages, raw MPI",
                                 [&] { relation.exchange_raw(kMessages); });
                  }),
              hp ? 1.0 : 1.05);
  }
}

// One pass of BSPedupack's method: T(h) for h = 0..hmax, the mean of kFitIterations
// back-to-back supersteps each; on process 0 the slowest process's times. g and l then come
// from a least-squares line over h = p..hmax (run_fit).
std::vector<double> measure_h_relations(long hmax) {
  const int p = bsp_nprocs(), s = bsp_pid();
  std::vector<double> src(static_cast<std::size_t>(hmax)), dest(2 * hmax + p);
  std::vector<int> dest_pid(static_cast<std::size_t>(hmax)),
      dest_index(static_cast<std::size_t>(hmax));
  bsp_push_reg(dest.data(), static_cast<int>(dest.size() * sizeof(double)));
  bsp_sync();
  std::vector<double> t(static_cast<std::size_t>(hmax) + 1);
  for (long h = 0; h <= hmax; ++h) {
    for (long i = 0; i < h; ++i) {
      src[i] = static_cast<double>(i);
      dest_pid[i] = p == 1 ? 0 : static_cast<int>((s + 1 + i % (p - 1)) % p);
      dest_index[i] = p == 1 ? static_cast<int>(i) : static_cast<int>(s + (i / (p - 1)) * p);
    }
    bsp_sync();
    const double start = bench::seconds_now();
    for (int iteration = 0; iteration < kFitIterations; ++iteration) {
      for (long i = 0; i < h; ++i)
        bsp_put(dest_pid[i], &src[i], dest.data(), dest_index[i] * static_cast<int>(sizeof(double)),
                sizeof(double));
      bsp_sync();
    }
    t[h] = (bench::seconds_now() - start) / kFitIterations;
  }
  bench::max_to_root(t);
  bsp_pop_reg(dest.data());
  bsp_sync();
  return t;
}

void run_fit(const Options& opt, Table& table) {
  const int p = bsp_nprocs();
  // BSPedupack measures T(0) once, over 100 supersteps of a fraction of a microsecond: one pass
  // is at the mercy of a moment's noise, so the fit is made several times and the medians count.
  const int passes = opt.quick ? 1 : kFitPasses;
  std::vector<double> g, l, t0, ratio;
  for (int pass = 0; pass < passes; ++pass) {
    const std::vector<double> t = measure_h_relations(opt.hmax);
    if (bsp_pid() != 0) continue;
    std::vector<double> x, y;
    for (long h = p; h <= opt.hmax; ++h) {
      x.push_back(static_cast<double>(h));
      y.push_back(t[h]);
    }
    const bench::LineFit fit = bench::fit_line(x, y);
    g.push_back(fit.slope);
    l.push_back(fit.intercept);
    t0.push_back(t[0]);
    ratio.push_back(t[0] > 0 ? fit.intercept / t[0] : 0.0);
  }
  if (bsp_pid() != 0) return;
  const double l_median = bench::median(l), t0_median = bench::median(t0),
               ratio_median = bench::median(ratio);
  const bool pass = l_median > 0 && ratio_median <= 2;
  table.count(pass);
  std::printf(
      "\nfit      BSPedupack's method, h = %d..%ld, mean of %d supersteps per h, medians of %d "
      "fits:\n"
      "         g = %.2f ns per word, l = %.3f us, T(0) = %.3f us (l / T(0) = %.2f, from %.2f to "
      "%.2f; target 0 < l <= 2 T(0))  %s\n",
      p, opt.hmax, kFitIterations, passes, bench::median(g) * 1e9, l_median * 1e6, t0_median * 1e6,
      ratio_median, *std::min_element(ratio.begin(), ratio.end()),
      *std::max_element(ratio.begin(), ratio.end()), pass ? "PASS" : "FAIL");
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  if (const auto status = parse_options(argc, argv, opt)) return *status;

  bsp_begin(bsp_nprocs());
  bench::require_mpi_world(kProgram);
  if (bsp_pid() == 0) {
    std::printf(
        "bspcases: bspg against raw MPI in the same run, p = %d, %ld repetitions per row\n"
        "  (medians of the slowest process's time; bspg and raw MPI repetitions interleaved)\n",
        bsp_nprocs(), opt.reps);
    std::printf("  machine: %s\n", bench::machine_note().c_str());
    const std::string overload = bench::overload_note();
    if (!overload.empty())
      std::printf("  note: %s: other programs share the CPUs, so medians scatter\n",
                  overload.c_str());
    std::printf("\n");
  }
  {
    Table table(opt.csv);
    if (opt.wants("sync")) run_sync(opt, table);
    if (opt.wants("word") || opt.wants("words")) run_words(opt, table);
    if (opt.wants("put") || opt.wants("hpput")) run_blocks(opt, table);
    if (opt.wants("send") || opt.wants("hpmove")) run_messages(opt, table);
    if (opt.wants("fit")) run_fit(opt, table);
    table.finish();
  }
  bsp_end();
  return 0;
}
