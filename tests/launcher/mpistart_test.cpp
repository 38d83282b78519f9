// mpistart_test.cpp - the mpirun command lines bsprun builds, and its command-line parser.
#include "mpistart.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "options.h"
#include "parse_args.h"

using namespace bspg::launcher;
using bspg::launcher::test_cli::message;
using bspg::launcher::test_cli::parse;
using Argv = std::vector<std::string>;

namespace {

// Index of the first occurrence of the sequence `what` in argv, or -1.
long find_seq(const Argv& argv, const Argv& what) {
  auto it = std::search(argv.begin(), argv.end(), what.begin(), what.end());
  return it == argv.end() ? -1 : it - argv.begin();
}

// The app contexts of an mpirun command line (split at ":"), without the part before the first -np.
std::vector<Argv> app_contexts(const Argv& argv) {
  std::vector<Argv> apps(1);
  long first = find_seq(argv, {"-np"});
  for (size_t i = static_cast<size_t>(first); i < argv.size(); ++i) {
    if (argv[i] == ":")
      apps.emplace_back();
    else
      apps.back().push_back(argv[i]);
  }
  return apps;
}

bspg::rsl::Subjob subjob(const std::string& contact, int count,
                         std::vector<std::string> hosts = {}) {
  bspg::rsl::Subjob sj;
  sj.contact = contact;
  sj.count = count;
  sj.executable = "/opt/prog";
  sj.arguments = {"-n", "10"};
  sj.directory = "/home/u";
  sj.hosts = std::move(hosts);
  return sj;
}

// Settings for Open MPI 4's mpirun, whatever MPI this build has: the command lines below are its.
MpiSettings open_mpi4() {
  MpiSettings s;
  s.mpi = &mpi_of(MpiFamily::kOpenMpi4);
  s.mpirun = "/usr/bin/mpirun";
  return s;
}

}  // namespace

TEST(LocalArgv, RootOversubscribeAndOsc) {
  MpiSettings s = open_mpi4();
  s.mpirun = "/usr/bin/mpirun";
  s.run_as_root = true;
  Argv argv = local_mpirun_argv(s, 5, true, "/tmp/prog", {"a", "b c"});
  EXPECT_EQ(argv.front(), "/usr/bin/mpirun");
  EXPECT_GE(find_seq(argv, {"--allow-run-as-root"}), 0);
  EXPECT_GE(find_seq(argv, {"--oversubscribe"}), 0);
  EXPECT_GE(find_seq(argv, {"--mca", "osc", "sm,pt2pt"}), 0);
  EXPECT_GE(find_seq(argv, {"-np", "5", "/tmp/prog", "a", "b c"}), 0);
  EXPECT_EQ(argv.back(), "b c");
  EXPECT_GE(find_seq(argv, {"-x", "BSPG_SUBJOB=0"}), 0);
  EXPECT_GE(find_seq(argv, {"-x", "BSPG_SUBJOB_SIZES=5"}), 0);
}

TEST(LocalArgv, NoRootNoOversubscribe) {
  MpiSettings s = open_mpi4();
  Argv argv = local_mpirun_argv(s, 2, false, "/tmp/prog", {});
  EXPECT_EQ(find_seq(argv, {"--allow-run-as-root"}), -1);
  EXPECT_EQ(find_seq(argv, {"--oversubscribe"}), -1);
  EXPECT_EQ(argv.back(), "/tmp/prog");
}

TEST(LocalArgv, UserOscWins) {
  MpiSettings s = open_mpi4();
  s.environment["OMPI_MCA_osc"] = "pt2pt";
  EXPECT_EQ(find_seq(local_mpirun_argv(s, 2, false, "/p", {}), {"osc"}), -1);
  MpiSettings t = open_mpi4();
  t.mca = {{"osc", "rdma"}};
  Argv argv = local_mpirun_argv(t, 2, false, "/p", {});
  EXPECT_EQ(find_seq(argv, {"--mca", "osc", "sm,pt2pt"}), -1);
  EXPECT_GE(find_seq(argv, {"--mca", "osc", "rdma"}), 0);
}

TEST(LocalArgv, ProgramArgumentsComeAfterEverything) {
  MpiSettings s = open_mpi4();
  s.exports = {"FOO=1"};
  // Arguments that look like mpirun options are the program's.
  Argv argv = local_mpirun_argv(s, 2, false, "/p", {"-np", "7", "--mca"});
  EXPECT_EQ(Argv(argv.end() - 4, argv.end()), (Argv{"/p", "-np", "7", "--mca"}));
  EXPECT_LT(find_seq(argv, {"-x", "FOO=1"}), find_seq(argv, {"/p"}));
}

TEST(GridArgv, OneAppContextPerSubjob) {
  MpiSettings s = open_mpi4();
  s.mpirun = "mpirun";
  s.run_as_root = true;
  s.environment = {{"OMPI_MCA_btl_tcp_if_include", "lo"}, {"HOME", "/root"}};
  auto a = subjob("emu4", 2);
  a.environment = {{"BSPG_SUBJOB", "0"}, {"EXTRA", "v w"}};
  auto b = subjob("emu2", 1);
  Argv argv = grid_mpirun_argv(s, {a, b}, "/tmp/cfg");
  EXPECT_GE(find_seq(argv, {"--mca", "plm_rsh_agent", "ssh -F /tmp/cfg"}), 0);
  EXPECT_GE(find_seq(argv, {"--mca", "osc", "sm,pt2pt"}), 0);
  EXPECT_GE(find_seq(argv, {"--mca", "plm_rsh_no_tree_spawn", "1"}), 0);
  EXPECT_GE(find_seq(argv, {"--allow-run-as-root"}), 0);

  auto apps = app_contexts(argv);
  ASSERT_EQ(apps.size(), 2u);
  EXPECT_GE(find_seq(apps[0], {"-np", "2", "-host", "emu4:2"}), 0);
  EXPECT_GE(find_seq(apps[1], {"-np", "1", "-host", "emu2:1"}), 0);
  for (size_t k = 0; k < 2; ++k) {
    EXPECT_GE(find_seq(apps[k], {"-x", "BSPG_SUBJOB=" + std::to_string(k)}), 0);
    EXPECT_GE(find_seq(apps[k], {"-x", "BSPG_NSUBJOBS=2"}), 0);
    EXPECT_GE(find_seq(apps[k], {"-x", "BSPG_SUBJOB_SIZES=2,1"}), 0);
    // mpirun does not forward the environment to remote ranks: OMPI_MCA_* by name, nothing else.
    EXPECT_GE(find_seq(apps[k], {"-x", "OMPI_MCA_btl_tcp_if_include"}), 0);
    EXPECT_EQ(find_seq(apps[k], {"-x", "HOME"}), -1);
    EXPECT_GE(find_seq(apps[k], {"-wdir", "/home/u"}), 0);
    EXPECT_EQ(Argv(apps[k].end() - 3, apps[k].end()), (Argv{"/opt/prog", "-n", "10"}));
  }
  EXPECT_GE(find_seq(apps[0], {"-x", "EXTRA=v w"}), 0);
  EXPECT_EQ(find_seq(apps[1], {"-x", "EXTRA=v w"}), -1);
  // The RSL's BSPG_SUBJOB is not passed twice.
  EXPECT_EQ(std::count(apps[0].begin(), apps[0].end(), "BSPG_SUBJOB=0"), 1);
}

TEST(GridArgv, SiteSubjobSpansItsHosts) {
  MpiSettings s = open_mpi4();
  auto site = subjob("lab-a", 5, {"a1:3", "a2:2"});
  site.directory.clear();
  Argv argv = grid_mpirun_argv(s, {site}, "");
  EXPECT_GE(find_seq(argv, {"-np", "5", "-host", "a1:3,a2:2"}), 0);
  EXPECT_EQ(find_seq(argv, {"plm_rsh_agent"}), -1);  // no host file: the user's ssh as is
  EXPECT_EQ(find_seq(argv, {"-wdir"}), -1);
  EXPECT_EQ(find_seq(argv, {":"}), -1);
  EXPECT_EQ(host_list(bspg::rsl::placement(subjob("h", 4))), "h:4");
}

TEST(GridArgv, MalformedHostsEntryIsRejected) {
  MpiSettings s = open_mpi4();
  EXPECT_THROW(grid_mpirun_argv(s, {subjob("lab", 2, {"a1"})}, ""), std::invalid_argument);
}

TEST(ShellQuote, QuotesOnlyWhatNeedsIt) {
  EXPECT_EQ(shell_quote_command({"mpirun", "-np", "2", "ssh -F /x", "it's"}),
            "mpirun -np 2 'ssh -F /x' 'it'\\''s'");
}

TEST(ShellQuote, ControlCharactersShowAsEscapes) {
  // $'...' reads back exactly the argument; nothing reaches the terminal raw.
  EXPECT_EQ(shell_quote_command({"prog", "a\nb", "\x1b[2J it's \\"}),
            "prog $'a\\nb' $'\\x1b[2J it\\'s \\\\'");
}

TEST(GridArgv, EveryProcessCarriesTheJobMarker) {
  MpiSettings s = open_mpi4();
  s.job_marker = "bspg-1-abc";
  bspg::rsl::Subjob a = subjob("h1", 1), b = subjob("h2", 1);
  b.environment = {{"BSPG_JOB_MARKER", "forged"}};  // the RSL cannot hide a process from bsprun
  Argv argv = grid_mpirun_argv(s, {a, b}, "");
  for (const auto& app : app_contexts(argv)) {
    EXPECT_GE(find_seq(app, {"-x", "BSPG_JOB_MARKER=bspg-1-abc"}), 0);
    EXPECT_EQ(find_seq(app, {"-x", "BSPG_JOB_MARKER=forged"}), -1);
  }
}

TEST(Options, StopsAtTheProgram) {
  Options o = parse({"-p", "4", "-v", "./prog", "-p", "9", "--help"});
  EXPECT_EQ(o.nprocs, 4);
  EXPECT_TRUE(o.verbose);
  EXPECT_FALSE(o.help);
  EXPECT_EQ(o.program, "./prog");
  EXPECT_EQ(o.program_args, (Argv{"-p", "9", "--help"}));
}

TEST(Options, ValueForms) {
  Options o = parse({"-p8", "--hostfile=h.yaml", "--probe-timeout", "2.5", "--mca", "btl",
                     "tcp,self", "-x", "A=1", "--", "-prog"});
  EXPECT_EQ(o.nprocs, 8);
  EXPECT_EQ(o.hostfile, "h.yaml");
  EXPECT_DOUBLE_EQ(o.probe_timeout_s, 2.5);
  EXPECT_EQ(o.mca, (std::vector<std::pair<std::string, std::string>>{{"btl", "tcp,self"}}));
  EXPECT_EQ(o.exports, (Argv{"A=1"}));
  EXPECT_EQ(o.program, "-prog");
}

TEST(Options, Errors) {
  EXPECT_EQ(message({}), "missing program: say what to run after the options");
  EXPECT_EQ(message({"-p", "0", "./prog"}),
            "-p needs a positive whole number of processes, not '0'");
  EXPECT_EQ(message({"-p", "2x", "./prog"}),
            "-p needs a positive whole number of processes, not '2x'");
  EXPECT_EQ(message({"-p", "-3", "./prog"}),
            "-p needs a positive whole number of processes, not '-3'");
  EXPECT_EQ(message({"-p"}), "option -p needs a value");
  EXPECT_EQ(message({"-p", "2"}), "missing program: say what to run after the options");
  EXPECT_EQ(message({"--bogus", "-p", "2", "./prog"}), "unknown option '--bogus'");
  EXPECT_EQ(message({"--dry-run=yes", "-p", "2", "./prog"}), "option --dry-run takes no value");
  EXPECT_EQ(message({"--probe-timeout", "soon", "-p", "2", "./prog"}),
            "--probe-timeout needs a positive number of seconds, not 'soon'");
  EXPECT_EQ(message({"--rsl", "j.rsl", "-p", "2"}),
            "--rsl takes the process counts from the RSL file; leave out -p");
  EXPECT_EQ(message({"-x", "1BAD", "-p", "2", "./prog"}),
            "-x needs NAME or NAME=VALUE with a valid variable name, not '1BAD'");
  EXPECT_EQ(message({"-p", "2", "./prog", "a", ":", "b"}),
            "the program argument ':' cannot be passed on (mpirun reads it as a separator)");
  // The numbers of the restart options: whole, real, bounded.
  const std::vector<std::string> grid = {"-p", "2", "--hostfile", "h.yaml"};
  const auto with = [&](std::vector<std::string> extra) {
    extra.insert(extra.begin(), grid.begin(), grid.end());
    extra.push_back("./prog");
    return message(extra);
  };
  EXPECT_EQ(with({"--restarts", "1001"}),
            "--restarts needs a whole number from 0 to 1000, not '1001'");
  EXPECT_EQ(with({"--restarts", "2.5"}),
            "--restarts needs a whole number from 0 to 1000, not '2.5'");
  EXPECT_EQ(with({"--host-timeout", "nan"}),
            "--host-timeout needs a positive number of seconds, not 'nan'");
  EXPECT_EQ(with({"--host-timeout", "1e9"}), "--host-timeout is at most 86400 seconds, not '1e9'");
  EXPECT_EQ(with({"--migrate-load", "-1"}),
            "--migrate-load needs a positive load average (e.g. 2.5), not '-1'");
  EXPECT_EQ(with({"--migrate-load", "2e6"}),
            "--migrate-load needs a positive load average (e.g. 2.5), not '2e6'");
  EXPECT_EQ(with({"--fanout", "0"}), "--fanout needs a positive whole number of hosts, not '0'");
}

// --copies K: checkpoint copies on K other hosts (BSPG_COPIES for every process).
TEST(Options, Copies) {
  const Options o = parse({"-p", "4", "--copies", "2", "--hostfile", "h.yaml", "./prog"});
  EXPECT_EQ(o.copies, 2);
  EXPECT_TRUE(o.copies_given);
  EXPECT_TRUE(uses_checkpoints(o));
  EXPECT_EQ(parse({"-p", "4", "./prog"}).copies, 1);
  EXPECT_FALSE(parse({"-p", "4", "./prog"}).copies_given);
  EXPECT_EQ(message({"-p", "4", "--copies", "0", "./prog"}),
            "--copies needs a whole number of copies from 1 to 1000, not '0'");
  EXPECT_EQ(message({"-p", "4", "--copies", "two", "./prog"}),
            "--copies needs a whole number of copies from 1 to 1000, not 'two'");
  EXPECT_EQ(message({"-p", "2", "--copies", "2", "./prog"}),
            "--copies 2 needs more than 2 processes (-p): each copy is kept by another process "
            "of the job");
  EXPECT_EQ(message({"--copies", "1", "./prog"}),
            "--copies needs -p N: the copies are kept by the job's processes, which master mode "
            "starts later, from the master");
  EXPECT_EQ(message({"-p", "4", "-x", "BSPG_COPIES=3", "./prog"}),
            "bsprun sets BSPG_COPIES for every process itself: use --copies K instead of -x");
}

TEST(Options, HostfileFromEnvironment) {
  setenv("BSPG_HOSTFILE", "/etc/hosts.yaml", 1);
  Options o = parse({"-p", "2", "prog"});
  unsetenv("BSPG_HOSTFILE");
  EXPECT_EQ(o.hostfile, "/etc/hosts.yaml");
  EXPECT_EQ(parse({"-p", "2", "prog"}).hostfile, "");
  // The command line wins over the environment.
  setenv("BSPG_HOSTFILE", "/etc/hosts.yaml", 1);
  EXPECT_EQ(parse({"--hostfile", "mine.yaml", "-p", "2", "prog"}).hostfile, "mine.yaml");
  unsetenv("BSPG_HOSTFILE");
}

TEST(Options, RslReplayNeedsNoProgram) {
  Options o = parse({"--rsl", "job.rsl", "--dry-run"});
  EXPECT_EQ(o.rsl_in, "job.rsl");
  EXPECT_TRUE(o.dry_run);
  EXPECT_EQ(o.nprocs, 0);
}

TEST(GridArgv, HostInSeveralSubjobsGetsTheirTotalSlots) {
  MpiSettings s = open_mpi4();
  auto one = subjob("emu1", 1);
  auto two = subjob("emu1", 2);
  auto site = subjob("lab", 2, {"emu2:1", "emu3:1"});
  auto apps = app_contexts(grid_mpirun_argv(s, {one, two, site}, ""));
  ASSERT_EQ(apps.size(), 3u);
  EXPECT_GE(find_seq(apps[0], {"-np", "1", "-host", "emu1:3"}), 0);
  EXPECT_GE(find_seq(apps[1], {"-np", "2", "-host", "emu1:3"}), 0);
  EXPECT_GE(find_seq(apps[2], {"-np", "2", "-host", "emu2:1,emu3:1"}), 0);
  // Shared with a subjob spanning several hosts: no exact placement, refused.
  auto other = subjob("emu3", 1);
  try {
    grid_mpirun_argv(s, {site, other}, "");
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("host emu3 is in several subjobs"), std::string::npos)
        << e.what();
  }
}

TEST(Options, OtherBsprunSpellingsOfP) {
  EXPECT_EQ(parse({"-n", "3", "./prog"}).nprocs, 3);
  EXPECT_EQ(parse({"-n3", "./prog"}).nprocs, 3);
  EXPECT_EQ(parse({"-np", "5", "./prog"}).nprocs, 5);
  // -npes is one option of its own, not "-n pes".
  Options o = parse({"-npes", "4", "./prog", "-npes", "2"});
  EXPECT_EQ(o.nprocs, 4);
  EXPECT_EQ(o.program, "./prog");
  EXPECT_EQ(o.program_args, (Argv{"-npes", "2"}));
}

TEST(Options, WithoutPIsMasterMode) {
  Options o = parse({"./prog", "arg"});
  EXPECT_EQ(o.nprocs, 0);
  EXPECT_EQ(o.max_procs, 0);
  EXPECT_EQ(o.program, "./prog");
  EXPECT_EQ(parse({"--max-procs", "6", "./prog"}).max_procs, 6);
  EXPECT_EQ(parse({"--max-procs=16", "./prog"}).max_procs, 16);
  EXPECT_EQ(message({"-npes", "pes", "./prog"}),
            "-npes needs a positive whole number of processes, not 'pes'");
  EXPECT_EQ(message({"-npes"}), "option -npes needs a value");
  EXPECT_EQ(message({"--max-procs", "0", "./prog"}),
            "--max-procs needs a positive whole number of processes, not '0'");
  EXPECT_EQ(message({"-p", "2", "--max-procs", "4", "./prog"}),
            "--max-procs is for master mode (no -p): with -p N, N processes start at once");
  EXPECT_EQ(message({"--rsl", "j.rsl", "--max-procs", "4"}),
            "--max-procs cannot be combined with --rsl (the RSL file gives the slots)");
  EXPECT_EQ(message({"--max-procs", "4"}), "missing program: say what to run after the options");
}

TEST(MasterMode, EnvironmentOfTheMaster) {
  MpiSettings s = open_mpi4();
  s.exports = {"FOO=1", "BAR"};
  s.environment = {{"OMPI_MCA_btl_tcp_if_include", "lo"}, {"HOME", "/root"}};
  auto env = master_environment(s, 3, {{"emu4", 0}, {"emu2", 1}, {"emu4", 0}});
  EXPECT_EQ(env, (std::vector<std::pair<std::string, std::string>>{
                     {"BSPG_MASTER_PROCS", "3"},
                     {"BSPG_MASTER_SLOTS", "emu4/0,emu2/1,emu4/0"},
                     {"BSPG_MASTER_ENV", "FOO,BAR,OMPI_MCA_btl_tcp_if_include"}}));
  // On this machine: no slots; nothing to pass on, no list.
  EXPECT_EQ(master_environment(open_mpi4(), 8, {}),
            (std::vector<std::pair<std::string, std::string>>{{"BSPG_MASTER_PROCS", "8"}}));
}

TEST(MasterMode, MpirunKnowsEverySlotAndStartsOneProcess) {
  MpiSettings s = open_mpi4();
  auto master = subjob("emu4", 1);
  master.environment = {{"BSPG_SUBJOB", "0"},
                        {"BSPG_MASTER_PROCS", "5"},
                        {"BSPG_MASTER_SLOTS", "emu4/0,emu2/1,emu4/0,emu3/2,emu2/1"}};
  Argv argv = master_grid_mpirun_argv(s, master, "/tmp/cfg");
  auto apps = app_contexts(argv);
  ASSERT_EQ(apps.size(), 1u);
  // The master's host first, so that it runs there.
  EXPECT_GE(find_seq(apps[0], {"-np", "1", "-host", "emu4:2,emu2:2,emu3:1"}), 0);
  EXPECT_GE(find_seq(apps[0], {"-x", "BSPG_MASTER_SLOTS=emu4/0,emu2/1,emu4/0,emu3/2,emu2/1"}), 0);
  EXPECT_GE(find_seq(argv, {"--mca", "plm_rsh_agent", "ssh -F /tmp/cfg"}), 0);
  EXPECT_EQ(Argv(apps[0].end() - 3, apps[0].end()), (Argv{"/opt/prog", "-n", "10"}));
  auto hosts = master_slot_hosts(master);
  ASSERT_EQ(hosts.size(), 3u);
  EXPECT_EQ(hosts[1].host, "emu2");
  EXPECT_EQ(hosts[1].count, 2);
  // Not a master: no slots, and the usual command line.
  EXPECT_TRUE(master_slot_hosts(subjob("emu4", 2)).empty());
}

TEST(MasterMode, BadSlotListsAreRefused) {
  auto refused = [](int count, const std::string& procs, const std::string& slots) {
    auto master = subjob("emu4", count);
    master.environment = {{"BSPG_MASTER_PROCS", procs}, {"BSPG_MASTER_SLOTS", slots}};
    try {
      master_slot_hosts(master);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(refused(1, "2", "emu4/0,emu2/1"), "accepted");
  EXPECT_EQ(refused(2, "2", "emu4/0,emu2/1"),
            "a master subjob (with BSPG_MASTER_SLOTS) has count 1");
  EXPECT_EQ(refused(1, "3", "emu4/0,emu2/1"),
            "BSPG_MASTER_SLOTS names 2 slots, but BSPG_MASTER_PROCS is '3'");
  EXPECT_EQ(refused(1, "2", "emu2/1,emu4/0"),
            "the first of BSPG_MASTER_SLOTS is the master's own, on emu4, not on emu2");
  for (std::string bad :
       {"emu4/0,", "emu4/0,emu2", "emu4/0,emu 2/1", "emu4/0,-x/1", "emu4/0,emu2/-1", "emu4/0,/1"})
    EXPECT_NE(refused(1, "2", bad).find("is not HOST/SUBJOB"), std::string::npos) << bad;
}

// ---- Each MPI's starter ------------------------------------------------------------------------

MpiSettings settings_for(MpiFamily family) {
  MpiSettings s;
  s.mpi = &mpi_of(family);
  s.mpirun = "/usr/bin/starter";
  s.run_as_root = true;
  s.exports = {"FOO=1", "BAR"};
  s.environment = {
      {"OMPI_MCA_btl", "tcp,self"}, {"PRTE_MCA_x", "1"}, {"MPIR_CVAR_Y", "2"}, {"HOME", "/root"}};
  return s;
}

TEST(OpenMpi5Argv, LocalPathSpeaksPrrte) {
  const Argv argv = local_mpirun_argv(settings_for(MpiFamily::kOpenMpi5), 5, true, "/p", {"a"});
  EXPECT_EQ(argv.front(), "/usr/bin/starter");
  EXPECT_GE(find_seq(argv, {"--allow-run-as-root"}), 0);
  EXPECT_GE(find_seq(argv, {"--map-by", ":OVERSUBSCRIBE"}), 0);
  EXPECT_EQ(find_seq(argv, {"--oversubscribe"}), -1);  // deprecated in PRRTE
  EXPECT_EQ(find_seq(argv, {"pt2pt"}), -1);            // gone from Open MPI 5: never asked for
  EXPECT_EQ(find_seq(argv, {"osc"}), -1);              // the library chooses (runtime.cpp)
  EXPECT_GE(find_seq(argv, {"-x", "BSPG_SUBJOB_SIZES=5"}), 0);
  EXPECT_GE(find_seq(argv, {"-x", "FOO=1"}), 0);
  EXPECT_GE(find_seq(argv, {"-x", "BAR"}), 0);
  EXPECT_EQ(Argv(argv.end() - 4, argv.end()), (Argv{"-n", "5", "/p", "a"}));
}

TEST(OpenMpi5Argv, GridPathUsesPrrtesSshLauncherAndPassesItsParameters) {
  const Argv argv =
      grid_mpirun_argv(settings_for(MpiFamily::kOpenMpi5), {subjob("h", 2)}, "/tmp/cfg");
  EXPECT_GE(find_seq(argv, {"--prtemca", "plm_ssh_agent", "ssh -F /tmp/cfg"}), 0);
  EXPECT_GE(find_seq(argv, {"--prtemca", "plm_ssh_no_tree_spawn", "1"}), 0);
  EXPECT_GE(find_seq(argv, {"--prtemca", "prte_keep_fqdn_hostnames", "1"}), 0);
  EXPECT_GE(find_seq(argv, {"--bind-to", "none"}), 0);  // a host's slots may exceed its cores
  EXPECT_EQ(find_seq(argv, {"plm_rsh_agent"}), -1);
  EXPECT_GE(find_seq(argv, {"-n", "2", "--host", "h:2", "--wdir", "/home/u"}), 0);
  EXPECT_GE(find_seq(argv, {"-x", "OMPI_MCA_btl"}), 0);
  EXPECT_GE(find_seq(argv, {"-x", "PRTE_MCA_x"}), 0);
  EXPECT_EQ(find_seq(argv, {"-x", "MPIR_CVAR_Y"}), -1);
  EXPECT_EQ(find_seq(argv, {"-x", "HOME"}), -1);
}

// A run with sanitizer options set means them on every host: the starters pass them there.
TEST(GridArgv, SanitizerOptionsReachEveryHostOnEveryMpi) {
  for (MpiFamily family : {MpiFamily::kOpenMpi4, MpiFamily::kOpenMpi5, MpiFamily::kMpich}) {
    MpiSettings s = settings_for(family);
    s.environment["ASAN_OPTIONS"] = "detect_leaks=0";
    s.environment["UBSAN_OPTIONS"] = "print_stacktrace=1";
    const Argv argv = grid_mpirun_argv(s, {subjob("h", 2)}, "/tmp/cfg");
    if (family == MpiFamily::kMpich) {
      EXPECT_GE(find_seq(argv, {"-env", "ASAN_OPTIONS", "detect_leaks=0"}), 0);
      EXPECT_GE(find_seq(argv, {"-env", "UBSAN_OPTIONS", "print_stacktrace=1"}), 0);
    } else {
      EXPECT_GE(find_seq(argv, {"-x", "ASAN_OPTIONS"}), 0);
      EXPECT_GE(find_seq(argv, {"-x", "UBSAN_OPTIONS"}), 0);
    }
    EXPECT_EQ(find_seq(argv, {"HOME"}), -1);
  }
}

// Open MPI 5.0.7's PMIx crashes its daemons on a job of several app contexts unless its Open MPI
// personality (pmdl/ompi) is left out; one app context keeps it.
TEST(OpenMpi5Argv, SeveralSubjobsLeaveOutPmixsOpenMpiPersonality) {
  const Argv two = grid_mpirun_argv(settings_for(MpiFamily::kOpenMpi5),
                                    {subjob("a", 2), subjob("b", 1)}, "/tmp/cfg");
  const long at = find_seq(two, {"--pmixmca", "pmdl", "^ompi"});
  EXPECT_GE(at, 0);
  EXPECT_LT(at, find_seq(two, {"-n", "2"}));  // an option of the starter, not of an app context
  EXPECT_GE(find_seq(two, {":", "-n", "1", "--host", "b:1"}), 0);
  const Argv one =
      grid_mpirun_argv(settings_for(MpiFamily::kOpenMpi5), {subjob("a", 2)}, "/tmp/cfg");
  EXPECT_EQ(find_seq(one, {"--pmixmca"}), -1);
  for (MpiFamily other : {MpiFamily::kOpenMpi4, MpiFamily::kMpich}) {
    const Argv argv =
        grid_mpirun_argv(settings_for(other), {subjob("a", 2), subjob("b", 1)}, "/tmp/cfg");
    EXPECT_EQ(find_seq(argv, {"--pmixmca"}), -1);
  }
  // A master on the grid spawns one app context per subjob.
  auto master = subjob("a", 1);
  master.environment = {{"BSPG_MASTER_PROCS", "2"}, {"BSPG_MASTER_SLOTS", "a/0,b/1"}};
  EXPECT_GE(find_seq(master_grid_mpirun_argv(settings_for(MpiFamily::kOpenMpi5), master, "/c"),
                     {"--pmixmca", "pmdl", "^ompi"}),
            0);
}

TEST(MpichArgv, LocalPathIsHydrasMpiexecWithNothingForRootOrOversubscription) {
  const Argv argv = local_mpirun_argv(settings_for(MpiFamily::kMpich), 5, true, "/p", {"a", "b"});
  EXPECT_EQ(argv.front(), "/usr/bin/starter");
  for (const char* open_mpi_only : {"--allow-run-as-root", "--oversubscribe", "-x", "--mca", "-np"})
    EXPECT_EQ(find_seq(argv, {open_mpi_only}), -1) << open_mpi_only;
  EXPECT_GE(find_seq(argv, {"-env", "BSPG_SUBJOB", "0"}), 0);
  EXPECT_GE(find_seq(argv, {"-env", "BSPG_SUBJOB_SIZES", "5"}), 0);
  EXPECT_GE(find_seq(argv, {"-env", "FOO", "1"}), 0);
  // Hydra passes mpiexec's whole environment on: BAR reaches the processes as it is.
  EXPECT_EQ(find_seq(argv, {"BAR"}), -1);
  EXPECT_EQ(Argv(argv.end() - 5, argv.end()), (Argv{"-n", "5", "/p", "a", "b"}));
}

TEST(MpichArgv, OpenMpiOnlyRequestsAreRefusedWithTheReason) {
  MpiSettings s = settings_for(MpiFamily::kMpich);
  s.mca = {{"btl", "tcp"}};
  try {
    local_mpirun_argv(s, 2, false, "/p", {});
    FAIL() << "--mca accepted with MPICH";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("MCA parameters are Open MPI's"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("MPIR_CVAR_"), std::string::npos);
  }
  EXPECT_FALSE(user_sets_mca(settings_for(MpiFamily::kMpich), "btl"));
}

TEST(MpichArgv, GridPathIsOneHostListFilledInSubjobOrderOverBsprunsSshLauncher) {
  // Two subjobs; site A's spans two hosts, and host a1 is in both.
  const Argv argv = grid_mpirun_argv(
      settings_for(MpiFamily::kMpich),
      {subjob("a1", 3, {"a1:2", "a2:1"}), subjob("b", 2), subjob("a1", 1)}, "/tmp/cfg");
  EXPECT_GE(find_seq(argv, {"-genvnone", "-launcher", "ssh", "-launcher-exec", "/tmp/cfg.ssh"}), 0);
  const long hosts = find_seq(argv, {"-hosts"});
  ASSERT_GE(hosts, 0);
  // Hydra fills the one list in order: subjob 0's three processes on a1 and a2, then b's two,
  // then a1's one again.
  EXPECT_EQ(argv[static_cast<size_t>(hosts) + 1], "a1:2,a2:1,b:2,a1:1");
  EXPECT_EQ(std::count(argv.begin(), argv.end(), "-hosts"), 1);
  EXPECT_EQ(std::count(argv.begin(), argv.end(), ":"), 2);
  EXPECT_GE(find_seq(argv, {"-n", "3", "-wdir", "/home/u", "-env", "BSPG_SUBJOB", "0"}), 0);
  EXPECT_GE(find_seq(argv, {"-n", "1", "-wdir", "/home/u", "-env", "BSPG_SUBJOB", "2"}), 0);
  EXPECT_GE(find_seq(argv, {"-env", "BSPG_SUBJOB_SIZES", "3,2,1"}), 0);
  // Processes elsewhere get the MPI's parameters bsprun has (MPIR_CVAR_*), and -x NAME's value
  // where bsprun has one (BAR: none), not the rest of bsprun's environment (HOME).
  EXPECT_EQ(std::count(argv.begin(), argv.end(), "MPIR_CVAR_Y"), 3);
  EXPECT_GE(find_seq(argv, {"-env", "MPIR_CVAR_Y", "2"}), 0);
  EXPECT_EQ(find_seq(argv, {"BAR"}), -1);
  EXPECT_EQ(find_seq(argv, {"HOME"}), -1);
  // The launcher runs ssh with bsprun's configuration, quoted for the shell.
  const std::string script = mpi_of(MpiFamily::kMpich).ssh_launcher_script("/tmp/my cfg");
  EXPECT_EQ(script.rfind("#!/bin/sh\n", 0), 0u);
  EXPECT_NE(script.find("exec ssh -F '/tmp/my cfg' \"$@\"\n"), std::string::npos) << script;
  EXPECT_EQ(ssh_launcher_path("/tmp/cfg"), "/tmp/cfg.ssh");
  // Open MPI needs none: its agent takes a command line.
  EXPECT_EQ(mpi_of(MpiFamily::kOpenMpi4).ssh_launcher_script("/tmp/cfg"), "");
  // Without a generated configuration, Hydra's ssh runs as the user's own.
  const Argv plain = grid_mpirun_argv(settings_for(MpiFamily::kMpich), {subjob("b", 2)}, "");
  EXPECT_EQ(find_seq(plain, {"-launcher-exec"}), -1);
  EXPECT_GE(find_seq(plain, {"-launcher", "ssh", "-hosts", "b:2"}), 0);
}

TEST(EachMpi, ParametersAreItsOwnVariables) {
  EXPECT_TRUE(mpi_of(MpiFamily::kOpenMpi4).is_parameter("OMPI_MCA_osc"));
  EXPECT_FALSE(mpi_of(MpiFamily::kOpenMpi4).is_parameter("PRTE_MCA_x"));
  EXPECT_TRUE(mpi_of(MpiFamily::kOpenMpi5).is_parameter("PRTE_MCA_x"));
  EXPECT_TRUE(mpi_of(MpiFamily::kOpenMpi5).is_parameter("PMIX_MCA_y"));
  EXPECT_TRUE(mpi_of(MpiFamily::kMpich).is_parameter("MPIR_CVAR_ASYNC_PROGRESS"));
  EXPECT_FALSE(mpi_of(MpiFamily::kMpich).is_parameter("OMPI_MCA_osc"));
  EXPECT_EQ(mpi_of(MpiFamily::kOpenMpi4).name().rfind("Open MPI 4", 0), 0u);
  EXPECT_EQ(mpi_of(MpiFamily::kMpich).name().rfind("MPICH", 0), 0u);
  // The configured one is one of them, and knows its starter by its full path.
  EXPECT_EQ(configured_mpi().starter().front(), '/');
}

// Host names with '_': Open MPI 4's mpirun would wait for ever on them, so they are refused in one
// line there; Open MPI 5 and MPICH take them.
TEST(MpiHostNames, UnderscoreRefusedOnlyByOpenMpi4) {
  const std::string why = mpi_of(MpiFamily::kOpenMpi4).host_name_refused("node_1");
  EXPECT_NE(why.find("cannot start processes on a host whose name has '_'"), std::string::npos)
      << why;
  EXPECT_EQ(mpi_of(MpiFamily::kOpenMpi4).host_name_refused("node-1.example.org"), "");
  EXPECT_EQ(mpi_of(MpiFamily::kOpenMpi5).host_name_refused("node_1"), "");
  EXPECT_EQ(mpi_of(MpiFamily::kMpich).host_name_refused("node_1"), "");
}

// --mpirun-arg: the user's words reach the starter after bsprun's own options and before the
// processes, on the local and the grid path, for Open MPI and MPICH alike.
TEST(StarterArgs, ReachTheStarterBeforeTheProcesses) {
  for (MpiFamily family : {MpiFamily::kOpenMpi4, MpiFamily::kOpenMpi5, MpiFamily::kMpich}) {
    MpiSettings s;
    s.mpi = &mpi_of(family);
    s.mpirun = "starter";
    s.starter_args = {"--display-map", "-x", "A=1"};
    const Argv local = local_mpirun_argv(s, 2, true, "/p", {"--display-map"});
    const long at = find_seq(local, {"--display-map", "-x", "A=1"});
    EXPECT_GT(at, 0) << s.mpi->name();
    EXPECT_LT(at, find_seq(local, {"/p"})) << s.mpi->name();
    const Argv grid = grid_mpirun_argv(s, {subjob("emu1", 1), subjob("emu2", 1)}, "/tmp/cfg");
    const long grid_at = find_seq(grid, {"--display-map", "-x", "A=1"});
    EXPECT_GT(grid_at, 0) << s.mpi->name();
    EXPECT_LT(grid_at, find_seq(grid, {"/opt/prog"})) << s.mpi->name();
  }
}

TEST(StarterArgs, WhatBsprunSetsIsRefusedInOneLine) {
  EXPECT_EQ(message({"-p", "2", "--mpirun-arg", "--display-map", "--mpirun-arg=-x", "--mpirun-arg",
                     "A=1", "./prog"}),
            "no error");
  EXPECT_EQ(parse({"--mpirun-arg", "--display-map", "--mpirun-arg=-v", "./prog"}).starter_args,
            (Argv{"--display-map", "-v"}));
  EXPECT_EQ(message({"-p", "2", "--mpirun-arg", "-np", "./prog"}),
            "--mpirun-arg '-np' is refused: the process count is bsprun's (-p N, or --max-procs N "
            "in master mode)");
  EXPECT_EQ(message({"-p", "2", "--mpirun-arg", "--host=a,b", "./prog"}),
            "--mpirun-arg '--host=a,b' is refused: the hosts are bsprun's (--hostfile FILE, "
            "--rsl FILE, or the Slurm allocation)");
  EXPECT_EQ(message({"-p", "2", "--mpirun-arg", "-launcher", "./prog"}),
            "--mpirun-arg '-launcher' is refused: bsprun chooses how the starter reaches the hosts "
            "(its own ssh configuration)");
  EXPECT_EQ(message({"-p", "2", "--mpirun-arg", "--mca", "--mpirun-arg", "osc", "./prog"}),
            "--mpirun-arg 'osc' is refused: bsprun chooses the one-sided components (its own --mca "
            "osc VALUE wins)");
  EXPECT_EQ(
      message({"-p", "2", "--mpirun-arg", "--mca", "--mpirun-arg", "plm_rsh_agent", "./prog"}),
      "--mpirun-arg 'plm_rsh_agent' is refused: bsprun chooses how the starter reaches the hosts "
      "(its own ssh configuration)");
  EXPECT_EQ(message({"-p", "2", "--mpirun-arg", ":", "./prog"}),
            "--mpirun-arg ':' is refused: ':' would start another program (an MPMD start) after "
            "bsprun's");
  // Other MCA parameters pass.
  EXPECT_EQ(message({"-p", "2", "--mpirun-arg", "--mca", "--mpirun-arg", "btl", "--mpirun-arg",
                     "self,tcp", "./prog"}),
            "no error");
}

// Recovery in place needs the MPI's fault tolerance: Open MPI 5 built with ULFM has it, without
// the heartbeat detector (bsprun's own watch ends stopped processes); Open MPI 4.1 and MPICH say
// why not.
TEST(FaultTolerance, OpenMpi5WithUlfmSwitchesItOnWithoutTheDetector) {
  const Mpi& five = mpi_of(MpiFamily::kOpenMpi5);
  EXPECT_EQ(five.in_place_unavailable(), "");
  Argv argv;
  five.fault_tolerance(argv);
  EXPECT_EQ(argv, (Argv{"--with-ft", "ulfm"}));
}

TEST(FaultTolerance, WithoutItTheLineSaysWhyAndTheRestartPathIsLeft) {
  const std::string four = mpi_of(MpiFamily::kOpenMpi4).in_place_unavailable();
  EXPECT_NE(four.find("has no fault tolerance (ULFM came with Open MPI 5)"), std::string::npos)
      << four;
  const std::string mpich = mpi_of(MpiFamily::kMpich).in_place_unavailable();
  EXPECT_NE(mpich.find("its fault tolerance fails at MPI_Init"), std::string::npos) << mpich;
  for (const std::string& line : {four, mpich}) {
    EXPECT_NE(line.find("--restarts starts it again from its newest checkpoint"),
              std::string::npos);
    EXPECT_EQ(line.find('\n'), std::string::npos);
  }
  Argv argv;
  mpi_of(MpiFamily::kOpenMpi4).fault_tolerance(argv);
  mpi_of(MpiFamily::kMpich).fault_tolerance(argv);
  EXPECT_TRUE(argv.empty());
}
