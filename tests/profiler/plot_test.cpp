// The plot: profile.png from gnuplot, its data binned for long jobs, the model's largest misses
// labelled, and exit status 1 when gnuplot is missing.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>
#include <sstream>
#include <vector>

#include "bspprof.h"
#include "ring.h"
#include "test_support.h"

namespace bspprof_test {
namespace {

const std::string kPngSignature = "\x89PNG\r\n\x1a\n";

// Sets an environment variable for the life of the object.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = std::make_unique<std::string>(old);
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }

 private:
  const char* name_;
  std::unique_ptr<std::string> old_;
};

// Data rows of profile.dat, split into numbers ('?' as NaN).
std::vector<std::vector<double>> plot_rows(const std::string& dir) {
  std::vector<std::vector<double>> rows;
  std::istringstream data(read_file(dir + "/profile.dat"));
  std::string line, field;
  while (std::getline(data, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    rows.emplace_back();
    while (fields >> field) rows.back().push_back(field == "?" ? std::nan("") : std::stod(field));
  }
  return rows;
}

TEST(Plot, PngWhenGnuplotIsThere) {
  if (!gnuplot_available()) GTEST_SKIP() << "gnuplot is not installed";
  ScratchDir dir;
  write_ring(dir.path());
  const MergeResult result = merge(dir.path(), true, sample_params());
  ASSERT_EQ(result.status, 0) << result.errors;
  EXPECT_EQ(result.errors, "");
  EXPECT_EQ(read_file(dir.path() + "/profile.png").substr(0, 8), kPngSignature);
  EXPECT_NE(result.summary.find(dir.path() + "/profile.png"), std::string::npos);
}

TEST(Plot, GnuplotMissing) {
  ScratchDir dir;
  write_ring(dir.path());
  MergeResult result;
  {
    ScopedEnv no_gnuplot("PATH", "/nonexistent");
    result = merge(dir.path(), true);
  }
  EXPECT_EQ(result.status, bspg::profile::kPlotFailed);
  EXPECT_NE(result.errors.find("bspprof: no plot: gnuplot not found (install gnuplot-nox, or use "
                               "--no-plot)"),
            std::string::npos)
      << result.errors;
  EXPECT_NE(result.summary.find("no plot: gnuplot not found"), std::string::npos);
  EXPECT_TRUE(file_exists(dir.path() + "/supersteps.csv"));
  EXPECT_TRUE(file_exists(dir.path() + "/profile.gp"));
  EXPECT_FALSE(file_exists(dir.path() + "/profile.png"));
}

// 5000 steps: bars are means of bins of 3 steps, with the slowest step of each bin.
TEST(Plot, LongJobsAreBinned) {
  ScratchDir dir;
  {
    RawWriter p0(dir.path(), 0, 0, 0, 2, 0.0), p1(dir.path(), 0, 0, 1, 2, 0.0);
    double t = 0;
    for (int s = 0; s < 5000; ++s) {
      const double sync = s == 4000 ? 0.5 : 0.001;  // one slow step
      p0.world(s, t + 0.002, t + 0.002 + sync, {put(1, 8)});
      p1.world(s, t + 0.002, t + 0.002 + sync);
      t += 0.002 + sync;
    }
  }
  const bool plot = gnuplot_available();
  const MergeResult result = merge(dir.path(), plot, sample_params());
  ASSERT_EQ(result.status, 0) << result.errors;
  const auto rows = plot_rows(dir.path());
  ASSERT_EQ(rows.size(), 1667u);
  EXPECT_DOUBLE_EQ(rows[0][0], 1);  // the middle of steps 0, 1, 2
  EXPECT_EQ(rows[0][9], 3);         // steps in the bin
  EXPECT_EQ(rows.back()[9], 2);     // 5000 = 1666 * 3 + 2
  EXPECT_NEAR(rows[0][3], 0.002, 1e-9);
  EXPECT_NEAR(rows[1333][8], (0.5 + 2 * 0.001) / 3 + 0.002, 1e-9);  // steps 3999..4001
  EXPECT_NEAR(rows[1333][10], 0.502, 1e-9);
  const std::string script = read_file(dir.path() + "/profile.gp");
  EXPECT_NE(script.find("each bar: the mean of 3 consecutive steps"), std::string::npos);
  EXPECT_NE(script.find("set boxwidth 2.7 absolute"), std::string::npos);
  // The bar of the slow step (steps 3999..4001, 169 ms) is far above the others (3 ms): cut at
  // three times their 90th percentile and labelled with its time, not circled as a miss.
  EXPECT_NE(script.find("set label 1 '169 ms' at 4000, "), std::string::npos) << script;
  EXPECT_NE(script.find("cut by the scale"), std::string::npos);
  EXPECT_NE(script.find("set yrange [0:10.08"), std::string::npos);  // 1.12 * 3 * 3 ms
  if (plot) {
    EXPECT_EQ(read_file(dir.path() + "/profile.png").substr(0, 8), kPngSignature);
  }
}

// The five steps the model misses most are circled, and only they.
TEST(Plot, LargestMissesCircled) {
  ScratchDir dir;
  const std::vector<int> slow = {3, 7, 11, 13, 17};
  {
    RawWriter p0(dir.path(), 0, 0, 0, 1, 0.0);
    double t = 0;
    for (int s = 0; s < 20; ++s) {
      double sync = 0.0001;
      for (std::size_t i = 0; i < slow.size(); ++i)
        if (s == slow[i]) sync = 0.01 * static_cast<double>(i + 1);
      p0.world(s, t + 0.001, t + 0.001 + sync);
      t += 0.001 + sync;
    }
  }
  ASSERT_EQ(merge(dir.path(), false, sample_params()).status, 0);
  const std::string script = read_file(dir.path() + "/profile.gp");
  std::size_t labels = 0;
  for (std::size_t at = script.find("point pt 6"); at != std::string::npos;
       at = script.find("point pt 6", at + 1))
    ++labels;
  EXPECT_EQ(labels, 5u);
  for (int s : slow)
    EXPECT_NE(script.find("'' at " + std::to_string(s) + ", "), std::string::npos) << s;
  EXPECT_EQ(script.find("cut by the scale"), std::string::npos);  // 5 of 20 steps: not outliers
}

// A profile of a few steps circles none: the largest misses would be every step.
TEST(Plot, FewStepsCircleNoMisses) {
  ScratchDir dir;
  {
    RawWriter p0(dir.path(), 0, 0, 0, 1, 0.0);
    double t = 0;
    for (int s = 0; s < 5; ++s) {
      p0.world(s, t + 0.001, t + 0.001 + 0.001 * (s + 1));
      t += 0.002 + 0.001 * (s + 1);
    }
  }
  ASSERT_EQ(merge(dir.path(), false, sample_params()).status, 0);
  const std::string script = read_file(dir.path() + "/profile.gp");
  EXPECT_EQ(script.find("point pt 6"), std::string::npos) << script;
  // The axis runs over the steps, not from -1.
  EXPECT_NE(script.find("set xrange [-0.5:4.5]"), std::string::npos) << script;
}

// The heat map's data: each process's wait as a share of the step, by step and process; a
// process of another group's step has no cell.
TEST(Plot, WaitSharesByProcessAndStep) {
  ScratchDir dir;
  {
    RawWriter p0(dir.path(), 0, 0, 0, 3, 0.0), p1(dir.path(), 0, 0, 1, 3, 0.0),
        p2(dir.path(), 0, 0, 2, 3, 0.0);
    // Step 0: process 0 calls the sync at 0.008 s, the others at 0.002 s; all leave at 0.010 s:
    // the step takes 10 ms (compute 8 + sync 2 of the critical process), the others wait 6 ms.
    p0.world(0, 0.008, 0.010);
    p1.world(0, 0.002, 0.010);
    p2.world(0, 0.002, 0.010);
  }
  ASSERT_EQ(merge(dir.path()).status, 0);
  std::istringstream cells(read_file(dir.path() + "/profile.waits.dat"));
  std::map<int, double> share;
  for (std::string line; std::getline(cells, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    double step = -1, pid = -1, value = -1;
    fields >> step >> pid >> value;
    EXPECT_EQ(step, 0);
    share[static_cast<int>(pid)] = value;
  }
  ASSERT_EQ(share.size(), 3u);
  EXPECT_NEAR(share[0], 0, 1e-4);
  EXPECT_NEAR(share[1], 0.6, 1e-3);
  EXPECT_NEAR(share[2], 0.6, 1e-3);
}

}  // namespace
}  // namespace bspprof_test
