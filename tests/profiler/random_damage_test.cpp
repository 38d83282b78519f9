// Random damage to the raw files (seeded): any file may be rejected or cut, but the merge never
// crashes, and whatever it writes is well formed.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "bspprof.h"
#include "test_support.h"

namespace bspprof_test {
namespace {

constexpr int kRounds = 150;

// Four processes, group syncs and world syncs with traffic: every field has a meaning to break.
void write_job(const std::string& dir) {
  for (int pid = 0; pid < 4; ++pid) {
    RawWriter w(dir, 0, 0, pid, 4, 1.0);
    for (std::uint64_t s = 0; s < 6; ++s) {
      const double t = 1.0 + static_cast<double>(s);
      w.sync(SyncKind::GroupSync, 1, pid & ~1, s, 0, t + 0.1, t + 0.2, 2,
             {put(pid ^ 1, 16), get(pid ^ 1, 8)});
      w.world(s, t + 0.5 + 0.01 * pid, t + 0.6, {send((pid + 1) % 4, 32)});
    }
  }
}

TEST(RandomDamage, NeverCrashes) {
  std::mt19937 random(20240611);
  for (int round = 0; round < kRounds; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    ScratchDir dir;
    write_job(dir.path());
    // A few changed bytes, perhaps a cut, in one or two files.
    const int damaged = 1 + static_cast<int>(random() % 2);
    for (int d = 0; d < damaged; ++d) {
      const std::string path = dir.raw() + "/" + raw_name(0, 0, static_cast<int>(random() % 4));
      std::string bytes = read_file(path);
      for (int k = 0, n = 1 + static_cast<int>(random() % 4); k < n; ++k)
        bytes[random() % bytes.size()] = static_cast<char>(random());
      if (random() % 3 == 0) bytes.resize(random() % bytes.size());
      std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
    }
    const MergeResult result = merge(dir.path());
    ASSERT_TRUE(result.status == bspg::profile::kMerged ||
                result.status == bspg::profile::kNoProfile)
        << result.status << " " << result.errors;
    if (result.status != bspg::profile::kMerged) continue;
    EXPECT_NO_THROW(read_csv(dir.path() + "/supersteps.csv"));
    EXPECT_NO_THROW(YAML::Load(read_file(dir.path() + "/profile.json")));
  }
}

}  // namespace
}  // namespace bspprof_test
