// bench_test - unit tests of the benchmark helpers, run inside a BSP program (mpirun -np 2):
// the statistics, the communication pattern, and above all that check() of both relations
// notices missing, stale and surplus data, so that a benchmark can never time wrong results.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "bench_support.h"
#include "bsp.h"
#include "hrelation.h"

namespace {

TEST(Statistics, MedianOfOddAndEvenCounts) {
  EXPECT_EQ(bench::median({5, 1, 3}), 3);
  EXPECT_EQ(bench::median({4, 1, 3, 2}), 2.5);
  EXPECT_EQ(bench::median({}), 0);
}

TEST(Statistics, LineFitRecoversExactLine) {
  std::vector<double> h, t;
  for (int i = 0; i <= 10; ++i) {
    h.push_back(i);
    t.push_back(0.25 * i + 3);
  }
  const bench::LineFit fit = bench::fit_line(h, t);
  EXPECT_NEAR(fit.slope, 0.25, 1e-12);
  EXPECT_NEAR(fit.intercept, 3, 1e-12);
}

TEST(Options, ParseCountAcceptsOnlyWholeNumbersInRange) {
  long value = -7;
  EXPECT_TRUE(bench::parse_count("42", 1, 100, &value));
  EXPECT_EQ(value, 42);
  for (const char* bad : {"", "0", "101", "-5", "+5", "4x", "x", "1e3", "99999999999999999999"}) {
    EXPECT_FALSE(bench::parse_count(bad, 1, 100, &value)) << bad;
  }
  EXPECT_EQ(value, 42);
}

// Reads `args` the way a benchmark does: the common options, plus a flag, a count and a
// file name option of its own; returns the error, or "" with what was read in *seen.
std::string read_options(std::vector<std::string> args, std::string* seen) {
  std::vector<char*> argv = {const_cast<char*>("prog")};
  for (std::string& arg : args) argv.push_back(&arg[0]);
  bench::CommonOptions common;
  bool flag = false;
  long count = 0;
  std::string file;
  const std::string error =
      bench::read_options(static_cast<int>(argv.size()), argv.data(), "prog", common,
                          {bench::flag("flag", &flag), bench::count("count", 1, 100, &count),
                           bench::text("file", "file name", &file)});
  *seen = "help=" + std::to_string(common.help) + " quick=" + std::to_string(common.quick) +
          " reps=" + std::to_string(common.reps) + " flag=" + std::to_string(flag) +
          " count=" + std::to_string(count) + " file=" + file;
  return error;
}

TEST(Options, ReaderTakesSpacedAndInlineValues) {
  std::string seen;
  EXPECT_EQ(read_options({}, &seen), "");
  EXPECT_EQ(seen, "help=0 quick=0 reps=51 flag=0 count=0 file=");
  EXPECT_EQ(read_options({"--flag", "--count", "7", "--file=a=b", "-h", "--reps=9"}, &seen), "");
  EXPECT_EQ(seen, "help=1 quick=0 reps=9 flag=1 count=7 file=a=b");
  // A value that looks like an option is still the value; the last of a repeated option wins.
  EXPECT_EQ(read_options({"--file", "--quick", "--count=2", "--count", "3", "--help"}, &seen), "");
  EXPECT_EQ(seen, "help=1 quick=0 reps=51 flag=0 count=3 file=--quick");
  EXPECT_EQ(read_options({"--"}, &seen), "");
}

TEST(Options, QuickLowersRepsUnlessGiven) {
  std::string seen;
  EXPECT_EQ(read_options({"--quick"}, &seen), "");
  EXPECT_EQ(seen, "help=0 quick=1 reps=7 flag=0 count=0 file=");
  EXPECT_EQ(read_options({"--reps", "60", "--quick"}, &seen), "");
  EXPECT_EQ(seen, "help=0 quick=1 reps=60 flag=0 count=0 file=");
}

TEST(Options, ReaderNamesWhatIsWrong) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--flag=1"}, "option --flag takes no value"},
      {{"--quick=1"}, "option --quick takes no value"},
      {{"--count"}, "option --count needs a value"},
      {{"--count", "0"}, "--count needs a whole number from 1 to 100, not '0'"},
      {{"--count="}, "--count needs a whole number from 1 to 100, not ''"},
      {{"--reps", "x"}, "--reps needs a whole number from 1 to 100000, not 'x'"},
      {{"--file"}, "option --file needs a file name"},
      {{"--file="}, "option --file needs a non-empty file name"},
      {{"-h=1"}, "unknown option '-h=1'"},
      {{"--bogus=2"}, "unknown option '--bogus=2'"},
      {{"--flag", "extra"}, "unexpected argument 'extra' (prog takes only options)"},
      {{"-x"}, "unknown option '-x'"},
      {{"-hq"}, "unknown option '-hq'"},
      {{"-flag"}, "unknown option '-flag'"},
      {{"--flag", "--", "--quick"}, "unexpected argument '--quick' (prog takes only options)"},
      // Names are written in full: getopt_long's abbreviations are refused, by name.
      {{"--rep", "9"}, "unknown option '--rep'; did you mean --reps?"},
      {{"--cou=3"}, "unknown option '--cou=3'; did you mean --count?"},
      {{"--fla"}, "unknown option '--fla'; did you mean --flag?"},
      {{"--quick", "--fil"}, "unknown option '--fil'; did you mean --file?"},
      {{"--f"}, "unknown option '--f'"},  // --flag or --file
  };
  for (const auto& [args, message] : cases) {
    std::string seen;
    EXPECT_EQ(read_options(args, &seen), message) << args[0];
  }
}

TEST(Pattern, SourceInvertsDestination) {
  for (int p = 1; p <= 6; ++p) {
    for (int s = 0; s < p; ++s) {
      const bench::Pattern sender(p, s);
      for (int k = 0; k < sender.ndest(); ++k) {
        const int t = sender.dest(k);
        if (p > 1) {
          EXPECT_NE(t, s) << "p=" << p << " s=" << s << " k=" << k;
        }
        EXPECT_EQ(bench::Pattern(p, t).source(k), s) << "p=" << p << " s=" << s << " k=" << k;
      }
    }
  }
}

TEST(Pattern, ValuesAreDistinct) {
  const bench::Pattern pattern(3, 0);
  EXPECT_NE(pattern.value(0, 1, 5), pattern.value(1, 1, 5));
  EXPECT_NE(pattern.value(0, 1, 5), pattern.value(0, 2, 5));
  EXPECT_NE(pattern.value(0, 1, 5), pattern.value(0, 1, 6));
  EXPECT_NE(pattern.value(4095, 2, bench::kMaxWords), pattern.value(4095, 2, bench::kMaxWords - 1));
}

// Both relations: both exchanges deliver, and check() rejects what did not arrive, data of
// another repetition, and words beyond h.
template <typename Relation>
void exercise(long hmax, long h) {
  Relation relation(hmax);
  bsp_sync();
  relation.prepare(h, 1);
  relation.exchange_bspg(h);
  EXPECT_EQ(relation.check(h, 1), "");
  EXPECT_NE(relation.check(h, 2), "") << "data of another repetition passed";
  EXPECT_NE(relation.check(h - 1, 1), "") << "a word beyond h passed";

  relation.prepare(h, 3);
  relation.exchange_raw(h);
  EXPECT_EQ(relation.check(h, 3), "");
  EXPECT_NE(relation.check(h, 4), "");

  relation.prepare(h, 5);  // nothing exchanged: every word is missing
  const std::string why = relation.check(h, 5);
  EXPECT_NE(why.find("word 0 from process"), std::string::npos) << why;

  relation.release();
  bsp_sync();
}

TEST(WordRelation, DeliversAndCheckRejectsWrongData) {
  exercise<bench::WordRelation>(64, 37);
  exercise<bench::WordRelation>(8, 8);
}

TEST(BlockRelation, DeliversAndCheckRejectsWrongData) {
  exercise<bench::BlockRelation>(4096, 1020);  // 1020: whole blocks for p = 1..6
}

TEST(MpiWorld, RanksAreBspPids) {
  int rank = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  EXPECT_EQ(rank, bsp_pid());
  const std::vector<double> all = bench::gather_to_root(bsp_pid() + 0.5);
  if (bsp_pid() == 0) {
    ASSERT_EQ(static_cast<int>(all.size()), bsp_nprocs());
    for (int s = 0; s < bsp_nprocs(); ++s) EXPECT_EQ(all[s], s + 0.5);
  }
  std::vector<double> maxima = {static_cast<double>(bsp_pid()), -1.0 * bsp_pid()};
  bench::max_to_root(maxima);
  if (bsp_pid() == 0) {
    EXPECT_EQ(maxima[0], bsp_nprocs() - 1);
    EXPECT_EQ(maxima[1], 0);
  }
}

class FailurePrinter : public ::testing::EmptyTestEventListener {
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::printf("[process %d] %s:%d: Failure\n%s\n", bsp_pid(),
                result.file_name() ? result.file_name() : "?", result.line_number(),
                result.message());
  }
};

}  // namespace

int main(int argc, char** argv) {
  bsp_begin(bsp_nprocs());
  bench::require_mpi_world("bench_test");
  ::testing::InitGoogleTest(&argc, argv);
  if (bsp_pid() != 0) {
    // Process 0 gives the full report; the others only name their failures.
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new FailurePrinter);
  }
  int failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
  int any_failed = 0;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (any_failed && !failed && bsp_pid() == 0) {
    std::printf("bench_test: process 0 passed, but another process failed\n");
  }
  bsp_end();
  return any_failed;
}
