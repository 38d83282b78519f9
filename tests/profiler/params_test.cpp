// g and l from bspbench's saved results, and the model's cost w + g*h + l in the plot's data.
#include "params.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "ring.h"
#include "test_support.h"

namespace bspprof_test {
namespace {

using bspg::profile::read_bsp_parameters;

TEST(Params, ReadFromBspbenchResults) {
  const auto params = read_bsp_parameters(sample_params());
  ASSERT_TRUE(params.found) << params.problem;
  EXPECT_DOUBLE_EQ(params.g_s, 0.5e-6);
  EXPECT_DOUBLE_EQ(params.l_s, 20e-6);
  EXPECT_EQ(params.measured_p, 4);
}

TEST(Params, ReadFromTheProjectsOwnRun) {
  // The line exactly as bspbench writes it.
  ScratchDir dir;
  const std::string file = dir.path() + "/bspbench.dat";
  std::ofstream(file) << "# bspbench: h-relations of single-word bsp_put vs raw MPI, p = 2\n"
                         "# bspg:    g = 0.0200939 us = 119.401 flop, l = 1.0771 us = 6400.3 flop\n"
                         "0 0.8730 0.4240 2.0590 0.7830 0.3500\n";
  const auto params = read_bsp_parameters(file);
  ASSERT_TRUE(params.found);
  EXPECT_DOUBLE_EQ(params.g_s, 0.0200939e-6);
  EXPECT_DOUBLE_EQ(params.l_s, 1.0771e-6);
  EXPECT_EQ(params.measured_p, 2);
}

TEST(Params, MissingOrForeign) {
  auto params = read_bsp_parameters("/nonexistent/bspbench.dat");
  EXPECT_FALSE(params.found);
  EXPECT_EQ(params.problem, "/nonexistent/bspbench.dat: No such file or directory");
  ScratchDir dir;
  std::ofstream(dir.path() + "/other.dat") << "# something else\n1 2 3\n";
  params = read_bsp_parameters(dir.path() + "/other.dat");
  EXPECT_FALSE(params.found);
  EXPECT_NE(params.problem.find("no \"# bspg: g = ...\" line"), std::string::npos);
}

TEST(Params, WithoutThemTheSummarySaysHowToGetThem) {
  ScratchDir dir;
  write_ring(dir.path());
  const MergeResult result = merge(dir.path());
  ASSERT_EQ(result.status, 0);
  EXPECT_NE(result.summary.find("BSP model: not drawn (/nonexistent/bspbench.dat: No such file "
                                "or directory)\n  measure g and l with `bsprun -p 4 bspbench`"),
            std::string::npos)
      << result.summary;
  EXPECT_EQ(read_file(dir.path() + "/profile.gp").find("BSP model"), std::string::npos);
}

// Ring steps: w = 3 ms, h = 64 bytes = 8 words: 3 ms + 8 * 0.5 us + 20 us = 3.024 ms.
TEST(Params, ModelInThePlotData) {
  ScratchDir dir;
  write_ring(dir.path());
  const MergeResult result = merge(dir.path(), false, sample_params());
  ASSERT_EQ(result.status, 0);
  std::istringstream data(read_file(dir.path() + "/profile.dat"));
  std::string line;
  int rows = 0;
  while (std::getline(data, line)) {
    if (line[0] == '#') continue;
    std::istringstream fields(line);
    double step, superstep, attempt, compute, comm, wait, h, predicted, time;
    fields >> step >> superstep >> attempt >> compute >> comm >> wait >> h >> predicted >> time;
    EXPECT_EQ(step, rows);
    EXPECT_NEAR(predicted, kSlowCompute + 8 * 0.5e-6 + 20e-6, 1e-9);
    EXPECT_NEAR(time, kSlowCompute + kSyncWork, 1e-9);
    EXPECT_EQ(h, kRingBytes);
    ++rows;
  }
  EXPECT_EQ(rows, kRingSupersteps);
  EXPECT_NE(read_file(dir.path() + "/profile.gp").find("BSP model w + g*h + l"), std::string::npos);
  EXPECT_NE(result.summary.find("(measured at p = 4)"), std::string::npos);
}

}  // namespace
}  // namespace bspprof_test
