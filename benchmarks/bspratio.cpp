// bspratio - the cost of bspg relative to raw MPI, in one run: an empty superstep against
// MPI_Barrier, single-word puts against hand-packed MPI_Alltoallv, and one put per
// destination against a plain MPI_Alltoallv. See --help.
#include <mpi.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "bench_support.h"
#include "bsp.h"
#include "hrelation.h"
#include "safe_paths.h"

namespace bspg::bench {
extern const char kBspratioManual[];
}

namespace {

constexpr const char* kProgram = "bspratio";
constexpr int kSyncsPerRepetition = 16;  // an empty superstep is too short to time alone
constexpr int kWarmupRepetitions = 2;
const std::vector<long> kSizes = {1024, 4096, 16384, 65536};  // h in 64-bit words

// --help prints the manual page, bspratio(1) (man/pages/bspratio.1.md), rendered as text at
// build time, so that the two cannot say different things.
const char* const kUsage = bspg::bench::kBspratioManual;

struct Options : bench::CommonOptions {
  std::string csv;
};

// Fills opt from the command line. Before bsp_begin: the exit status when main ends here,
// after an option error or --help (see bench::exit_before_begin).
std::optional<int> parse_options(int argc, char** argv, Options& opt) {
  const std::string error =
      bench::read_options(argc, argv, kProgram, opt, {bench::text("csv", "file name", &opt.csv)});
  return bench::exit_before_begin(error, opt, kProgram, kUsage);
}

struct Case {
  const char* id;       // "(a)"
  const char* name;     // column text
  const char* summary;  // for the worst-ratio line
  double target;        // largest acceptable ratio bspg/raw
};
const Case kSync = {"(a)", "sync", "empty bsp_sync vs one MPI_Barrier", 8.0};
const Case kWords = {"(b)", "words",
                     "single-word bsp_put vs pack + MPI_Alltoall + MPI_Alltoallv + unpack", 3.0};
const Case kBlocks = {"(c)", "blocks", "one bsp_put per destination vs MPI_Alltoallv", 1.5};

struct Row : bench::Alternation {
  Row(const Case* which_case, long h_words, const bench::Alternation& times)
      : bench::Alternation(times), which(which_case), h(h_words) {}
  const Case* which;
  long h;
  bool pass() const { return ratio() <= which->target; }
};

// Process 0 prints the rows as they come and keeps them for the summary.
class Report {
 public:
  explicit Report(const std::string& csv_path) {
    if (bsp_pid() != 0) return;
    if (!csv_path.empty()) {
      std::string why;  // never through a link, nor into another user's file
      csv_ = bspg::safe_paths::create_stream(csv_path, "w", why, 0644, false);
      if (!csv_) {
        bsp_abort("%s: cannot write %s: %s\n", kProgram, csv_path.c_str(), why.c_str());
      }
      std::fprintf(csv_,
                   "case,h,bspg_median_us,raw_median_us,ratio,target,result,bspg_min_us,raw_min_us,"
                   "min_ratio\n");
    }
    std::printf("%-12s %7s %14s %14s %9s %8s  %-6s %9s\n", "case", "h", "bspg (us)", "raw MPI (us)",
                "ratio", "target", "result", "min ratio");
  }

  void add(const Row& row) {
    if (bsp_pid() != 0) return;
    rows_.push_back(row);
    const std::string label = std::string(row.which->id) + " " + row.which->name;
    const std::string target = "<= " + target_text(*row.which) + "x";
    std::printf("%-12s %7ld %14.2f %14.2f %8.2fx %8s  %-6s %8.2fx\n", label.c_str(), row.h,
                row.bspg_us, row.raw_us, row.ratio(), target.c_str(), row.pass() ? "PASS" : "FAIL",
                row.min_ratio());
    std::fflush(stdout);
    if (csv_) {
      std::fprintf(csv_, "%s %s,%ld,%.3f,%.3f,%.4f,%g,%s,%.3f,%.3f,%.4f\n", row.which->id,
                   row.which->name, row.h, row.bspg_us, row.raw_us, row.ratio(), row.which->target,
                   row.pass() ? "PASS" : "FAIL", row.bspg_min_us, row.raw_min_us, row.min_ratio());
    }
  }

  void finish(const std::vector<const Case*>& cases) {
    if (bsp_pid() != 0) return;
    if (csv_) std::fclose(csv_);
    std::printf("\n");
    int missed = 0;
    for (const Case* c : cases) {
      const Row* worst = nullptr;
      for (const Row& row : rows_) {
        if (row.which == c && (!worst || row.ratio() > worst->ratio())) worst = &row;
      }
      if (!worst) continue;
      if (!worst->pass()) ++missed;
      std::printf("worst %s %-70s %6.2fx at h = %-6ld (target <= %sx)  %s\n", c->id, c->summary,
                  worst->ratio(), worst->h, target_text(*c).c_str(),
                  worst->pass() ? "PASS" : "FAIL");
    }
    if (missed == 0) {
      std::printf("all %zu targets met\n", cases.size());
    } else {
      std::printf("%d of %zu targets MISSED\n", missed, cases.size());
    }
    std::fflush(stdout);
  }

 private:
  static std::string target_text(const Case& c) {
    char text[16];
    std::snprintf(text, sizeof text, "%g", c.target);
    return text;
  }
  FILE* csv_ = nullptr;
  std::vector<Row> rows_;
};

void verify(const char* variant, long h, const std::string& why) {
  if (why.empty()) return;
  bsp_abort("%s: %s, h = %ld: wrong data on process %d: %s\n", kProgram, variant, h, bsp_pid(),
            why.c_str());
}

// Times one exchange of a relation: untimed preparation and alignment, then the exchange.
template <typename Relation, typename Exchange>
double time_exchange(Relation& relation, long h, int rep, Exchange exchange, const char* variant) {
  relation.prepare(h, rep);
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = bench::seconds_now();
  exchange(relation, h);
  const double seconds = bench::seconds_now() - start;
  verify(variant, h, relation.check(h, rep));
  return seconds;
}

void measure_sync(const Options& opt, Report& report) {
  auto bspg_once = [](int) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = bench::seconds_now();
    for (int i = 0; i < kSyncsPerRepetition; ++i) bsp_sync();
    return (bench::seconds_now() - start) / kSyncsPerRepetition;
  };
  auto raw_once = [](int) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = bench::seconds_now();
    for (int i = 0; i < kSyncsPerRepetition; ++i) MPI_Barrier(MPI_COMM_WORLD);
    return (bench::seconds_now() - start) / kSyncsPerRepetition;
  };
  report.add(
      Row(&kSync, 0, bench::time_alternating(opt.reps, kWarmupRepetitions, bspg_once, raw_once)));
}

template <typename Relation>
void measure_relation(const Options& opt, const Case& which, Report& report) {
  Relation relation(kSizes.back());
  bsp_sync();  // the registration takes effect
  for (long h : kSizes) {
    const char* bspg_name = &which == &kWords ? "(b) single-word bsp_put" : "(c) block bsp_put";
    const char* raw_name =
        &which == &kWords ? "(b) raw MPI packed Alltoallv" : "(c) raw MPI Alltoallv";
    auto bspg_once = [&](int rep) {
      return time_exchange(
          relation, h, rep, [](Relation& r, long n) { r.exchange_bspg(n); }, bspg_name);
    };
    auto raw_once = [&](int rep) {
      return time_exchange(
          relation, h, rep, [](Relation& r, long n) { r.exchange_raw(n); }, raw_name);
    };
    report.add(
        Row(&which, h, bench::time_alternating(opt.reps, kWarmupRepetitions, bspg_once, raw_once)));
  }
  relation.release();
  bsp_sync();
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  if (const auto status = parse_options(argc, argv, opt)) return *status;

  bsp_begin(bsp_nprocs());
  bench::require_mpi_world(kProgram);
  if (bsp_pid() == 0) {
    std::printf(
        "bspratio: bspg against raw MPI in the same run, p = %d, %ld repetitions per "
        "row\n  (medians of the slowest process's time; bspg and raw MPI repetitions "
        "interleaved;\n  h in 64-bit words sent and received per process)\n",
        bsp_nprocs(), opt.reps);
    const std::string overload = bench::overload_note();
    if (!overload.empty()) {
      std::printf(
          "  note: %s: other programs share the CPUs, so medians (above all for large "
          "h)\n  scatter widely; the min ratio column shows the cost without that "
          "noise\n",
          overload.c_str());
    }
    std::printf("\n");
  }
  Report report(opt.csv);
  measure_sync(opt, report);
  measure_relation<bench::WordRelation>(opt, kWords, report);
  measure_relation<bench::BlockRelation>(opt, kBlocks, report);
  report.finish({&kSync, &kWords, &kBlocks});
  bsp_end();
  return 0;
}
