// restart_test.cpp - how bsprun tells a lost process or host (restarted) from the program's own
// failure (not restarted) and from a stop it was asked for.
#include "restart.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <iterator>

using namespace bspg::launcher;

namespace {

// Locks of these tests' made-up jobs go to a directory of their own.
const bool kPrivateLocks = [] {
  static char pattern[] = "/tmp/bspg-restart-test.XXXXXX";
  if (mkdtemp(pattern)) {
    setenv("XDG_RUNTIME_DIR", pattern, 1);
    std::atexit([] { std::system(("rm -rf '" + std::string(pattern) + "'").c_str()); });
  }
  return true;
}();

RunResult exited(int status) {
  RunResult r;
  r.exit_status = status;
  return r;
}

RunResult killed(int rank, int signal, const char* name) {
  RunResult r = exited(128 + signal);
  r.death.rank = rank;
  r.death.host = "emu2";
  r.death.signal = signal;
  r.death.signal_name = name;
  return r;
}

}  // namespace

TEST(Restart, TheProgramsOwnFailuresAreNotRestarted) {
  EXPECT_EQ(classify(exited(0), "", "").kind, Ending::kFinished);
  EXPECT_EQ(classify(exited(3), "", "").kind, Ending::kProgramFailed);
  EXPECT_EQ(classify(exited(1), "", "").kind, Ending::kProgramFailed);  // bsp_abort, misuse
  EXPECT_EQ(classify(killed(3, SIGSEGV, "Segmentation fault"), "", "").kind,
            Ending::kProgramFailed);
  EXPECT_EQ(classify(killed(0, SIGABRT, "Aborted"), "", "").kind, Ending::kProgramFailed);
  EXPECT_EQ(classify(killed(1, SIGFPE, "Floating point exception"), "", "").kind,
            Ending::kProgramFailed);
  RunResult missing = exited(127);
  missing.start_failure = {127, "emu2", "emu2: program /x not found there", false, ""};
  EXPECT_EQ(classify(missing, "", "").kind, Ending::kProgramFailed);
  // A program that exits 75 by itself did not stop after a checkpoint.
  EXPECT_EQ(classify(exited(75), "", "").kind, Ending::kProgramFailed);
}

TEST(Restart, LostProcessesAndHostsAreRestarted) {
  const RunEnding process = classify(killed(3, SIGKILL, "Killed"), "", "");
  EXPECT_EQ(process.kind, Ending::kLost);
  EXPECT_EQ(process.what, "process 3 on emu2: killed by signal 9 (Killed), said mpirun");
  EXPECT_EQ(process.host, "");  // the host may be fine: the probes say
  EXPECT_EQ(classify(killed(3, SIGTERM, "Terminated"), "", "").kind, Ending::kLost);

  RunResult contact = exited(125);
  contact.start_failure = {125, "emu2", "lost contact with emu2 while the job ran ...", true, ""};
  const RunEnding host = classify(contact, "", "");
  EXPECT_EQ(host.kind, Ending::kLost);
  EXPECT_EQ(host.host, "emu2");
  EXPECT_EQ(host.what,
            "emu2: mpirun lost contact with it while the job ran (the host or its network failed)");

  RunResult unreachable = exited(125);
  unreachable.start_failure = {125, "", "could not start the job on every host: ssh: ...", true,
                               "ssh: ..."};
  EXPECT_EQ(classify(unreachable, "", "").what,
            "a host: could not start the job on every host: ssh: ...");

  RunResult silent = exited(143);
  silent.lost = "emu3: no answer for 30 s (timed out after 5.0 s), noticed by bsprun's probes";
  const RunEnding frozen = classify(silent, "emu3", "");
  EXPECT_EQ(frozen.kind, Ending::kLost);
  EXPECT_EQ(frozen.host, "emu3");

  RunResult mpirun = exited(137);
  mpirun.mpirun_signal = SIGKILL;
  EXPECT_EQ(classify(mpirun, "", "").kind, Ending::kLost);

  // The starter crashed by itself, with no process of the job failed: a loss, restarted.
  RunResult starter = exited(139);
  starter.mpirun_signal = SIGSEGV;
  const RunEnding crashed = classify(starter, "", "");
  EXPECT_EQ(crashed.kind, Ending::kLost);
  EXPECT_EQ(crashed.what,
            "the job's starter: mpirun crashed (signal 11, Segmentation fault) while no process of "
            "the job had failed");
  // Not where a process said it crashed, or mpirun reported a death: the program's failure.
  starter.crash_pid = 2;
  EXPECT_EQ(classify(starter, "", "").kind, Ending::kProgramFailed);
  starter.crash_pid = -1;
  starter.death.rank = 1;
  starter.death.signal = SIGSEGV;
  EXPECT_EQ(classify(starter, "", "").kind, Ending::kProgramFailed);
}

TEST(Restart, StopsOnRequest) {
  RunResult signal = exited(130);
  signal.forwarded_signal = SIGINT;
  signal.death.rank = 0;  // what the stop did to the processes does not count
  signal.death.signal = SIGINT;
  EXPECT_EQ(classify(signal, "", "").kind, Ending::kStoppedByUser);
  RunResult limit = exited(143);
  limit.timed_out = true;
  EXPECT_EQ(classify(limit, "", "").kind, Ending::kTimeLimit);
  RunResult stop = exited(75);
  stop.stopped_after_checkpoint = 4;
  EXPECT_EQ(classify(stop, "", "").kind, Ending::kStoppedAfterCheckpoint);
  EXPECT_EQ(classify(stop, "", "emu2").kind, Ending::kMoved);
  EXPECT_EQ(classify(exited(75), "", "emu2").kind, Ending::kMoved);
}

namespace {

// A place whose runs end as scripted, and which records what the restart loop asked of it.
class ScriptedPlace : public JobPlace {
 public:
  std::vector<RunResult> runs;                              // what each run returns, in order
  std::vector<std::string> silent;                          // what sweep() finds unreachable
  std::vector<std::map<std::string, std::string>> planned;  // left_out of each plan()
  std::vector<std::string> lost;                            // hosts passed to lose()
  std::vector<int> plan_status;                             // plan()'s, in order (then 0)
  std::vector<Holdings> held;                               // what survey() finds
  std::string bring_fails_on;                               // bring() fails on this host once
  std::vector<std::string> run_ids;                         // the run id of each run()

  int plan(const std::map<std::string, std::string>& left_out, bool) override {
    planned.push_back(left_out);
    return planned.size() <= plan_status.size() ? plan_status[planned.size() - 1] : 0;
  }
  std::vector<Holdings> survey() override { return held; }
  std::vector<std::string> host_of_pid() const override { return {"emu1", "emu1", "emu3", "emu3"}; }
  std::string hosts_text() const override { return "emu1 emu3"; }
  std::string bring(const std::vector<Transfer>&, std::string& failed_host) override {
    if (bring_fails_on.empty()) return "";
    failed_host = bring_fails_on;
    bring_fails_on.clear();
    return failed_host + ": cannot create c4/shard-2.part: No such file";
  }
  RunResult run(std::uint64_t, const std::string& run_id, double) override {
    run_ids.push_back(run_id);
    const RunResult r = runs.at(next_);
    ++next_;
    return r;
  }
  std::vector<std::string> sweep() override { return silent; }
  void lose(const std::string& host) override { lost.push_back(host); }
  void clean_up(bool) override {}

 private:
  std::size_t next_ = 0;
};

}  // namespace

// mpirun says a daemon did not start but not where (ssh's last words named no address): the
// host that no longer answers ssh when the job is stopped is the one lost, named and left out.
TEST(Restart, AnUnnamedHostThatFailedToStartIsFoundByWhoDoesNotAnswer) {
  Options opt;
  opt.nprocs = 4;
  opt.restarts = 1;
  opt.job_id = "test-job";
  opt.checkpoint_dir = "/nonexistent/ckpt";
  ScriptedPlace place;
  RunResult failed = exited(125);
  failed.start_failure = {125, "",
                          "could not start the job on every host: Open MPI's daemon did not start",
                          true, "Open MPI's daemon did not start"};
  place.runs = {failed, exited(0)};
  place.silent = {"emu3"};
  testing::internal::CaptureStderr();
  const int status = run_restartable(opt, place);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(status, 0);
  EXPECT_NE(err.find("bsprun: lost emu3: could not start the job there: Open MPI's daemon did "
                     "not start; it does not answer ssh\n"),
            std::string::npos)
      << err;
  EXPECT_EQ(err.find("lost a host"), std::string::npos) << err;
  EXPECT_EQ(place.lost, std::vector<std::string>{"emu3"});
  ASSERT_EQ(place.planned.size(), 2u);
  EXPECT_EQ(place.planned[1].count("emu3"), 1u);

  // When every host still answers, the loss stays unnamed and no host is left out.
  ScriptedPlace answering;
  answering.runs = {failed, exited(0)};
  testing::internal::CaptureStderr();
  EXPECT_EQ(run_restartable(opt, answering), 0);
  const std::string unnamed = testing::internal::GetCapturedStderr();
  EXPECT_NE(unnamed.find("bsprun: lost a host: could not start the job on every host: "),
            std::string::npos)
      << unnamed;
  EXPECT_TRUE(answering.lost.empty());
}

namespace {

// emu1 holds checkpoint 4 of run `run` whole (4 processes).
std::vector<Holdings> held_checkpoint(const std::string& run, const std::string& program) {
  Holdings h;
  h.host = "emu1";
  h.complete[{run, 4}] = {4, program};
  for (int pid = 0; pid < 4; ++pid) {
    HeldFile f;
    f.checkpoint = 4;
    f.run = run;
    f.pid = pid;
    f.checked = f.whole = true;
    h.files.push_back(f);
  }
  return {h};
}

}  // namespace

// The --resume command repeats every option the run was given, and the made-up job id.
TEST(Restart, TheResumeCommandRepeatsEveryOption) {
  const char* argv[] = {"bsprun",
                        "-p",
                        "4",
                        "--hostfile",
                        "hosts.yaml",
                        "-x",
                        "OMP_NUM_THREADS=2",
                        "--mca",
                        "btl_tcp_if_include",
                        "lo",
                        "--time-limit",
                        "600",
                        "--host-timeout",
                        "9",
                        "--probe-timeout",
                        "3",
                        "--migrate-load",
                        "2.5",
                        "--stage",
                        "--restarts",
                        "2",
                        "./prog",
                        "a b",
                        "-c"};
  Options opt = parse_options(static_cast<int>(std::size(argv)), const_cast<char**>(argv));
  opt.job_id = "20261124-101010-abcdef";
  EXPECT_EQ(resume_command(opt),
            "bsprun --resume --job-id 20261124-101010-abcdef -p 4 --hostfile hosts.yaml -x "
            "OMP_NUM_THREADS=2 --mca btl_tcp_if_include lo --time-limit 600 --host-timeout 9 "
            "--probe-timeout 3 --migrate-load 2.5 --stage --restarts 2 ./prog 'a b' -c");
  // A resumed run's command: --resume once, the job named as it was.
  const char* again[] = {"bsprun", "--resume", "--checkpoint-dir", "/scratch/ck", "-p", "2",
                         "--",     "-prog"};
  Options resumed = parse_options(static_cast<int>(std::size(again)), const_cast<char**>(again));
  resumed.job_id = "made-up";
  EXPECT_EQ(resume_command(resumed), "bsprun --resume --checkpoint-dir /scratch/ck -p 2 -- -prog");
}

// The survey answers for the run that asks (whose id is made inside run_restartable).
struct RunsCheckpoint : ScriptedPlace {
  std::vector<Holdings> survey() override {
    return run_ids.empty() ? held : held_checkpoint(run_ids.back(), kUnknownProgram);
  }
};

// No host left for a restart while a whole checkpoint remains: exit 75 with the command.
TEST(Restart, NoRoomLeftWithAWholeCheckpointIsResumable) {
  Options opt;
  opt.nprocs = 4;
  opt.restarts = 2;
  opt.job_id = "no-room";
  opt.hostfile = "hosts.yaml";
  opt.program = "prog";
  RunsCheckpoint place;
  place.runs = {killed(2, SIGKILL, "Killed")};
  place.plan_status = {0, kExitLaunchFailed};
  testing::internal::CaptureStderr();
  const int status = run_restartable(opt, place);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(status, kExitResumable) << err;
  EXPECT_NE(err.find("could not restart the job; checkpoint 4 is whole: continue it later with: "
                     "bsprun --resume --job-id no-room --hostfile hosts.yaml prog\n"),
            std::string::npos)
      << err;
}

// A host that cannot take a shard is left out, and the job planned again without it.
TEST(Restart, AShardThatCannotBeBroughtLeavesItsHostOut) {
  Options opt;
  opt.nprocs = 4;
  opt.restarts = 1;
  opt.job_id = "bring-fails";
  opt.job_id_given = true;
  opt.resume = true;
  opt.hostfile = "hosts.yaml";
  opt.program = "prog";
  ScriptedPlace place;
  place.held = held_checkpoint("65a1b2c3d4e5f607", kUnknownProgram);
  place.bring_fails_on = "emu4";
  place.runs = {exited(0)};
  testing::internal::CaptureStderr();
  const int status = run_restartable(opt, place);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(status, 0) << err;
  EXPECT_NE(err.find("could not bring the shards of checkpoint 4 over: emu4: cannot create "
                     "c4/shard-2.part: No such file; leaving out emu4 and planning again"),
            std::string::npos)
      << err;
  ASSERT_EQ(place.planned.size(), 2u);
  EXPECT_EQ(place.planned[1].count("emu4"), 1u);
  EXPECT_EQ(place.lost, std::vector<std::string>{"emu4"});
  // The resumed run goes on as the run it continues.
  EXPECT_EQ(place.run_ids, std::vector<std::string>{"65a1b2c3d4e5f607"});
}

// --resume with other program arguments is refused unless --allow-new-args.
TEST(Restart, ResumeWithOtherArgumentsIsRefusedUnlessAsked) {
  Options opt;
  opt.nprocs = 4;
  opt.job_id = "other-args";
  opt.job_id_given = true;
  opt.resume = true;
  opt.program = "./prog";
  opt.program_args = {"100"};
  ScriptedPlace place;
  place.held = held_checkpoint("65a1b2c3d4e5f607", program_id("prog", {"50"}));
  place.runs = {exited(0)};
  testing::internal::CaptureStderr();
  EXPECT_EQ(run_restartable(opt, place), kExitUsage);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("was written by a run of ./prog with other arguments than these; resume with "
                     "the arguments the job was started with (bsprun printed the command), or add "
                     "--allow-new-args to resume with these"),
            std::string::npos)
      << err;
  EXPECT_TRUE(place.run_ids.empty());
  opt.allow_new_args = true;
  testing::internal::CaptureStderr();
  EXPECT_EQ(run_restartable(opt, place), 0);
  opt.allow_new_args = false;
  opt.program_args = {"50"};
  ScriptedPlace same;
  same.held = place.held;
  same.runs = {exited(0)};
  EXPECT_EQ(run_restartable(opt, same), 0);
  testing::internal::GetCapturedStderr();
}

// Two bspruns on one job id: the second is refused, naming the first.
TEST(Restart, ASecondBsprunOnOneJobIdIsRefused) {
  Options opt;
  opt.nprocs = 1;
  opt.job_id = "locked-job";
  opt.program = "prog";
  struct Nested : ScriptedPlace {
    const Options* opt = nullptr;
    int inner_status = -1;
    RunResult run(std::uint64_t, const std::string&, double) override {
      ScriptedPlace second;
      second.runs = {exited(0)};
      inner_status = run_restartable(*opt, second);
      return exited(0);
    }
  } place;
  place.opt = &opt;
  testing::internal::CaptureStderr();
  EXPECT_EQ(run_restartable(opt, place), 0);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(place.inner_status, kExitLaunchFailed);
  EXPECT_NE(err.find("bsprun: job locked-job cannot start: its job id is in use by bsprun pid " +
                     std::to_string(getpid()) + " on "),
            std::string::npos)
      << err;
  // Released at the end: the job id can be used again.
  ScriptedPlace after;
  after.runs = {exited(0)};
  EXPECT_EQ(run_restartable(opt, after), 0);
}

// --copies K reaches every process as BSPG_COPIES=K; without it the library's default (one).
TEST(Restart, CopiesReachEveryProcess) {
  Options opt;
  opt.nprocs = 4;
  opt.job_id = "copies";
  opt.program = "prog";
  const auto copies_exported = [&] {
    const MpiSettings run = run_settings(MpiSettings{}, "/ckpt", 0, "65a1b2c3d4e5f607", opt);
    std::string found;
    for (const std::string& e : run.exports)
      if (e.rfind("BSPG_COPIES=", 0) == 0) found = e;
    return found;
  };
  EXPECT_EQ(copies_exported(), "");
  opt.copies = 2;
  opt.copies_given = true;
  EXPECT_EQ(copies_exported(), "BSPG_COPIES=2");
}
