// help_test.cpp - bsprun --help [TOPIC], --version and the "did you mean" of an unknown option.
#include "help.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "options.h"
#include "parse_args.h"

namespace bspg::launcher {
namespace {

using test_cli::message;
using test_cli::parse;

std::vector<std::string> topics() {
  std::vector<std::string> names;
  std::istringstream list(help_topics());
  for (std::string name; std::getline(list >> std::ws, name, ',');) names.push_back(name);
  return names;
}

TEST(Help, FitsOneScreen) {
  std::istringstream text(short_help_text());
  int lines = 0;
  for (std::string line; std::getline(text, line); ++lines) EXPECT_LE(line.size(), 80u) << line;
  EXPECT_LE(lines, 24);
  EXPECT_NE(short_help_text().find("bsprun --help TOPIC"), std::string::npos);
  for (const std::string& topic : topics())
    EXPECT_NE(short_help_text().find(topic), std::string::npos) << topic << " is not listed";
}

TEST(Help, EveryTopicIsItsPartOfTheManual) {
  ASSERT_GE(topics().size(), 10u);
  for (const std::string& topic : topics()) {
    const auto text = help_topic_text(topic);
    ASSERT_TRUE(text) << topic;
    EXPECT_GT(text->size(), 100u) << topic;
    EXPECT_LT(text->size(), help_text().size() / 2) << topic;
    EXPECT_NE(help_text().find(*text), std::string::npos) << topic << ": not cut from the manual";
  }
  EXPECT_EQ(help_topic_text("grid")->rfind("    Grid path. ", 0), 0u);
  // A topic ends where the next begins.
  EXPECT_EQ(help_topic_text("grid")->find("Slurm path."), std::string::npos);
  EXPECT_EQ(help_topic_text("options")->rfind("OPTIONS\n", 0), 0u);
  EXPECT_NE(help_topic_text("options")->find("--tag-output"), std::string::npos);
  EXPECT_EQ(help_topic_text("options")->find("\nMPI\n"), std::string::npos);
  EXPECT_EQ(*help_topic_text("all"), help_text());
  EXPECT_FALSE(help_topic_text("nope"));
  EXPECT_FALSE(help_topic_text(""));
}

TEST(Help, TopicAfterTheOptionOrWithEquals) {
  EXPECT_TRUE(parse({"--help"}).help);
  EXPECT_EQ(parse({"--help"}).help_topic, "");
  EXPECT_EQ(parse({"--help", "slurm"}).help_topic, "slurm");
  EXPECT_EQ(parse({"-h", "exit"}).help_topic, "exit");
  EXPECT_EQ(parse({"--help=checkpoints"}).help_topic, "checkpoints");
  EXPECT_EQ(parse({"--help", "-v"}).help_topic, "");
  const std::string error = message({"--help", "slurmm"});
  EXPECT_NE(error.find("--help takes a topic: local, grid, slurm"), std::string::npos) << error;
  EXPECT_NE(error.find("not 'slurmm'"), std::string::npos) << error;
  // After the program, --help is the program's.
  EXPECT_FALSE(parse({"-p", "2", "./prog", "--help", "nope"}).help);
}

TEST(Help, UnknownOptionNamesTheOneMeant) {
  EXPECT_EQ(message({"--hostfil", "hosts", "./prog"}),
            "unknown option '--hostfil'; did you mean --hostfile?");
  EXPECT_EQ(message({"--restart=2", "./prog"}),
            "unknown option '--restart=2'; did you mean --restarts?");
  EXPECT_EQ(message({"--tag", "./prog"}), "unknown option '--tag'; did you mean --tag-output?");
  EXPECT_EQ(message({"--timelimit", "5", "./prog"}),
            "unknown option '--timelimit'; did you mean --time-limit?");
  // Nothing close, or the start of several options: no guess.
  EXPECT_EQ(message({"--frobnicate", "./prog"}), "unknown option '--frobnicate'");
  EXPECT_EQ(message({"--res", "./prog"}), "unknown option '--res'");
}

TEST(Help, VersionNamesBspgAndTheMpi) {
  const std::string text = version_text("Open MPI 4.1.4", "/usr/bin/mpirun.openmpi");
  EXPECT_EQ(text.rfind("bsprun (bspg) ", 0), 0u) << text;
  EXPECT_NE(text.find("\nMPI: Open MPI 4.1.4, started with /usr/bin/mpirun.openmpi\n"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace bspg::launcher
