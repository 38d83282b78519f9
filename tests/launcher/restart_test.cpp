// restart_test.cpp - how bsprun tells a lost process or host (restarted) from the program's own
// failure (not restarted) and from a stop it was asked for.
#include "restart.h"

#include <gtest/gtest.h>

#include <csignal>

using namespace bspg::launcher;

namespace {

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

  int plan(const std::map<std::string, std::string>& left_out, bool) override {
    planned.push_back(left_out);
    return 0;
  }
  std::vector<Holdings> survey() override { return {}; }
  std::vector<std::string> host_of_pid() const override { return {"emu1", "emu1", "emu3", "emu3"}; }
  std::string hosts_text() const override { return "emu1 emu3"; }
  std::string bring(const std::vector<Transfer>&) override { return ""; }
  RunResult run(std::uint64_t, const std::string&, double) override {
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
