// recovery_options_test.cpp - bsprun's --spares and --recovery: what each accepts, and the one line
// for each combination that cannot work (--copies: mpistart_test.cpp).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "options.h"

using bspg::launcher::Options;
using bspg::launcher::parse_options;
using bspg::launcher::UsageError;

namespace {

Options parse(std::vector<std::string> args) {
  args.insert(args.begin(), "bsprun");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  return parse_options(static_cast<int>(argv.size()), argv.data());
}

// The message of the UsageError that parsing throws ("" when it throws none).
std::string refusal(std::vector<std::string> args) {
  try {
    parse(std::move(args));
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(RecoveryOptions, SparesAndTheRecoveryPathAreRead) {
  const Options opt = parse({"-p", "4", "--spares", "2", "--copies", "2", "--recovery", "in-place",
                             "--restarts", "3", "./prog"});
  EXPECT_EQ(opt.spares, 2);
  EXPECT_EQ(opt.recovery, Options::Recovery::InPlace);
  EXPECT_EQ(opt.restarts, 3);
  EXPECT_TRUE(bspg::launcher::uses_checkpoints(opt));
  EXPECT_EQ(parse({"-p", "4", "--recovery=restart", "./prog"}).recovery,
            Options::Recovery::Restart);
}

TEST(RecoveryOptions, TheDefaultsAreNoSpareAndTheMpisChoice) {
  const Options opt = parse({"-p", "4", "./prog"});
  EXPECT_EQ(opt.spares, 0);
  EXPECT_EQ(opt.recovery, Options::Recovery::Automatic);
  EXPECT_FALSE(bspg::launcher::uses_checkpoints(opt));
}

TEST(RecoveryOptions, WithoutRestartsEachSpareAllowsOneRecovery) {
  EXPECT_EQ(parse({"-p", "4", "--spares", "2", "./prog"}).restarts, 2);
  EXPECT_EQ(parse({"-p", "4", "--spares", "2", "--restarts", "5", "./prog"}).restarts, 5);
}

TEST(RecoveryOptions, WhatCannotWorkIsRefusedInOneLine) {
  EXPECT_EQ(refusal({"--spares", "1", "./prog"}),
            "--spares needs -p N: spares start with the job, and master mode starts its "
            "processes later, from the master");
  EXPECT_EQ(refusal({"-p", "4", "--recovery", "in-place", "./prog"}),
            "--recovery in-place needs --spares K (K >= 1): a spare takes the lost process's "
            "place");
  EXPECT_EQ(refusal({"-p", "4", "--recovery", "later", "./prog"}),
            "--recovery takes in-place or restart, not 'later'");
  EXPECT_EQ(refusal({"-p", "4", "--spares", "-1", "./prog"}),
            "--spares needs a whole number from 0 to 1000, not '-1'");
  EXPECT_NE(refusal({"--rsl", "job.rsl", "--spares", "1"}).find("--spares"), std::string::npos);
}
