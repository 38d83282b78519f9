// A long job: 200,000 supersteps of 4 processes merge in bounded memory (the bspprof tool's
// peak resident size, measured by the kernel, stays far below the size of its input).
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <vector>

#include "test_support.h"

extern char** environ;

namespace bspprof_test {
namespace {

constexpr int kProcs = 4;
constexpr int kSupersteps = 200000;
constexpr long kMaxResidentKiB = 100 * 1024;
// AddressSanitizer's shadow memory and quarantine inflate the peak: the bound is not checked there.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

void write_long_job(const std::string& dir) {
  std::vector<std::unique_ptr<RawWriter>> files;
  for (int pid = 0; pid < kProcs; ++pid)
    files.push_back(std::make_unique<RawWriter>(dir, 0, 0, pid, kProcs, 0.0));
  double t = 0;
  for (int s = 0; s < kSupersteps; ++s) {
    const double last_call = t + 20e-6;
    for (int pid = 0; pid < kProcs; ++pid) {
      const double call = t + (pid == s % kProcs ? 20e-6 : 10e-6);
      files[pid]->world(s, call, last_call + 5e-6,
                        {put((pid + 1) % kProcs, 800), get((pid + 3) % kProcs, 80)},
                        s + 1 == kSupersteps ? SyncKind::End : SyncKind::Sync);
    }
    t = last_call + 5e-6;
  }
}

TEST(Memory, LongJobInBoundedMemory) {
  ScratchDir dir;
  write_long_job(dir.path());

  std::vector<std::string> words = {BSPPROF_TOOL, "--quiet", "--params", sample_params(),
                                    dir.path()};
  if (!gnuplot_available()) words.insert(words.begin() + 1, "--no-plot");
  std::vector<char*> argv;
  for (std::string& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);
  const auto start = std::chrono::steady_clock::now();
  pid_t child = 0;
  ASSERT_EQ(posix_spawn(&child, argv[0], nullptr, nullptr, argv.data(), environ), 0);
  int status = 0;
  struct rusage usage {};
  ASSERT_EQ(wait4(child, &status, 0, &usage), child);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  std::printf("merged %d supersteps of %d processes in %.1f s, peak resident %ld KiB\n",
              kSupersteps, kProcs, seconds, usage.ru_maxrss);
  if (!kSanitized) {
    EXPECT_LT(usage.ru_maxrss, kMaxResidentKiB);
  }

  // Every row is there; the plot shows bins.
  std::FILE* csv = std::fopen((dir.path() + "/supersteps.csv").c_str(), "r");
  ASSERT_NE(csv, nullptr);
  long newlines = 0;
  char buffer[1 << 16];
  std::size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, csv)) > 0)
    for (std::size_t i = 0; i < n; ++i) newlines += buffer[i] == '\n';
  std::fclose(csv);
  EXPECT_EQ(newlines, 1L + static_cast<long>(kProcs) * kSupersteps);
  EXPECT_NE(
      read_file(dir.path() + "/profile.gp").find("each bar: the mean of 100 consecutive steps"),
      std::string::npos);
}

}  // namespace
}  // namespace bspprof_test
