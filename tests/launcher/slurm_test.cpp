// What bsprun reads from Slurm: CPUs per node, sinfo's node lines, sites, node states, and the
// probe's labelled output; and the starter's command line through Slurm.
#include <gtest/gtest.h>

#include <algorithm>

#include "mpistart.h"
#include "slurm.h"

using namespace bspg::launcher;

TEST(SlurmCpus, ExpandsRunsOfNodes) {
  EXPECT_EQ(expand_cpus_per_node("2(x3),1"), (std::vector<int>{2, 2, 2, 1}));
  EXPECT_EQ(expand_cpus_per_node("48"), (std::vector<int>{48}));
  EXPECT_EQ(expand_cpus_per_node("4,8(x2)"), (std::vector<int>{4, 8, 8}));
}

TEST(SlurmCpus, RefusesWhatSlurmDoesNotWrite) {
  for (const char* bad : {"", "x", "2(x)", "2(x3", "2x3", "-1", "0", "2(x0)", "2,,3", "2(x3)a",
                          "1(x99999999)"})
    EXPECT_THROW(expand_cpus_per_node(bad), std::invalid_argument) << bad;
}

TEST(SlurmSinfo, MergesPartitionsAndKeepsFeatures) {
  const auto nodes = read_sinfo_nodes(
      "emu1|site1,bigmem|emu*|idle\n"
      "emu1|site1,bigmem|long|idle\n"
      "emu2|(null)|emu*|drained\n");
  ASSERT_EQ(nodes.size(), 2u);
  const SlurmNode& a = nodes.at("emu1");
  EXPECT_EQ(a.features, (std::vector<std::string>{"site1", "bigmem"}));
  EXPECT_EQ(a.partitions, (std::vector<std::string>{"emu", "long"}));
  EXPECT_EQ(a.state, "idle");
  EXPECT_TRUE(nodes.at("emu2").features.empty());
  EXPECT_EQ(nodes.at("emu2").state, "drained");
}

TEST(SlurmSinfo, RefusesNodeNamesThatAreNotHostNames) {
  EXPECT_THROW(read_sinfo_nodes("-oProxyCommand=x|a|b|idle\n"), std::invalid_argument);
  EXPECT_THROW(read_sinfo_nodes("a b|a|b|idle\n"), std::invalid_argument);
  EXPECT_THROW(read_sinfo_nodes("emu1|a|b\n"), std::invalid_argument);
}

TEST(SlurmSites, AFeatureNamesTheSiteElseThePartition) {
  SlurmNode n;
  n.features = {"bigmem", "site-east"};
  EXPECT_EQ(site_of(n, "batch"), "site-east");
  n.features = {"bigmem"};
  EXPECT_EQ(site_of(n, "batch"), "batch");
  EXPECT_EQ(site_of(n, ""), "slurm");
}

TEST(SlurmStates, DownDrainedAndSilentNodesAreLeftOut) {
  for (const char* bad : {"down", "down*", "drained", "draining", "idle*", "fail", "powered_down",
                          "idle~", "DOWN"})
    EXPECT_NE(unusable_state(bad), "") << bad;
  for (const char* good : {"idle", "mixed", "allocated", "completing"})
    EXPECT_EQ(unusable_state(good), "") << good;
}

TEST(SlurmProbe, SplitsTheLabelledOutputByNode) {
  std::string other;
  const auto by_node = split_probe_output(
      " 0: node emu1\n"
      " 1: node emu3\n"
      " 0: BEGIN\n"
      "srun: error: emu2: task 2: Exited with exit code 1\n"
      " 1: BEGIN\n"
      " 0: END\n"
      "10: node emu9\n",
      other);
  ASSERT_EQ(by_node.size(), 3u);
  EXPECT_EQ(by_node.at("emu1"), "BEGIN\nEND\n");
  EXPECT_EQ(by_node.at("emu3"), "BEGIN\n");
  EXPECT_EQ(by_node.at("emu9"), "");
  EXPECT_EQ(other, "srun: error: emu2: task 2: Exited with exit code 1\n");
}

TEST(SlurmProbe, ATaskThatDoesNotNameItsNodeIsNotAnAnswer) {
  std::string other;
  const auto by_node = split_probe_output("0: hello\n1: node bad name\n", other);
  EXPECT_TRUE(by_node.empty());
  EXPECT_NE(other.find("hello"), std::string::npos);
}

namespace {
bool has_sequence(const std::vector<std::string>& argv, const std::vector<std::string>& seq) {
  return std::search(argv.begin(), argv.end(), seq.begin(), seq.end()) != argv.end();
}
}  // namespace

TEST(SlurmStart, EachMpiStartsThroughItsSlurmLauncherWithoutSsh) {
  bspg::rsl::Subjob sj;
  sj.contact = "emu1";
  sj.executable = "/bin/prog";
  sj.count = 2;
  sj.hosts = {"emu1:1", "emu2:1"};
  for (MpiFamily family : {MpiFamily::kOpenMpi4, MpiFamily::kOpenMpi5, MpiFamily::kMpich}) {
    MpiSettings s;
    s.mpi = &mpi_of(family);
    s.mpirun = "mpirun";
    s.through_slurm = true;
    const auto argv = grid_mpirun_argv(s, {sj}, "");
    const std::string line = shell_quote_command(argv);
    EXPECT_EQ(line.find("ssh"), std::string::npos) << line;
    if (family == MpiFamily::kMpich)
      EXPECT_TRUE(has_sequence(argv, {"-launcher", "slurm"})) << line;
    else
      EXPECT_TRUE(has_sequence(argv, {family == MpiFamily::kOpenMpi5 ? "--prtemca" : "--mca",
                                      "plm", "slurm"}))
          << line;
    EXPECT_NE(line.find("emu1"), std::string::npos) << line;
  }
}

TEST(SlurmStart, HydraIsToldTheAddressItsProxiesReachItAt) {
  bspg::rsl::Subjob sj;
  sj.contact = "emu1";
  sj.executable = "/bin/prog";
  sj.count = 2;
  sj.hosts = {"emu1:1", "emu2:1"};
  for (MpiFamily family : {MpiFamily::kOpenMpi4, MpiFamily::kOpenMpi5, MpiFamily::kMpich}) {
    MpiSettings s;
    s.mpi = &mpi_of(family);
    s.mpirun = "mpirun";
    s.through_slurm = true;
    s.slurm_launch_address = "10.200.1.254";
    const auto argv = grid_mpirun_argv(s, {sj}, "");
    // Open MPI's daemons report their host's addresses themselves.
    EXPECT_EQ(has_sequence(argv, {"-localhost", "10.200.1.254"}), family == MpiFamily::kMpich)
        << shell_quote_command(argv);
    s.slurm_launch_address.clear();
    const auto unknown = grid_mpirun_argv(s, {sj}, "");
    EXPECT_EQ(std::find(unknown.begin(), unknown.end(), "-localhost"), unknown.end());
  }
}

// How an allocation ended, as scontrol show job -o says it (Slurm 22.05 and 24.11 write the same
// fields): the time limit, scancel, still running, gone from Slurm's memory, another end.
TEST(SlurmAllocationEnd, ReadsTheStateAfterTheUsersJobName) {
  const std::string head = "JobId=7 JobName=x JobState=RUNNING y UserId=root(0) GroupId=root(0) ";
  AllocationEnd end =
      read_allocation_end(head + "JobState=TIMEOUT Reason=TimeLimit Dependency=(null)");
  EXPECT_EQ(end.kind, AllocationEnd::kTimeLimit);
  EXPECT_EQ(end.why, "reached its time limit");
  end = read_allocation_end(head + "JobState=CANCELLED Reason=None Dependency=(null)\n");
  EXPECT_EQ(end.kind, AllocationEnd::kCancelled);
  EXPECT_EQ(end.why, "was cancelled");
  EXPECT_EQ(read_allocation_end(head + "JobState=RUNNING Reason=None").kind,
            AllocationEnd::kRunning);
  EXPECT_EQ(
      read_allocation_end("JobId=7 JobName=x UserId=root(0) JobState=NODE_FAIL Reason=NodeDown")
          .why,
      "has ended (Slurm says: node fail, NodeDown)");
  EXPECT_EQ(read_allocation_end("slurm_load_jobs error: Invalid job id specified\n").kind,
            AllocationEnd::kOther);
  // Nothing scontrol could say (not reachable): the allocation is taken to live.
  EXPECT_EQ(read_allocation_end("").kind, AllocationEnd::kRunning);
  EXPECT_EQ(read_allocation_end("scontrol: error: timed out").kind, AllocationEnd::kRunning);
}
