// in_place_test.cpp - recovery in place (bsprun --spares K): when bsprun has it, the starter's
// command for it, the library's lines (well formed and hostile), how a run that could not
// recover in place is restarted, and ending a lost process that still lives.
#include "in_place.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "allocate.h"
#include "exit_notes.h"
#include "mpirun_messages.h"
#include "mpistart.h"
#include "place_support.h"
#include "recovery_lines.h"
#include "remote_stop.h"
#include "restart.h"

using namespace bspg::launcher;
using Argv = std::vector<std::string>;

namespace {

// Locks of these tests' made-up jobs go to a directory of their own.
const bool kPrivateLocks = [] {
  static char pattern[] = "/tmp/bspg-in-place-test.XXXXXX";
  if (mkdtemp(pattern)) {
    setenv("XDG_RUNTIME_DIR", pattern, 1);
    std::atexit([] { std::system(("rm -rf '" + std::string(pattern) + "'").c_str()); });
  }
  return true;
}();

long find_seq(const Argv& argv, const Argv& what) {
  auto it = std::search(argv.begin(), argv.end(), what.begin(), what.end());
  return it == argv.end() ? -1 : it - argv.begin();
}

Options job_options(int nprocs, int spares) {
  Options opt;
  opt.nprocs = nprocs;
  opt.spares = spares;
  opt.restarts = spares;
  // Names of this test's own: ctest runs the tests side by side, and a job's locks are by name.
  const std::string test = testing::UnitTest::GetInstance()->current_test_info()->name();
  opt.job_id = "in-place-test-" + test;
  opt.checkpoint_dir = "/nonexistent/in-place-ckpt-" + test;
  opt.program = "prog";
  return opt;
}

MpiSettings with_spares(MpiFamily family, int spares) {
  MpiSettings s;
  s.mpi = &mpi_of(family);
  s.mpirun = "/usr/bin/mpirun";
  s.spares = spares;
  return s;
}

const char* kRecovered =
    "bspg: recovered in place from checkpoint 3: process 2 (host h2, process id 4312) lost, a "
    "spare on h3 took its place, in 0.012 s";
const char* kNoRecovery =
    "bspg: process 1 (host node7.example.org, process id 977) lost; no recovery in place: no "
    "spare left; the job ends for a restart";

}  // namespace

// ---- When bsprun recovers in place -------------------------------------------------------------

TEST(InPlaceChoice, OpenMpi5WithUlfmStartsTheSpares) {
  const Options opt = job_options(4, 2);
  const InPlaceChoice choice = choose_in_place(opt, mpi_of(MpiFamily::kOpenMpi5));
  EXPECT_EQ(choice.spares, 2);
  EXPECT_EQ(choice.refused, "");
  EXPECT_EQ(choice.not_used, "");
  EXPECT_EQ(choose_in_place(job_options(4, 0), mpi_of(MpiFamily::kOpenMpi5)).spares, 0);
}

TEST(InPlaceChoice, WithoutTheMpisFaultToleranceInPlaceIsRefusedAndSparesFallBack) {
  Options opt = job_options(4, 1);
  for (MpiFamily family : {MpiFamily::kOpenMpi4, MpiFamily::kMpich}) {
    opt.recovery = Options::Recovery::InPlace;
    const InPlaceChoice refused = choose_in_place(opt, mpi_of(family));
    EXPECT_EQ(refused.spares, 0);
    EXPECT_EQ(refused.refused.rfind("--recovery in-place is not possible: ", 0), 0u)
        << refused.refused;
    EXPECT_NE(refused.refused.find(mpi_of(family).name()), std::string::npos);
    EXPECT_EQ(refused.refused.find('\n'), std::string::npos);
    opt.recovery = Options::Recovery::Automatic;
    const InPlaceChoice fallback = choose_in_place(opt, mpi_of(family));
    EXPECT_EQ(fallback.spares, 0);
    EXPECT_EQ(fallback.refused, "");
    EXPECT_EQ(fallback.not_used.rfind("--spares 1: no recovery in place: ", 0), 0u)
        << fallback.not_used;
  }
  EXPECT_NE(choose_in_place(opt, mpi_of(MpiFamily::kOpenMpi4)).not_used.find("ULFM came with"),
            std::string::npos);
}

TEST(InPlaceChoice, RecoveryRestartStartsNoSpare) {
  Options opt = job_options(4, 1);
  opt.recovery = Options::Recovery::Restart;
  const InPlaceChoice choice = choose_in_place(opt, mpi_of(MpiFamily::kOpenMpi5));
  EXPECT_EQ(choice.spares, 0);
  EXPECT_EQ(choice.not_used,
            "--spares 1 with --recovery restart: no spare is started; a lost process restarts "
            "the job from its newest checkpoint");
}

// ---- The starter's command ---------------------------------------------------------------------

TEST(InPlaceArgv, LocalPathStartsTheSparesAsTheLastRanksWithFaultTolerance) {
  const Argv argv = local_mpirun_argv(with_spares(MpiFamily::kOpenMpi5, 2), 4, false, "/p", {"a"});
  EXPECT_EQ(Argv(argv.end() - 4, argv.end()), (Argv{"-n", "6", "/p", "a"}));
  EXPECT_GE(find_seq(argv, {"-x", "BSPG_SUBJOB_SIZES=4"}), 0);  // the job's processes only
  EXPECT_GE(find_seq(argv, {"--with-ft", "ulfm"}), 0);
  EXPECT_EQ(find_seq(argv, {"--mca", "mpi_ft_detector_thread"}), -1);  // bsprun's watch instead
  // Without spares, none of it.
  const Argv plain = local_mpirun_argv(with_spares(MpiFamily::kOpenMpi5, 0), 4, false, "/p", {});
  EXPECT_EQ(find_seq(plain, {"--with-ft"}), -1);
  EXPECT_EQ(Argv(plain.end() - 3, plain.end()), (Argv{"-n", "4", "/p"}));
}

TEST(InPlaceArgv, EveryProcessLearnsTheSparesAndTheRecoveriesLeft) {
  const Options opt = job_options(4, 2);
  const MpiSettings run =
      run_settings(with_spares(MpiFamily::kOpenMpi5, 2), "/ckpt", 0, "65a1b2c3d4e5f607", opt, 1);
  EXPECT_NE(std::find(run.exports.begin(), run.exports.end(), "BSPG_SPARES=2"), run.exports.end());
  EXPECT_NE(std::find(run.exports.begin(), run.exports.end(), "BSPG_RECOVERIES=1"),
            run.exports.end());
  const MpiSettings none =
      run_settings(with_spares(MpiFamily::kOpenMpi5, 0), "/ckpt", 0, "65a1b2c3d4e5f607", opt, 1);
  for (const std::string& e : none.exports) EXPECT_EQ(e.rfind("BSPG_SPARES", 0), std::string::npos);
}

namespace {

bspg::rsl::Subjob app(const std::string& contact, int count) {
  bspg::rsl::Subjob sj;
  sj.contact = contact;
  sj.count = count;
  sj.executable = "/opt/prog";
  sj.arguments = {"-n", "10"};
  sj.directory = "/home/u";
  return sj;
}

}  // namespace

// Open MPI 5 starts several app contexts only without PMIx's Open MPI personality, and its
// fault tolerance then does not reach the processes: one context, placed rank by rank.
TEST(InPlaceArgv, GridPathStartsTheJobAndItsSparesInOneAppContextRankByRank) {
  const MpiSettings s = with_spares(MpiFamily::kOpenMpi5, 2);
  const Argv argv =
      grid_mpirun_argv(s, {app("h1", 2), app("h2", 2)}, "/tmp/cfg", {app("h3", 1), app("h4", 1)});
  EXPECT_GE(find_seq(argv, {"--with-ft", "ulfm"}), 0);
  EXPECT_GE(find_seq(argv, {"-n", "6", "--map-by", "seq", "--host", "h1,h1,h2,h2,h3,h4", "--wdir",
                            "/home/u"}),
            0);
  EXPECT_EQ(find_seq(argv, {":"}), -1);
  EXPECT_EQ(find_seq(argv, {"--pmixmca"}), -1);
  // The processes find their subjob from the sizes (the job's) and their rank; spares come after.
  EXPECT_GE(find_seq(argv, {"-x", "BSPG_SUBJOB="}), 0);
  EXPECT_GE(find_seq(argv, {"-x", "BSPG_NSUBJOBS=2"}), 0);
  EXPECT_GE(find_seq(argv, {"-x", "BSPG_SUBJOB_SIZES=2,2"}), 0);
  EXPECT_EQ(argv[argv.size() - 3], "/opt/prog");
  EXPECT_EQ(argv.back(), "10");
}

TEST(InPlaceArgv, ASpareOnAJobsHostComesAfterTheJobsProcesses) {
  const Argv argv = grid_mpirun_argv(with_spares(MpiFamily::kOpenMpi5, 1),
                                     {app("h1", 2), app("h2", 1)}, "/tmp/cfg", {app("h1", 1)});
  EXPECT_GE(find_seq(argv, {"-n", "4", "--map-by", "seq", "--host", "h1,h1,h2,h1"}), 0);
}

// After a site was lost, the hosts left form one subjob across several hosts, and the spare
// shares one of them: one app context in rank order places that, where an -host list per
// context could not (Open MPI counts a host's slots once for the whole job).
TEST(InPlaceArgv, ASpareOnAHostOfASubjobAcrossHostsStillStarts) {
  auto site = app("site2", 4);
  site.hosts = {"h3:1", "h4:1", "h5:1", "h6:1"};
  const Argv argv =
      grid_mpirun_argv(with_spares(MpiFamily::kOpenMpi5, 1), {site}, "/tmp/cfg", {app("h3", 1)});
  EXPECT_GE(find_seq(argv, {"-n", "5", "--map-by", "seq", "--host", "h3,h4,h5,h6,h3"}), 0);
  // Where the spare's context differs (its program staged elsewhere), each context needs an
  // -host list of its own: refused, saying why.
  auto differs = app("h3", 1);
  differs.executable = "/staged/prog";
  try {
    grid_mpirun_argv(with_spares(MpiFamily::kOpenMpi5, 1), {site}, "/tmp/cfg", {differs});
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("host h3 is in several subjobs"), std::string::npos)
        << e.what();
  }
}

// Where the spare runs another copy of the program (staged elsewhere on its host), or subjobs
// differ otherwise, each keeps an app context of its own.
TEST(InPlaceArgv, RunsThatDifferKeepAnAppContextEach) {
  auto spare = app("h3", 1);
  spare.executable = "/staged/prog";
  const Argv argv = grid_mpirun_argv(with_spares(MpiFamily::kOpenMpi5, 1),
                                     {app("h1", 2), app("h2", 2)}, "/tmp/cfg", {spare});
  std::vector<long> contexts;
  for (const char* host : {"h1:2", "h2:2", "h3:1"})
    contexts.push_back(find_seq(argv, {"--host", host}));
  for (long at : contexts) EXPECT_GE(at, 0);
  EXPECT_TRUE(std::is_sorted(contexts.begin(), contexts.end()));
  EXPECT_EQ(find_seq(argv, {"--map-by", "seq"}), -1);
  // The spare belongs to no subjob of the job's; the sizes count the job's processes.
  const Argv spare_context(argv.begin() + contexts[2], argv.end());
  EXPECT_GE(find_seq(spare_context, {"-x", "BSPG_SUBJOB=2"}), 0);
  EXPECT_GE(find_seq(spare_context, {"-x", "BSPG_SUBJOB_SIZES=2,2"}), 0);
  EXPECT_GE(find_seq(spare_context, {"/staged/prog"}), 0);
  auto other = app("h2", 2);
  other.environment = {{"OMP_NUM_THREADS", "4"}};
  EXPECT_EQ(find_seq(grid_mpirun_argv(with_spares(MpiFamily::kOpenMpi5, 1), {app("h1", 2), other},
                                      "/tmp/cfg", {app("h3", 1)}),
                     {"--map-by", "seq"}),
            -1);
}

// ---- Where the spares go ------------------------------------------------------------------------

namespace {

HostChoice candidate(const std::string& name, int rank, int slots, int count,
                     bspg::hosts::ProgramStatus program = bspg::hosts::ProgramStatus::kOk) {
  HostChoice c;
  c.probe.host.name = name;
  c.probe.ok = rank >= 0;
  c.probe.program_status = program;
  c.rank = rank;
  c.slots = slots;
  c.count = count;
  return c;
}

std::vector<std::pair<std::string, int>> placed(const std::vector<PlacedHost>& hosts) {
  std::vector<std::pair<std::string, int>> out;
  for (const auto& h : hosts) out.emplace_back(h.name, h.count);
  return out;
}

}  // namespace

TEST(SparePlacement, OtherHostsFirstLeastLoadedFirstOneEachInTurn) {
  Allocation a;
  a.candidates = {candidate("h1", 0, 4, 4), candidate("h2", 1, 4, 4), candidate("h3", 3, 2, 0),
                  candidate("h4", 2, 2, 0), candidate("down", -1, 0, 0)};
  using P = std::vector<std::pair<std::string, int>>;
  EXPECT_EQ(placed(place_spares(a, 1)), (P{{"h4", 1}}));
  EXPECT_EQ(placed(place_spares(a, 3)), (P{{"h4", 2}, {"h3", 1}}));
  // Beyond the other hosts' slots: the job's hosts, where slots are left, then in turn.
  a.candidates[0].slots = 5;
  EXPECT_EQ(placed(place_spares(a, 5)), (P{{"h4", 2}, {"h3", 2}, {"h1", 1}}));
  EXPECT_EQ(placed(place_spares(a, 7)), (P{{"h4", 2}, {"h3", 2}, {"h1", 2}, {"h2", 1}}));
  EXPECT_TRUE(place_spares(a, 0).empty());
  // With --stage, only where the job's program was staged.
  EXPECT_EQ(placed(place_spares(a, 2, true)), (P{{"h1", 2}}));
}

TEST(SparePlacement, AHostWithoutTheProgramTakesNone) {
  Allocation a;
  a.candidates = {candidate("h1", 0, 2, 2),
                  candidate("h2", 1, 2, 0, bspg::hosts::ProgramStatus::kNotFound),
                  candidate("h3", 2, 2, 0, bspg::hosts::ProgramStatus::kUnchecked)};
  using P = std::vector<std::pair<std::string, int>>;
  EXPECT_EQ(placed(place_spares(a, 1)), (P{{"h3", 1}}));
}

// ---- The library's lines ------------------------------------------------------------------------

TEST(RecoveryLines, TheLibrarysRecoveryLineIsRead) {
  const auto r = recovered_in_place(kRecovered);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->checkpoint, 3u);
  ASSERT_EQ(r->lost.size(), 1u);
  EXPECT_EQ(r->lost[0].pid, 2);
  EXPECT_EQ(r->lost[0].host, "h2");
  EXPECT_EQ(r->lost[0].process_id, 4312);

  const auto two = recovered_in_place(
      "bspg: recovered in place: process 1 (host a.b-c_d, process id 2) and process 3 (host e, "
      "process id 4194304) lost");
  ASSERT_TRUE(two);
  EXPECT_EQ(two->checkpoint, 0u);
  ASSERT_EQ(two->lost.size(), 2u);
  EXPECT_EQ(two->lost[1].host, "e");
  EXPECT_EQ(two->lost[1].process_id, 4194304);
  EXPECT_TRUE(
      recovered_in_place("bspg: recovered in place: process 0 (host h, process id 9), "
                         "process 5 (host h, process id 10) lost; two spares"));
}

TEST(RecoveryLines, HostileOrMalformedRecoveryLinesAreNotTaken) {
  for (const std::string line : {
           "bspg: recovered in place",
           "bspg: recovered in place: ",
           "xbspg: recovered in place: process 2 (host h2, process id 4312) lost",
           " bspg: recovered in place: process 2 (host h2, process id 4312) lost",
           "bspg: recovered in place: process -2 (host h2, process id 4312) lost",
           "bspg: recovered in place: process 1000000 (host h2, process id 4312) lost",
           "bspg: recovered in place: process 02 (host h2, process id 4312) lost",
           "bspg: recovered in place: process 2 (host h2, process id 1) lost",
           "bspg: recovered in place: process 2 (host h2, process id 0) lost",
           "bspg: recovered in place: process 2 (host h2, process id 4194305) lost",
           "bspg: recovered in place: process 2 (host h2, process id 99999999999999999999) lost",
           "bspg: recovered in place: process 2 (host h2, process id 4312x) lost",
           "bspg: recovered in place: process 2 (host h2, process id +4312) lost",
           "bspg: recovered in place: process 2 (host , process id 4312) lost",
           "bspg: recovered in place: process 2 (host -rf, process id 4312) lost",
           "bspg: recovered in place: process 2 (host h 2, process id 4312) lost",
           "bspg: recovered in place: process 2 (host h2;reboot, process id 4312) lost",
           "bspg: recovered in place: process 2 (host $(id), process id 4312) lost",
           "bspg: recovered in place: process 2 (host h2\x1b[2J, process id 4312) lost",
           "bspg: recovered in place: process 2 (host h2, process id 4312 lost",
           "bspg: recovered in place: process 2 (host h2, process id 4312) lostx",
           "bspg: recovered in place: process 2 (host h2, process id 4312)",
           "bspg: recovered in place: process 2 (host h2, process id 4312) or process 3 (host h3, "
           "process id 5) lost",
           "bspg: recovered in place: process 2 (host h2, process id 4312) and process 2 (host h3, "
           "process id 5) lost",
           "bspg: recovered in place from checkpoint 0: process 2 (host h2, process id 4312) lost",
           "bspg: recovered in place from checkpoint x: process 2 (host h2, process id 4312) lost",
       })
    EXPECT_FALSE(recovered_in_place(line)) << line;
  EXPECT_FALSE(recovered_in_place("bspg: recovered in place: process 2 (host " +
                                  std::string(256, 'h') + ", process id 4312) lost"));
  EXPECT_FALSE(recovered_in_place(std::string(kRecovered) + std::string(9000, ' ')));
  std::string many = "bspg: recovered in place: ";
  for (int i = 0; i < 1001; ++i)
    many += (i ? " and " : "") + ("process " + std::to_string(i) + " (host h, process id 9)");
  EXPECT_FALSE(recovered_in_place(many + " lost"));
}

TEST(RecoveryLines, TheLibrarysNoRecoveryLineIsReadAndHostileOnesAreNot) {
  const auto none = no_recovery_in_place(kNoRecovery);
  ASSERT_TRUE(none);
  EXPECT_EQ(none->lost.pid, 1);
  EXPECT_EQ(none->lost.host, "node7.example.org");
  EXPECT_EQ(none->lost.process_id, 977);
  EXPECT_EQ(none->why, "no spare left");
  for (const std::string line : {
           "bspg: process 1 (host h, process id 977) lost; no recovery in place: no spare left",
           "bspg: process 1 (host h, process id 977) lost; no recovery in place: ; the job ends "
           "for a restart",
           "bspg: process 1 (host h, process id 977) lost; no recovery in place: a\x07; the job "
           "ends for a restart",
           "bspg: process 1 (host h, process id 977) lost; no recovery in place: why; the job "
           "ends for a restart!",
           "bspg: process 1 (host h|x, process id 977) lost; no recovery in place: why; the job "
           "ends for a restart",
           "bspg: process 1: crashed with signal SIGSEGV",
       })
    EXPECT_FALSE(no_recovery_in_place(line)) << line;
  EXPECT_FALSE(recovered_in_place(kNoRecovery));
  EXPECT_FALSE(no_recovery_in_place(kRecovered));
}

// The recovery's own time bound ends the job naming no process: read too, as a loss of "a
// process" (no host to leave out).
TEST(RecoveryLines, TheRecoverysTimeBoundLineIsReadWithoutAProcess) {
  const auto bound = no_recovery_in_place(
      "bspg: a process was lost; no recovery in place: the recovery did not end within 5 s; "
      "the job ends for a restart");
  ASSERT_TRUE(bound);
  EXPECT_EQ(bound->lost.pid, -1);
  EXPECT_EQ(bound->lost.host, "");
  EXPECT_EQ(bound->why, "the recovery did not end within 5 s");
  EXPECT_FALSE(no_recovery_in_place("bspg: a process was lost; no recovery in place: x"));
  EXPECT_FALSE(no_recovery_in_place(
      "bspg: a process was lost; no recovery in place: \x1b[31m; the job ends for a restart"));
  RunResult run;
  run.exit_status = kExitNoRecoveryInPlace;
  run.no_recovery = bound;
  const RunEnding ending = classify(run, "", "");
  EXPECT_EQ(ending.kind, Ending::kLost);
  EXPECT_EQ(ending.what,
            "a process: no recovery in place (the recovery did not end within 5 s), said the "
            "library");
  EXPECT_EQ(ending.no_recovery_host, "");
}

TEST(RecoveryLines, MpirunsStderrPassesThemOnAndRecordsThem) {
  MpirunStderr filter;
  filter.quiet_losses();
  std::string out = filter.feed(std::string(kRecovered) + "\nhello\n");
  // A line that arrives in pieces is read whole.
  out += filter.feed("bspg: recovered in place: process 3 (host h1, ");
  out += filter.feed("process id 77) lost\n");
  out += filter.feed(std::string(kNoRecovery) + "\n");
  out += filter.finish();
  EXPECT_EQ(out, std::string(kRecovered) + "\nhello\n" +
                     "bspg: recovered in place: process 3 (host h1, process id 77) lost\n" +
                     kNoRecovery + "\n");
  ASSERT_EQ(filter.recoveries().size(), 2u);
  EXPECT_EQ(filter.recoveries()[1].lost[0].process_id, 77);
  ASSERT_TRUE(filter.no_recovery());
  EXPECT_EQ(filter.no_recovery()->lost.host, "node7.example.org");
}

// The library's last line after it recovered from a frozen host's processes: the job ended, and
// mpirun waits for that host. Passed on, and recorded only where it begins a line exactly so.
TEST(RecoveryLines, TheEndWithoutFinalizingIsRecorded) {
  const std::string said =
      "bspg: the job ended without finalizing MPI: the lost processes on emu3 did not answer, "
      "and the MPI's run-time still counts them";
  MpirunStderr quoted;
  EXPECT_EQ(quoted.feed("RESULT " + said + "\n"), "RESULT " + said + "\n");
  EXPECT_FALSE(quoted.ended_without_finalizing());
  MpirunStderr filter;
  EXPECT_EQ(filter.feed("hello\n" + said + "\n"), "hello\n" + said + "\n");
  EXPECT_TRUE(filter.ended_without_finalizing());
}

// ---- After the run ------------------------------------------------------------------------------

TEST(InPlaceRestart, NoRecoveryInPlaceIsALossOnItsHost) {
  RunResult r;
  r.exit_status = kExitNoRecoveryInPlace;
  r.no_recovery = no_recovery_in_place(kNoRecovery);
  const RunEnding ending = classify(r, "", "");
  EXPECT_EQ(ending.kind, Ending::kLost);
  EXPECT_EQ(ending.host, "");  // the host may be fine: whether it answers says
  EXPECT_EQ(ending.no_recovery_host, "node7.example.org");
  EXPECT_EQ(ending.what,
            "process 1 on node7.example.org (process id 977): no recovery in place (no spare "
            "left), said the library");
  // A monitor that found the host silent names it.
  EXPECT_EQ(classify(r, "node7", "").host, "node7");
  // Status 76 alone is the program's own; so is the line with another status (a later failure).
  RunResult alone;
  alone.exit_status = kExitNoRecoveryInPlace;
  EXPECT_EQ(classify(alone, "", "").kind, Ending::kProgramFailed);
  r.exit_status = 1;
  EXPECT_EQ(classify(r, "", "").kind, Ending::kProgramFailed);
  // The starter that crashed as the job ended does not make it the program's failure.
  r.exit_status = 128 + SIGSEGV;
  r.mpirun_signal = SIGSEGV;
  EXPECT_EQ(classify(r, "", "").kind, Ending::kLost);
  EXPECT_EQ(classify(r, "", "").no_recovery_host, "node7.example.org");
}

TEST(InPlaceRestart, AnEndForRestartWhoseLineWasLostIsReadFromTheExitNotes) {
  const std::vector<std::string> hosts = {"n1", "n1", "node7", "node7"};
  ExitNoteSet notes;
  for (int rank = 0; rank < 5; ++rank) notes.add(std::to_string(rank) + ".begun", 0);
  for (int rank : {0, 1, 3, 4}) notes.add(std::to_string(rank), kExitNoRecoveryInPlace);
  RunResult r;
  r.started = true;
  r.exit_status = kExitNoRecoveryInPlace;
  ASSERT_TRUE(take_unsaid_end_for_restart(r, notes, hosts));
  ASSERT_TRUE(r.no_recovery);
  EXPECT_EQ(r.no_recovery->lost.pid, 2);  // the one the notes show killed
  const RunEnding ending = classify(r, "", "");
  EXPECT_EQ(ending.kind, Ending::kLost);
  EXPECT_EQ(ending.what,
            "process 2 on node7: no recovery in place (its reason did not arrive; the processes' "
            "exit notes say it ended the job), said the library");
  // The line itself, where it came, is not replaced.
  RunResult said;
  said.exit_status = kExitNoRecoveryInPlace;
  said.no_recovery = no_recovery_in_place(kNoRecovery);
  EXPECT_FALSE(take_unsaid_end_for_restart(said, notes, hosts));
  EXPECT_EQ(said.no_recovery->why, "no spare left");
  // Status 76 without such a note is the program's own; so are such notes under another status.
  ExitNoteSet program_failed;
  program_failed.add("0.begun", 0);
  program_failed.add("0", 1);
  RunResult own;
  own.exit_status = kExitNoRecoveryInPlace;
  EXPECT_FALSE(take_unsaid_end_for_restart(own, program_failed, hosts));
  EXPECT_EQ(classify(own, "", "").kind, Ending::kProgramFailed);
  RunResult other;
  other.exit_status = 1;
  EXPECT_FALSE(take_unsaid_end_for_restart(other, notes, hosts));
}

namespace {

// A place whose runs return what the test says, recording BSPG_RECOVERIES as the loop set it.
class Runs : public JobPlace {
 public:
  std::vector<RunResult> runs;
  std::vector<std::string> silent;
  std::vector<int> recoveries;
  std::vector<std::map<std::string, std::string>> planned;
  std::vector<std::string> lost;

  int plan(const std::map<std::string, std::string>& left_out, bool) override {
    planned.push_back(left_out);
    return 0;
  }
  std::vector<Holdings> survey() override { return {}; }
  std::vector<std::string> host_of_pid() const override { return {"n1", "n1", "node7", "node7"}; }
  std::string hosts_text() const override { return "n1 node7"; }
  std::string bring(const std::vector<Transfer>&, std::string&) override { return ""; }
  RunResult run(std::uint64_t, const std::string&, double) override {
    recoveries.push_back(recoveries_allowed());
    return runs.at(recoveries.size() - 1);
  }
  std::vector<std::string> sweep() override { return silent; }
  void lose(const std::string& host) override { lost.push_back(host); }
  std::string host_calling_itself(const std::string& name) const override {
    return same_host_name(name, "node7") ? "node7" : same_host_name(name, "n1") ? "n1" : "";
  }
  void clean_up(bool) override {}
};

RunResult recovered_then(int status, int recoveries) {
  RunResult r;
  r.exit_status = status;
  for (int i = 0; i < recoveries; ++i) r.recoveries.push_back(*recovered_in_place(kRecovered));
  return r;
}

}  // namespace

TEST(InPlaceRestart, RecoveriesCountAgainstRestartsAndALaterRestartGetsWhatIsLeft) {
  Options opt = job_options(4, 3);
  opt.verbose = true;
  Runs place;
  RunResult ended = recovered_then(kExitNoRecoveryInPlace, 1);
  ended.no_recovery = no_recovery_in_place(kNoRecovery);
  place.runs = {ended, recovered_then(0, 1)};
  testing::internal::CaptureStderr();
  EXPECT_EQ(run_restartable(opt, place), 0);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(place.recoveries, (std::vector<int>{3, 1}));
  EXPECT_NE(err.find("bsprun: process 2 on h2 lost: recovered in place (a spare took its place, "
                     "from checkpoint 3), without a restart of the job; restart 1 of 3 used\n"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("bsprun: lost process 1 on node7.example.org (process id 977): no recovery "
                     "in place (no spare left), said the library\n"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("bsprun: restart 2 of 3: "), std::string::npos) << err;
  EXPECT_NE(err.find("restart 3 of 3 used"), std::string::npos) << err;
  // node7 still answered: a process lost on a healthy host, which stays in.
  EXPECT_TRUE(place.lost.empty());
}

TEST(InPlaceRestart, AHostThatDoesNotAnswerAfterNoRecoveryIsLeftOut) {
  Options opt = job_options(4, 1);
  opt.restarts = 2;
  Runs place;
  RunResult ended;
  ended.exit_status = kExitNoRecoveryInPlace;
  ended.no_recovery = no_recovery_in_place(kNoRecovery);
  place.runs = {ended, recovered_then(0, 0)};
  place.silent = {"node7"};
  testing::internal::CaptureStderr();
  EXPECT_EQ(run_restartable(opt, place), 0);
  testing::internal::GetCapturedStderr();
  EXPECT_EQ(place.lost, std::vector<std::string>{"node7"});
  ASSERT_EQ(place.planned.size(), 2u);
  EXPECT_EQ(place.planned[1].count("node7"), 1u);
  EXPECT_EQ(place.recoveries, (std::vector<int>{2, 1}));
}

TEST(InPlaceRestart, RecoveriesUseUpTheRestarts) {
  Options opt = job_options(4, 1);
  Runs place;
  RunResult ended = recovered_then(kExitNoRecoveryInPlace, 1);
  ended.no_recovery = no_recovery_in_place(kNoRecovery);
  place.runs = {ended};
  testing::internal::CaptureStderr();
  EXPECT_EQ(run_restartable(opt, place), kExitLaunchFailed);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("no restarts left (1 of 1 used)"), std::string::npos) << err;
}

// ---- Ending a lost process that still lives ----------------------------------------------------

namespace {

// A child that sleeps with `environment` added, stopped (SIGSTOP) as a frozen process is.
pid_t frozen_child(const std::vector<std::string>& environment) {
  const pid_t pid = fork();
  if (pid == 0) {
    for (const std::string& e : environment) putenv(const_cast<char*>(strdup(e.c_str())));
    execlp("sleep", "sleep", "60", static_cast<char*>(nullptr));
    _exit(127);
  }
  // Until exec has happened (the environment is the new program's).
  for (int i = 0; i < 200; ++i) {
    char link[64];
    char target[256] = "";
    std::snprintf(link, sizeof link, "/proc/%d/exe", static_cast<int>(pid));
    if (readlink(link, target, sizeof target - 1) > 0 &&
        std::string(target).find("sleep") != std::string::npos)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  kill(pid, SIGSTOP);
  // Until it has stopped: the signal takes effect when the child next runs, and a busy machine
  // may show it running for a while (its state in /proc is what the code under test reads).
  int status = 0;
  waitpid(pid, &status, WUNTRACED);
  return pid;
}

// Whether the child ended by SIGKILL (reaped), waiting up to 2 s.
bool ended_by_kill(pid_t pid) {
  for (int i = 0; i < 200; ++i) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG | WUNTRACED) == pid && WIFSIGNALED(status))
      return WTERMSIG(status) == SIGKILL;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

void end_child(pid_t pid) {
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

std::string this_host() {
  char name[256] = "";
  gethostname(name, sizeof name - 1);
  return name;
}

}  // namespace

TEST(EndLostProcess, HereAStoppedProcessOfTheJobIsEndedAndNothingElse) {
  const std::vector<std::string> job{"BSPG_JOB_ID=in-place-kill", "BSPG_RUN=r1"};
  const pid_t mine = frozen_child(job);
  const pid_t other = frozen_child({"BSPG_JOB_ID=in-place-kill", "BSPG_RUN=r2"});
  LostProcess lost{2, this_host(), mine};
  // Another host's name, or a process of another run: left alone.
  LostProcess elsewhere = lost;
  elsewhere.host = "not-" + this_host();
  EXPECT_NE(end_lost_process_here(elsewhere, job, this_host()).find("not this machine"),
            std::string::npos);
  LostProcess foreign{2, this_host(), other};
  EXPECT_EQ(end_lost_process_here(foreign, job, this_host()), "");
  EXPECT_EQ(end_lost_process_here(lost, job, this_host()),
            "process 2 (process id " + std::to_string(mine) + " on " + this_host() +
                "): still there (stopped), ended");
  EXPECT_TRUE(ended_by_kill(mine));
  EXPECT_EQ(kill(other, 0), 0);  // still there
  end_child(other);
}

TEST(EndLostProcess, OnAHostTheScriptEndsOnlyAProcessCarryingTheMarker) {
  const pid_t mine = frozen_child({"BSPG_JOB_MARKER=bspg-test-1"});
  const pid_t other = frozen_child({"BSPG_JOB_MARKER=bspg-test-2"});
  // The script as a host's sh runs it (from a file here: it holds quotes of its own).
  const auto run = [](const std::string& script) {
    char path[] = "/tmp/bspg-end-process-XXXXXX";
    const int fd = mkstemp(path);
    std::string out;
    if (fd < 0) return out;
    const ssize_t written = write(fd, script.data(), script.size());
    close(fd);
    if (written == static_cast<ssize_t>(script.size()))
      if (FILE* p = popen(("sh " + std::string(path)).c_str(), "r")) {
        char buf[256];
        while (fgets(buf, sizeof buf, p)) out += buf;
        pclose(p);
      }
    unlink(path);
    return out;
  };
  const std::string line = "BSPG_JOB_MARKER=bspg-test-1";
  EXPECT_EQ(run(end_process_script(line, other)), "none " + std::to_string(other) + "\n");
  EXPECT_EQ(run(end_process_script(line, 1)), "none 1\n");
  EXPECT_EQ(run(end_process_script(line, mine)), "ended " + std::to_string(mine) + "\n");
  EXPECT_TRUE(ended_by_kill(mine));
  EXPECT_EQ(kill(other, 0), 0);
  end_child(other);
}
