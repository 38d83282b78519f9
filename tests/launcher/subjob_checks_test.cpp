// subjob_checks_test.cpp - what bsprun agrees to run from an RSL file: every refusal names the
// file, line and column of the value, or the subjob when the allocation is bsprun's own.
#include "subjob_checks.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "rsl.h"

using namespace bspg::launcher;
namespace rsl = bspg::rsl;

namespace {

// The error check_subjobs gives for `text` (read as job.rsl), or "" when it accepts it.
std::string error_of(const std::string& text, const HostFileLimits* hostfile = nullptr) {
  try {
    check_subjobs(rsl::read_allocation(text, "job.rsl"), "job.rsl", hostfile);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

HostFileLimits two_hosts() {
  HostFileLimits limits{"hosts.yaml", std::vector<bspg::hosts::HostSpec>(2)};
  limits.hosts[0].name = "n1";
  limits.hosts[0].slots = 2;
  limits.hosts[0].line = 3;
  limits.hosts[1].name = "n2";  // no slots: its core count, unknown without probing
  limits.hosts[1].line = 5;
  return limits;
}

}  // namespace

// The endings of messages several expectations share.
const std::string kIsAnOption = "it starts with '-' (ssh and mpirun would read it as an option)";
const std::string kNotAPath =
    "must be an absolute path or start with ./ or ../ (relative to the directory)";
const std::string kTooMany = "processes up to here, more than the 1000000 a job may have";

TEST(SubjobChecks, AcceptsWhatBsprunWritesAndHandWrittenPaths) {
  EXPECT_EQ(error_of("+( &(resourceManagerContact=n1)(count=2)(executable=/opt/prog)"
                     "(arguments=-n 10 --x)(directory=/home/a)(label=\"subjob 0\")"
                     "(environment=(BSPG_SUBJOB 0)(OMP_NUM_THREADS 2)) )"),
            "");
  EXPECT_EQ(error_of("&(resourceManagerContact=n1)(count=1)(executable=./prog)"), "");
  EXPECT_EQ(error_of("&(resourceManagerContact=lab-a)(count=3)(executable=../bin/prog)"
                     "(hosts=(n1:2 n2:1))"),
            "");
}

TEST(SubjobChecks, CountsAddUpToASaneTotal) {
  EXPECT_EQ(error_of("+( &(resourceManagerContact=n1)(count=2147483647)(executable=/p) )\n"
                     "( &(resourceManagerContact=n2)(count=2147483647)(executable=/p) )"),
            "job.rsl:1:39: the subjobs ask for 2147483647 " + kTooMany);
  EXPECT_EQ(error_of("+( &(resourceManagerContact=n1)(count=600000)(executable=/p) )\n"
                     "( &(resourceManagerContact=n2)(count=600000)(executable=/p) )"),
            "job.rsl:2:38: the subjobs ask for 1200000 " + kTooMany);
}

TEST(SubjobChecks, NothingBecomesAnMpirunOption) {
  EXPECT_EQ(error_of("&(resourceManagerContact=n1)(count=1)(executable=\"--version\")"),
            "job.rsl:1:50: executable '--version' " + kNotAPath);
  EXPECT_EQ(error_of("&(resourceManagerContact=n1)(count=1)(executable=prog)"),
            "job.rsl:1:50: executable 'prog' " + kNotAPath);
  EXPECT_EQ(
      error_of("&(resourceManagerContact=\"-n1\")(count=1)(executable=/p)"),
      "job.rsl:1:26: resourceManagerContact '-n1' is not a host or site name: " + kIsAnOption);
  EXPECT_EQ(error_of("&(resourceManagerContact=lab)(count=1)(executable=/p)(hosts=(\"-x:1\"))"),
            "job.rsl:1:62: host '-x' is not a host or site name: " + kIsAnOption);
  EXPECT_EQ(
      error_of("&(resourceManagerContact=n1)(count=1)(executable=/p)(arguments=a \":\" /bin/sh)"),
      "job.rsl:1:66: an argument ':' cannot be passed on (mpirun reads it as the end of a subjob)");
  EXPECT_EQ(error_of("&(resourceManagerContact=n1)(count=1)(executable=/p)(directory=\"-wdir\")"),
            "job.rsl:1:64: directory '-wdir': it is not an absolute path");
}

TEST(SubjobChecks, NoControlCharactersAndValidEnvironmentNames) {
  const std::string job = "&(resourceManagerContact=n1)(count=1)(executable=/p)";
  EXPECT_EQ(error_of("&(resourceManagerContact=n1)(count=1)(executable=\"/p\nx\")"),
            "job.rsl:1:50: executable '/p\\nx': it contains a newline (\\n) at character 3");
  EXPECT_EQ(error_of(job + "(arguments=ok \"\x1b[2J\")"),
            "job.rsl:1:67: argument 2 '\\x1b[2J': it contains an escape character (\\x1b) at "
            "character 1");
  EXPECT_EQ(error_of(job + "(label=\"a\rb\")"),
            "job.rsl:1:60: label 'a\\rb': it contains a carriage return (\\r) at character 2");
  EXPECT_EQ(error_of(job + "(environment=(\"A B\" 1))"),
            "job.rsl:1:66: environment name 'A B' is not a variable name (a letter or '_', then "
            "letters, digits or '_')");
  EXPECT_EQ(error_of(job + "(environment=(A \"1\t2\"))"),
            "job.rsl:1:66: environment value of A '1\\t2': it contains a tab (\\t) at character 2");
}

TEST(SubjobChecks, HostsMustBeInTheHostFileAndWithinTheirSlots) {
  const HostFileLimits limits = two_hosts();
  EXPECT_EQ(error_of("+( &(resourceManagerContact=n1)(count=2)(executable=/p) )"
                     "( &(resourceManagerContact=n2)(count=40)(executable=/p) )",
                     &limits),
            "");
  EXPECT_EQ(
      error_of("+( &(resourceManagerContact=n1)(count=2)(executable=/p) )\n"
               "( &(resourceManagerContact=lab)(count=2)(executable=/p)(hosts=(n2:1 n1:1)) )",
               &limits),
      "job.rsl:2:69: 3 processes on n1, but the host file hosts.yaml gives it 2 slots (line 3)");
  EXPECT_EQ(
      error_of("&(resourceManagerContact=n9)(count=1)(executable=/p)(label=\"subjob 0\")", &limits),
      "job.rsl:1:36: host 'n9' (subjob 0) is not in the host file hosts.yaml");
  EXPECT_EQ(
      error_of("&(resourceManagerContact=lab)(count=2)(executable=/p)(hosts=(n2:1 n2:1))", &limits),
      "job.rsl:1:67: host 'n2' is named twice in this subjob's hosts");
}

TEST(SubjobChecks, InsideASlurmAllocationHostsMustBeItsNodesWithinTheirCpus) {
  HostFileLimits nodes = two_hosts();
  nodes.path = "Slurm job 42";
  nodes.slurm_allocation = true;
  nodes.hosts[1].slots = 1;
  EXPECT_EQ(
      error_of("&(resourceManagerContact=lab)(count=3)(executable=/p)(hosts=(n1:2 n2:1))", &nodes),
      "");
  EXPECT_EQ(error_of("&(resourceManagerContact=lab)(count=2)(executable=/p)(hosts=(n2:2))", &nodes),
            "job.rsl:1:62: 2 processes on n2, but Slurm job 42 has 1 CPU there");
  EXPECT_EQ(
      error_of("&(resourceManagerContact=n9)(count=1)(executable=/p)(label=\"subjob 0\")", &nodes),
      "job.rsl:1:36: host 'n9' (subjob 0) is not a node of Slurm job 42");
}

TEST(SubjobChecks, AnAllocationWithoutPositionsNamesTheSubjob) {
  rsl::Subjob sj;
  sj.contact = "n1";
  sj.count = 1;
  sj.executable = "/p";
  sj.arguments = {"a\nb"};
  try {
    check_subjobs({sj, sj}, "", nullptr);
    FAIL() << "accepted an argument with a newline";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(),
                 "subjob 0: argument 1 'a\\nb': it contains a newline (\\n) at character 2");
  }
}
