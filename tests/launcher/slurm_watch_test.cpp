// Inside a Slurm allocation, bsprun's watch of the job's nodes (SlurmNodeWatch) finds a node that
// does not answer its srun steps for --host-timeout: lost, or left to the library where the job
// recovers in place, and lost after all where the library does not recover from it. srun here is
// a stand-in on PATH that answers for every node but those named in a file, for which it waits
// (as srun waits for a frozen node).
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "slurm.h"

using namespace bspg::launcher;
using Clock = std::chrono::steady_clock;

namespace {

class SlurmWatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir_template[] = "/tmp/bspg-slurm-watch-XXXXXX";
    ASSERT_NE(mkdtemp(dir_template), nullptr);
    dir_ = dir_template;
    frozen_ = dir_ + "/frozen";
    asked_ = dir_ + "/asked";
    std::ofstream(frozen_).flush();
    std::ofstream srun(dir_ + "/srun");
    srun << "#!/bin/sh\n"
            "for a; do case $a in --nodelist=*) list=${a#--nodelist=};; esac; done\n"
            "echo \"$list\" >> '"
         << asked_
         << "'\n"
            "[ -e '"
         << dir_
         << "/fail' ] && { echo 'srun: error: Unable to create step'; exit 1; }\n"
            "i=0; wait=0\n"
            "for n in $(echo \"$list\" | tr , ' '); do\n"
            "  if grep -qx \"$n\" '"
         << frozen_
         << "'; then wait=1; else echo \"$i: node $n\"; fi\n"
            "  i=$((i + 1))\n"
            "done\n"
            "[ $wait = 1 ] && exec sleep 60\n"
            "exit 0\n";
    srun.close();
    ASSERT_EQ(chmod((dir_ + "/srun").c_str(), 0755), 0);
    const char* path = std::getenv("PATH");
    setenv("PATH", (dir_ + ":" + (path ? path : "/usr/bin:/bin")).c_str(), 1);
  }

  void TearDown() override { EXPECT_EQ(system(("rm -rf " + dir_).c_str()), 0); }

  void freeze(const std::string& node) { std::ofstream(frozen_, std::ios::app) << node << "\n"; }

  // Waits up to `seconds` for the watch to say a loss; the seconds it took, or -1.
  static double wait_lost(const SlurmNodeWatch& watch, double seconds) {
    const auto start = Clock::now();
    while (std::chrono::duration<double>(Clock::now() - start).count() < seconds) {
      if (!watch.lost().empty()) return std::chrono::duration<double>(Clock::now() - start).count();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return -1;
  }

  // The node lists srun was asked for, one per step.
  std::vector<std::string> asked() const {
    std::vector<std::string> lists;
    std::ifstream in(asked_);
    for (std::string line; std::getline(in, line);) lists.push_back(line);
    return lists;
  }

  std::string dir_, frozen_, asked_;
};

const std::vector<std::string> kNodes = {"emu1", "emu2", "emu3"};

}  // namespace

TEST_F(SlurmWatchTest, ANodeSilentForTheTimeoutIsLost) {
  freeze("emu2");
  SlurmNodeWatch watch(kNodes, "bspg-1-test", 1, 5, false, false);
  const double took = wait_lost(watch, 8);
  ASSERT_GE(took, 0) << "no loss said";
  EXPECT_GE(took, 0.9);
  EXPECT_LT(took, 4.5);
  EXPECT_EQ(watch.lost_host(), "emu2");
  EXPECT_EQ(watch.lost().rfind("emu2: no answer through srun for ", 0), 0U) << watch.lost();
  EXPECT_NE(watch.lost().find(" s (--host-timeout), noticed by bsprun"), std::string::npos)
      << watch.lost();
}

TEST_F(SlurmWatchTest, NodesThatAnswerAreNotLost) {
  SlurmNodeWatch watch(kNodes, "bspg-1-test", 1, 5, false, false);
  EXPECT_LT(wait_lost(watch, 3), 0) << watch.lost();
  EXPECT_GE(asked().size(), 3U) << "the watch asks again every interval";
}

// srun that fails at once (no step), with no node's answer, says nothing of the nodes.
TEST_F(SlurmWatchTest, ASrunThatFailsAtOnceLosesNoNode) {
  std::ofstream(dir_ + "/fail").flush();
  SlurmNodeWatch watch(kNodes, "bspg-1-test", 1, 5, false, false);
  EXPECT_LT(wait_lost(watch, 3), 0) << watch.lost();
}

// A step that no node answers in time (Slurm's controller busy, or every node silent) says
// nothing of any node either.
TEST_F(SlurmWatchTest, ARoundNoNodeAnswersLosesNoNode) {
  for (const std::string& node : kNodes) freeze(node);
  SlurmNodeWatch watch(kNodes, "bspg-1-test", 1, 5, false, false);
  EXPECT_LT(wait_lost(watch, 5), 0) << watch.lost();
}

TEST_F(SlurmWatchTest, ALeftNodeTheLibraryRecoveredFromIsNotLost) {
  freeze("emu3");
  std::mutex mutex;
  std::set<std::string> left;
  SlurmInPlace in_place;
  in_place.leave_silent = [&](const std::string& node, bool) {
    std::lock_guard<std::mutex> lock(mutex);
    left.insert(node);
    return true;
  };
  in_place.recovered_from = [&](const std::string& node) {
    std::lock_guard<std::mutex> lock(mutex);
    return left.count(node) > 0;
  };
  SlurmNodeWatch watch(kNodes, "bspg-1-test", 1, 5, false, false, in_place);
  EXPECT_LT(wait_lost(watch, 7), 0) << watch.lost();
  {
    std::lock_guard<std::mutex> lock(mutex);
    EXPECT_EQ(left, std::set<std::string>{"emu3"});
  }
  // Once left, the node is asked no more: the last steps name the others alone.
  const std::vector<std::string> lists = asked();
  ASSERT_GE(lists.size(), 2U);
  EXPECT_EQ(lists.back(), "emu1,emu2");
}

TEST_F(SlurmWatchTest, ALeftNodeIsLostWhereTheLibraryDoesNotRecover) {
  freeze("emu1");
  std::atomic<int> left{0};
  SlurmInPlace in_place;
  in_place.leave_silent = [&](const std::string&, bool) { return ++left > 0; };
  in_place.recovered_from = [](const std::string&) { return false; };
  SlurmNodeWatch watch(kNodes, "bspg-1-test", 1, 5, false, false, in_place);
  const double took = wait_lost(watch, 10);
  ASSERT_GE(took, 0) << "no loss said";
  EXPECT_GE(took, 3.5) << "lost before the library's grace ended";
  EXPECT_EQ(left.load(), 1);
  EXPECT_EQ(watch.lost_host(), "emu1");
  EXPECT_NE(watch.lost().find("the job did not recover in place from its processes within 3 s"),
            std::string::npos)
      << watch.lost();
}

TEST_F(SlurmWatchTest, ARefusalLosesALeftNodeAtOnce) {
  freeze("emu2");
  std::atomic<bool> left{false};
  SlurmInPlace in_place;
  in_place.leave_silent = [&](const std::string&, bool) { return left = true; };
  in_place.recovered_from = [](const std::string&) { return false; };
  SlurmNodeWatch watch(kNodes, "bspg-1-test", 1, 5, false, false, in_place);
  for (int i = 0; i < 300 && !left; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_TRUE(left) << "the node was not left to the library";
  watch.recovery_refused();
  const double took = wait_lost(watch, 5);
  ASSERT_GE(took, 0) << "no loss said";
  EXPECT_LT(took, 1.5) << "the refusal waited out the grace";
  EXPECT_NE(watch.lost().find("the library could not recover in place from its processes"),
            std::string::npos)
      << watch.lost();
}

// Where leave_silent refuses (the node holds only spares, or another could not be told), the
// node is lost at its timeout as without spares.
TEST_F(SlurmWatchTest, ANodeTheLibraryIsNotToldOfIsLost) {
  freeze("emu3");
  SlurmInPlace in_place;
  in_place.leave_silent = [](const std::string&, bool) { return false; };
  in_place.recovered_from = [](const std::string&) { return false; };
  SlurmNodeWatch watch(kNodes, "bspg-1-test", 1, 5, false, false, in_place);
  const double took = wait_lost(watch, 8);
  ASSERT_GE(took, 0) << "no loss said";
  EXPECT_LT(took, 4.5);
  EXPECT_EQ(watch.lost_host(), "emu3");
  EXPECT_NE(watch.lost().find("(--host-timeout)"), std::string::npos) << watch.lost();
}
