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
  missing.start_failure = {127, "emu2", "emu2: program /x not found there", false};
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
  contact.start_failure = {125, "emu2", "lost contact with emu2 while the job ran ...", true};
  const RunEnding host = classify(contact, "", "");
  EXPECT_EQ(host.kind, Ending::kLost);
  EXPECT_EQ(host.host, "emu2");
  EXPECT_EQ(host.what,
            "emu2: mpirun lost contact with it while the job ran (the host or its network failed)");

  RunResult unreachable = exited(125);
  unreachable.start_failure = {125, "", "could not start the job on every host: ssh: ...", true};
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
