// mpirun_messages_test.cpp - Open MPI 4.1's start-up failure blocks (as mpirun prints them on this
// machine) become one line and an honest exit status; everything else passes unchanged.
#include "mpirun_messages.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>

using bspg::launcher::MpirunStderr;

namespace {

const std::string kRule = std::string(74, '-') + "\n";

std::string block(const std::string& body) { return kRule + body + kRule; }

const std::string kNotAccessible = block(
    "mpirun was unable to launch the specified application as it could not access\n"
    "or execute an executable:\n\n"
    "Executable: /home/a/prog\n"
    "Node: emu1\n\n"
    "while attempting to start process rank 0.\n");

const std::string kExecveFailed =
    block(
        "Open MPI tried to fork a new process via the \"execve\" system call but\n"
        "failed.  Open MPI checks many things before attempting to launch a\n"
        "child process, but nothing is perfect. This error may be indicative\n"
        "of another problem on the target host, or even something as silly as\n"
        "having specified a directory for your application. Your job will now\n"
        "abort.\n\n"
        "  Local host:        emu1\n"
        "  Working dir:       /home/a\n"
        "  Application name:  /tmp/\n"
        "  Error:             Permission denied\n") +
    block(
        "mpirun was unable to start the specified application as it encountered an\n"
        "error:\n\n"
        "Error code: -125\n"
        "Error name: The specified application failed to start\n"
        "Node: emu1\n\n"
        "when attempting to start process rank 0.\n");

const std::string kNoWorkingDirectory = block(
    "mpirun was unable to launch the specified application as it could not\n"
    "change to the specified working directory:\n\n"
    "Working directory: /nonexistent/dir\n"
    "Node: emu1\n\n"
    "while attempting to start process rank 0.\n");

const std::string kDaemonsDidNotStart =
    "ssh: connect to host 127.0.183.2 port 22: Connection refused\r\n" +
    block(
        "ORTE was unable to reliably start one or more daemons.\n"
        "This usually is caused by:\n\n"
        "* not finding the required libraries and/or binaries on\n"
        "  one or more nodes. Please check your PATH and LD_LIBRARY_PATH\n"
        "  settings, or configure OMPI with --enable-orterun-prefix-by-default\n") +
    block(
        "ORTE does not know how to route a message to the specified daemon\n"
        "located on the indicated node:\n\n"
        "  my node:   vm\n"
        "  target node:  emu1\n");

const std::string kLostDaemon = block(
    "ORTE has lost communication with a remote daemon.\n\n"
    "  HNP daemon   : [[1867,0],0] on node vm\n"
    "  Remote daemon: [[1867,0],2] on node emu2\n\n"
    "This is usually due to either a failure of the TCP network\n"
    "connection to the node, or possibly an internal failure of\n"
    "the daemon itself. We cannot recover from this failure, and\n"
    "therefore will terminate the job.\n");

const std::string kRankKilled = block(
    "mpirun noticed that process rank 3 with PID 0 on node emu2 exited on signal 9 (Killed).\n");

// Everything a filter passes on for `text`, fed in pieces of `piece` bytes.
std::string through(MpirunStderr& filter, const std::string& text, std::size_t piece = 4096) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); i += piece) out += filter.feed(text.substr(i, piece));
  return out + filter.flush();
}

// Like through(), to the end of the stream (finish).
std::string through_to_end(MpirunStderr& filter, const std::string& text,
                           std::size_t piece = 4096) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); i += piece) out += filter.feed(text.substr(i, piece));
  return out + filter.finish();
}

}  // namespace

TEST(MpirunMessages, MissingProgramIsOneLineAnd127) {
  MpirunStderr filter;
  EXPECT_EQ(through(filter, "rank output\n" + kNotAccessible),
            "rank output\nbsprun: emu1: program /home/a/prog not found there, or not executable\n");
  EXPECT_EQ(filter.failure().exit_status, 127);
  EXPECT_EQ(filter.failure().host, "emu1");
}

TEST(MpirunMessages, DirectoryAsProgramIs126AndItsFollowUpIsDropped) {
  MpirunStderr filter;
  EXPECT_EQ(through(filter, kExecveFailed),
            "bsprun: emu1: cannot execute /tmp/: Permission denied\n");
  EXPECT_EQ(filter.failure().exit_status, 126);
}

TEST(MpirunMessages, MissingWorkingDirectoryIs125) {
  MpirunStderr filter;
  EXPECT_EQ(through(filter, kNoWorkingDirectory),
            "bsprun: emu1: cannot change to the working directory /nonexistent/dir "
            "(it does not exist there, or cannot be entered)\n");
  EXPECT_EQ(filter.failure().exit_status, 125);
}

TEST(MpirunMessages, DaemonThatCouldNotStartIsNamedFromSshsAddress) {
  MpirunStderr filter({{"127.0.183.2", "emu2"}, {"emu2", "emu2"}, {"127.0.183.1", "emu1"}});
  EXPECT_EQ(through(filter, kDaemonsDidNotStart),
            "bsprun: emu2: could not start the job there: "
            "ssh: connect to host 127.0.183.2 port 22: Connection refused\n");
  EXPECT_EQ(filter.failure().exit_status, 125);
  EXPECT_EQ(filter.failure().host, "emu2");
  MpirunStderr unnamed;
  EXPECT_EQ(
      through(unnamed, kDaemonsDidNotStart),
      "bsprun: could not start the job on every host: ssh: connect to host 127.0.183.2 port 22: "
      "Connection refused\n");
}

// A host that went away while ssh started the daemon there: ssh says so in its own words.
TEST(MpirunMessages, ConnectionBrokenWhileStartingNamesTheHost) {
  const std::string daemons = kDaemonsDidNotStart.substr(kDaemonsDidNotStart.find('\n') + 1);
  for (const std::string ssh_line :
       {"ssh_dispatch_run_fatal: Connection to 127.0.183.2 port 22: Broken pipe",
        "Connection to 127.0.183.2 closed by remote host.",
        "Connection reset by 127.0.183.2 port 22"}) {
    MpirunStderr filter({{"127.0.183.2", "emu2"}, {"127.0.183.1", "emu1"}});
    EXPECT_EQ(through(filter, ssh_line + "\n" + daemons),
              "bsprun: emu2: could not start the job there: " + ssh_line + "\n")
        << ssh_line;
    EXPECT_EQ(filter.failure().host, "emu2") << ssh_line;
    EXPECT_TRUE(filter.failure().host_lost) << ssh_line;
    EXPECT_EQ(filter.failure().cause, ssh_line) << ssh_line;
  }
  // The same words at the end of a run that went well are passed on.
  MpirunStderr after;
  EXPECT_EQ(through(after, "Connection to 127.0.183.2 closed by remote host.\n"),
            "Connection to 127.0.183.2 closed by remote host.\n");
}

TEST(MpirunMessages, LostHostIs125UnlessTheJobIsBeingStopped) {
  MpirunStderr filter;
  EXPECT_EQ(through(filter, kLostDaemon),
            "bsprun: lost contact with emu2 while the job ran "
            "(the host or its network failed); the job was stopped\n");
  EXPECT_EQ(filter.failure().exit_status, 125);
  MpirunStderr stopping;
  stopping.stopping();
  EXPECT_EQ(through(stopping, kLostDaemon +
                                  "Abort is in progress...hit ctrl-c again within 5 seconds to "
                                  "forcibly terminate\n" +
                                  kRankKilled),
            "");
  EXPECT_EQ(stopping.failure().exit_status, 0);
}

// PRRTE 3.0 (Open MPI 5) says it lost a daemon that ssh could not even start; ssh's line about the
// host tells that apart from a host lost while the job ran.
TEST(MpirunMessages, PrrtesLostDaemonThatSshCouldNotStartIsAStartFailure) {
  const std::string lost = block(
      "PRTE has lost communication with a remote daemon.\n\n"
      "  HNP daemon   : [prterun-vm-124@0,0] on node vm\n"
      "  Remote daemon: [prterun-vm-124@0,2] on node emu2\n\n"
      "This is usually due to either a failure of the TCP network\n");
  const std::map<std::string, std::string> names{{"10.200.39.2", "emu2"}, {"emu2", "emu2"}};
  MpirunStderr refused(names);
  EXPECT_EQ(
      through(refused, "ssh: connect to host 10.200.39.2 port 22: Connection refused\n" + lost),
      "bsprun: emu2: could not start the job there: ssh: connect to host 10.200.39.2 port "
      "22: Connection refused\n");
  EXPECT_EQ(refused.failure().exit_status, 125);
  EXPECT_TRUE(refused.failure().host_lost);
  MpirunStderr cut(names);
  EXPECT_EQ(through(cut, "Connection to 10.200.39.2 closed by remote host.\n" + lost),
            "bsprun: lost contact with emu2 while the job ran (the host or its network failed); "
            "the job was stopped\nConnection to 10.200.39.2 closed by remote host.\n");
  EXPECT_TRUE(cut.failure().host_lost);
}

// PRRTE 3.0's reports of a program or directory it could not use say less than they seem to.
TEST(MpirunMessages, PrrtesStartReportsAreOneLine) {
  MpirunStderr program;
  EXPECT_EQ(through(program, block("prterun was unable to launch the specified application as it "
                                   "lacked\npermissions to execute an executable:\n\n"
                                   "   Executable: /tmp/x/no-such-program\n   Node: emu1\n\n"
                                   "while attempting to start process rank 0.\n")),
            "bsprun: emu1: program /tmp/x/no-such-program not found there, or not executable\n");
  EXPECT_EQ(program.failure().exit_status, 127);
  MpirunStderr directory;
  EXPECT_EQ(
      through(directory,
              block("Error: system limit exceeded on number of files that can be open\n\n"
                    "   Node: emu1\n\nwhen attempting to start process rank 0.\n")),
      "bsprun: emu1: could not start the job there: Open MPI says the limit of open files was "
      "reached, which it also says when the working directory does not exist there or cannot be "
      "entered\n");
  EXPECT_EQ(directory.failure().exit_status, 125);
}

TEST(MpirunMessages, OtherBlocksAndOutputPassUnchanged) {
  MpirunStderr filter(std::map<std::string, std::string>{{"emu2", "emu2"}});
  const std::string text =
      std::string("rank 0 says\n") + "ssh: a warning that is not followed by a block\n" +
      block("  something else Open MPI says\n") + "partial line without newline";
  EXPECT_EQ(through(filter, text), text);
  EXPECT_EQ(filter.failure().exit_status, 0);
  // The same, one byte at a time.
  MpirunStderr bytewise(std::map<std::string, std::string>{{"emu2", "emu2"}});
  EXPECT_EQ(through(bytewise, text, 1), text);
}

TEST(MpirunMessages, PrrtesSetpgidRaceIsLeftOut) {
  MpirunStderr filter(std::map<std::string, std::string>{{"emu2", "emu2"}});
  const std::string race =
      "[vm:01281] plm:ssh: Warning: setpgid(1318,1318) failed in parent with "
      "errno=Permission denied(13)\n";
  EXPECT_EQ(through(filter, "before\n" + race + "after\n"), "before\nafter\n");
  // Another warning of the same kind is not this one.
  const std::string other = "[vm:01281] plm:ssh: Warning: setpgid(1,1) failed: No such process\n";
  MpirunStderr second(std::map<std::string, std::string>{{"emu2", "emu2"}});
  EXPECT_EQ(through(second, other), other);
  MpirunStderr bytewise(std::map<std::string, std::string>{{"emu2", "emu2"}});
  EXPECT_EQ(through(bytewise, race + "after\n", 1), "after\n");
}

TEST(MpirunMessages, FaultToleranceNoiseIsLeftOutButTheRecoveryLineStays) {
  MpirunStderr filter(std::map<std::string, std::string>{{"emu2", "emu2"}});
  const std::string warning = block(
      "WARNING: The selected 'osc' module 'sm' is not tested for post-failure\n"
      "operation, yet you have requested support for fault tolerance.\n");
  const std::string recovered =
      "bspg: recovered in place from checkpoint 3: process 2 (host emu2, process id 4312) lost, "
      "a spare on emu3 took its place, in 0.004 s\n";
  const std::string text =
      warning +
      "NBC_Progress: an error 75 was found during schedule 0x55 at row-offset 0 - "
      "aborting the schedule\n" +
      recovered + "20 more processes have sent help message help-mpi-ft.txt / module:untested\n" +
      "RESULT 1\n";
  EXPECT_EQ(through(filter, text), recovered + "RESULT 1\n");
  // A program's own line that mentions the same words is not Open MPI's.
  MpirunStderr other(std::map<std::string, std::string>{{"emu2", "emu2"}});
  EXPECT_EQ(through(other, "my NBC_Progress: an error\n"), "my NBC_Progress: an error\n");
}

TEST(MpirunMessages, ProgramOutputIsNotHeldBack) {
  MpirunStderr filter;
  EXPECT_EQ(filter.feed("progress 10%\r"), "progress 10%\r");
  EXPECT_EQ(filter.feed("progress 20%\n"), "progress 20%\n");
  EXPECT_EQ(filter.feed("rank 1 line\n"), "rank 1 line\n");
  // A line of dashes from the program is held until its block ends, or until flush().
  EXPECT_EQ(filter.feed(kRule), "");
  EXPECT_EQ(filter.feed("table row\n"), "");
  EXPECT_EQ(filter.flush(), kRule + "table row\n");
}

TEST(MpirunMessages, FirstFailureWinsInEachPiecing) {
  for (std::size_t piece : {1, 7, 64, 100000}) {
    MpirunStderr filter;
    EXPECT_EQ(through(filter, kNotAccessible + kNoWorkingDirectory, piece),
              "bsprun: emu1: program /home/a/prog not found there, or not executable\n")
        << "pieces of " << piece;
    EXPECT_EQ(filter.failure().exit_status, 127);
  }
}

// --- What a restart needs to know (bsprun --restarts) ---------------------------------------

const std::string kPrimaryJob = block(
    "Primary job  terminated normally, but 1 process returned\n"
    "a non-zero exit code. Per user-direction, the job has been aborted.\n");

TEST(MpirunMessages, AKilledProcessIsRecordedAndSaidInOneLineUnlessRestartsMaySayIt) {
  MpirunStderr shown;
  EXPECT_EQ(through(shown, kPrimaryJob + kRankKilled), "");
  EXPECT_EQ(shown.finish(), "bsprun: process 3 on emu2 ended by signal 9 (Killed)\n");
  EXPECT_EQ(shown.crash_signal(), 0);
  EXPECT_EQ(shown.death().rank, 3);
  EXPECT_EQ(shown.death().host, "emu2");
  EXPECT_EQ(shown.death().signal, 9);
  EXPECT_EQ(shown.death().signal_name, "Killed");
  EXPECT_EQ(shown.failure().exit_status, 0);
  MpirunStderr quiet;
  quiet.quiet_losses();
  EXPECT_EQ(through(quiet, "rank output\n" + kPrimaryJob + kRankKilled), "rank output\n");
  EXPECT_EQ(quiet.death().rank, 3);
  MpirunStderr none;
  through(none, kPrimaryJob);
  EXPECT_EQ(none.death().rank, -1);
}

// --- A process that crashed (bsplib/src/reporting/crash.cpp)
// -----------------------------------------

const std::string kCrashLine =
    "bspg: process 1: crashed with signal SIGSEGV (segmentation fault)\n";
const std::string kRankSegv = block(
    "mpirun noticed that process rank 1 with PID 0 on node vm exited on signal 11 (Segmentation "
    "fault).\n");
const std::string kHungUp = block(
    "An MPI communication peer process has unexpectedly disconnected.  This\n"
    "usually indicates a failure in the peer process (e.g., a crash or\n"
    "otherwise exiting without calling MPI_FINALIZE first).\n\n"
    "  Local host: vm\n  Local PID:  32030\n  Peer host:  vm\n");
const std::string kHelpCount =
    "[vm:08445] 1 more process has sent help message help-mpi-btl-tcp.txt / peer hung up\n";

// Open MPI 4's stderr pieces arrive in any order: the preface before or after the process's line,
// the death's block before or after it.
TEST(MpirunMessages, ACrashedProcesssLineIsAllThatIsShown) {
  for (const std::string& stream :
       {kPrimaryJob + kCrashLine + kRankSegv, kCrashLine + kPrimaryJob + kRankSegv,
        kPrimaryJob + kRankSegv + kCrashLine, kCrashLine + kPrimaryJob + kHungUp + kRankSegv,
        kPrimaryJob + kHungUp + kRankSegv + kCrashLine}) {
    for (std::size_t piece : {1, 5, 100000}) {
      MpirunStderr filter;
      EXPECT_EQ(through(filter, stream, piece) + filter.finish(), kCrashLine) << stream;
      EXPECT_EQ(filter.crash_signal(), 11);
      EXPECT_EQ(filter.death().rank, 1);
      EXPECT_EQ(filter.death().signal, 11);
    }
  }
  // Open MPI's count of the notices it did not repeat goes with them (it comes in one piece).
  MpirunStderr counted;
  EXPECT_EQ(through(counted, kPrimaryJob + kHungUp + kRankSegv + kHelpCount + kCrashLine) +
                counted.finish(),
            kCrashLine);
  // glibc's own line before it (a corrupted heap), and the program's output, pass.
  MpirunStderr heap;
  const std::string glibc = "double free or corruption (!prev)\n";
  const std::string line = "bspg: process 3: crashed with signal SIGABRT (aborted)\n";
  EXPECT_EQ(through(heap, "rank output\n" + kPrimaryJob + glibc + line +
                              block("mpirun noticed that process rank 3 with PID 0 on node vm "
                                    "exited on signal 6 (Aborted).\n")) +
                heap.finish(),
            "rank output\n" + glibc + line);
  EXPECT_EQ(heap.crash_signal(), 6);
}

// Open MPI 4.1's mpirun can crash itself (in PMIx_Finalize) while it ends a job whose process
// crashed, before its notice of the death: its own report goes, the library's line stays and
// names the process (bsprun's line then comes from it, restart.cpp).
TEST(MpirunMessages, TheStartersOwnCrashAfterAProcesssCrashIsNotShown) {
  const std::string report =
      "mpirun.openmpi: abort is already in progress...hit ctrl-c again to forcibly terminate\n"
      "[vm:17179] *** Process received signal ***\n"
      "[vm:17179] Signal: Segmentation fault (11)\n"
      "[vm:17179] Signal code: Address not mapped (1)\n"
      "[vm:17179] Failing at address: (nil)\n"
      "[vm:17179] [ 0] /lib/x86_64-linux-gnu/libc.so.6(+0x3c050)[0x7fad84023050]\n"
      "[vm:17179] [ 1] /lib/x86_64-linux-gnu/libpmix.so.2(PMIx_Finalize+0x703)[0x7fad81050e83]\n"
      "[vm:17179] [10] /usr/bin/mpirun.openmpi(+0x1131)[0x55e718aad131]\n"
      "[vm:17179] *** End of error message ***\n";
  for (std::size_t piece : {1, 9, 100000}) {
    MpirunStderr filter;
    EXPECT_EQ(through(filter, kPrimaryJob + kCrashLine + report, piece) + filter.finish(),
              kCrashLine);
    EXPECT_EQ(filter.crash_pid(), 1);
    EXPECT_EQ(filter.death().rank, -1);
  }
  // Without a crash line first, the same lines are the program's or the starter's: shown.
  MpirunStderr none;
  EXPECT_EQ(through(none, report), report);
  EXPECT_EQ(none.crash_pid(), -1);
  // A program's own bracketed lines after a crash line pass.
  MpirunStderr program;
  const std::string own = "[step 3] residual 0.25\n[vm:1] done\n";
  EXPECT_EQ(through(program, kCrashLine + own), kCrashLine + own);
}

// Open MPI 5 in master mode, a program that returns a non-zero status between sections: the
// processes the master spawned stop after its abort, and PRRTE's account of their job, whose
// launcher is gone, comes alone and without a line end. It goes, as its "calling abort" banner
// does; a line that only begins like it, or has more, passes.
TEST(MpirunMessages, PrrtesAccountOfAJobWhoseLauncherIsGoneIsNotShown) {
  const std::string output = "main: ends after 2 sections\n";
  for (std::size_t piece : {1, 5, 100000}) {
    MpirunStderr filter;
    EXPECT_EQ(through(filter, output + "LAUNCHER JOB OBJECT NOT FOUND", piece) + filter.finish(),
              output);
    MpirunStderr ended;
    EXPECT_EQ(through(ended, output + "LAUNCHER JOB OBJECT NOT FOUND\n", piece) + ended.finish(),
              output);
  }
  MpirunStderr program;
  const std::string own = "LAUNCHER JOB OBJECT NOT FOUND: retrying\nLAUNCH";
  EXPECT_EQ(through(program, own) + program.finish(), own);
}

// A hang-up notice whose opening rule never arrived, followed by the death's block: its closing
// rule and the death's opening rule come as two rules in a row. The death is still read (with
// restarts, bsprun names the process from it), and the notice's text passes as it came.
TEST(MpirunMessages, ADeathAfterAHangUpNoticeMissingItsOpeningRuleIsRead) {
  const std::string hung_up_without_opening = kHungUp.substr(kRule.size());
  for (std::size_t piece : {1, 7, 100000}) {
    MpirunStderr filter;
    const std::string shown =
        through(filter, kPrimaryJob + kCrashLine + hung_up_without_opening + kRankSegv, piece) +
        filter.finish();
    EXPECT_EQ(filter.death().rank, 1);
    EXPECT_EQ(filter.death().signal, 11);
    EXPECT_EQ(shown.find("noticed that process rank"), std::string::npos) << shown;
  }
}

// Open MPI 5 in master mode: the master's error handler reports the crashed process's socket
// closing; after the crash line that is a consequence, left out. Before it, it passes.
TEST(MpirunMessages, AnErrorHandlerBlockAfterACrashIsLeftOut) {
  const std::string handler =
      "[vm:00000] *** An error occurred in Socket closed\n"
      "[vm:00000] *** reported by process [1671823361,0]\n"
      "[vm:00000] *** on a NULL communicator\n"
      "[vm:00000] *** MPI_ERRORS_ARE_FATAL (processes in this communicator will now abort,\n"
      "[vm:00000] ***    and MPI will try to terminate your MPI job as well)\n\n\n";
  MpirunStderr filter;
  EXPECT_EQ(through(filter, kCrashLine + handler + "later output\n") + filter.finish(),
            kCrashLine + "later output\n");
  MpirunStderr no_crash;
  EXPECT_EQ(through(no_crash, handler) + no_crash.finish(), handler);
}

// Open MPI 5 writes some of its lines with their C strings' NUL bytes, so that the lines after
// the crash line start with NUL: they are recognised all the same, and no NUL byte goes out.
TEST(MpirunMessages, NulBytesAfterACrashAreLeftOut) {
  using namespace std::string_literals;
  const std::string handler =
      "\0[vm:00000] *** An error occurred in Socket closed\n"
      "\0[vm:00000] *** reported by process [1671823361,0]\n"
      "[vm:00000] *** on a NULL communicator\n"
      "\0\0\n"
      "\0[vm:04211] [prterun-vm-4211@0,0] LAUNCHER JOB OBJECT NOT FOUND\n"s;
  MpirunStderr filter;
  const std::string out =
      through(filter, kCrashLine + handler + "\0\0"s + "later output\n") + filter.finish();
  EXPECT_EQ(out, kCrashLine + "later output\n");
  EXPECT_EQ(out.find('\0'), std::string::npos);
}

// In master mode the spawned processes are a child job, whose rank r is pid r + 1.
TEST(MpirunMessages, ADeadSpawnedProcessIsNamedByItsPid) {
  MpirunStderr filter;
  const std::string child = block(
      "Child job 2 terminated normally, but 1 process returned\n"
      "a non-zero exit code. Per user-direction, the job has been aborted.\n");
  EXPECT_EQ(through(filter, child + kHungUp + kRankSegv), "");
  EXPECT_EQ(filter.finish(), "bsprun: process 2 on vm ended by signal 11 (Segmentation fault)\n");
  MpirunStderr said;
  EXPECT_EQ(through(said, child + kHungUp + kRankSegv + kCrashLine) + said.finish(), kCrashLine);
}

// Only the library's line counts: the same words further into a line are the program's.
TEST(MpirunMessages, OnlyTheLibrarysCrashLineCounts) {
  for (const auto& [line, signal] : std::map<std::string, int>{
           {"bspg: process 0: crashed with signal SIGABRT (aborted)", 6},
           {"bspg: process 12: crashed with signal SIGSEGV (stack overflow)", 11},
           {"bspg: process 2: crashed with signal SIGBUS (bus error)", 7},
           {"bspg: process 2: crashed with signal 40", 40},
           {"prog: bspg: process 0: crashed with signal SIGSEGV (segmentation fault)", 0},
           {"bspg: process 0: bsp_put: crashed with signal SIGSEGV", 0},
           {"bspg: process : crashed with signal SIGSEGV", 0}}) {
    MpirunStderr filter;
    EXPECT_EQ(through(filter, line + "\n"), line + "\n");
    EXPECT_EQ(filter.crash_signal(), signal) << line;
  }
  // Without the line, mpirun's block is said in one line at the end.
  MpirunStderr unsaid;
  EXPECT_EQ(through(unsaid, "prog: bspg: process 1: crashed with signal SIGSEGV\n" + kRankSegv),
            "prog: bspg: process 1: crashed with signal SIGSEGV\n");
  EXPECT_EQ(unsaid.finish(), "bsprun: process 1 on vm ended by signal 11 (Segmentation fault)\n");
}

// A preface that announces something else (a non-zero exit status) goes out with it, as it was.
TEST(MpirunMessages, APrefaceBeforeAnotherBlockPassesWithIt) {
  const std::string exit_status = block(
      "mpirun detected that one or more processes exited with non-zero status, thus causing\n"
      "the job to be terminated. The first process to do so was:\n\n"
      "  Process name: [[4021,1],0]\n  Exit code:    3\n");
  MpirunStderr filter;
  EXPECT_EQ(through(filter, kPrimaryJob + exit_status) + filter.finish(),
            kPrimaryJob + exit_status);
  MpirunStderr alone;
  EXPECT_EQ(through(alone, kPrimaryJob), "");
  EXPECT_EQ(alone.finish(), kPrimaryJob);
  MpirunStderr stopping;
  stopping.stopping();
  EXPECT_EQ(through(stopping, kPrimaryJob + kRankKilled) + stopping.finish(), "");
}

TEST(MpirunMessages, ALostHostIsTheHostsFailureAndQuietWhenRestartsMaySayIt) {
  MpirunStderr quiet;
  quiet.quiet_losses();
  EXPECT_EQ(through(quiet, kLostDaemon), "");
  EXPECT_TRUE(quiet.failure().host_lost);
  EXPECT_EQ(quiet.failure().host, "emu2");
  MpirunStderr unreachable(std::map<std::string, std::string>{{"127.0.183.2", "emu2"}});
  through(unreachable, kDaemonsDidNotStart);
  EXPECT_TRUE(unreachable.failure().host_lost);
  EXPECT_EQ(unreachable.failure().host, "emu2");
  // A daemon that did not start, on a host ssh does not name, is still a host's failure.
  MpirunStderr unnamed;
  through(unnamed, kDaemonsDidNotStart);
  EXPECT_TRUE(unnamed.failure().host_lost);
  EXPECT_EQ(unnamed.failure().host, "");
  EXPECT_EQ(unnamed.failure().cause,
            "ssh: connect to host 127.0.183.2 port 22: Connection refused");
  // A program that is missing is no host's failure.
  MpirunStderr missing;
  through(missing, kNotAccessible);
  EXPECT_FALSE(missing.failure().host_lost);
}

TEST(MpirunMessages, StopAfterACheckpointIsRecognised) {
  MpirunStderr filter;
  const std::string line = "bspg: stopping after checkpoint 12, as asked (/ckpt/stop)\n";
  EXPECT_EQ(through(filter, "rank output\n" + line), "rank output\n" + line);
  EXPECT_EQ(filter.stopped_after_checkpoint(), 12u);
  MpirunStderr other;
  through(other, "prog: bspg: stopping after checkpoint 12\n");
  EXPECT_EQ(other.stopped_after_checkpoint(), 0u);
}

namespace {

// What a filter with restarts passes of `text` (fed whole, then finished), and what it holds.
using Passed = std::pair<std::string, std::string>;
Passed with_restarts(const std::string& text) {
  MpirunStderr filter;
  filter.quiet_losses();
  std::string passed = filter.feed(text);
  passed += filter.finish();
  return {passed, filter.held_consequences()};
}

}  // namespace

TEST(MpirunMessages, PeersHangingUpAreHeldUntilALossExplainsThem) {
  const std::string hung_up = block(
      "An MPI communication peer process has unexpectedly disconnected.  This\n"
      "usually indicates a failure in the peer process (e.g., a crash or\n"
      "otherwise exiting without calling MPI_FINALIZE first).\n\n"
      "  Local host: emu1\n  Local PID:  26984\n  Peer host:  emu2\n");
  const std::string aggregated =
      "[vm:08445] 1 more process has sent help message help-mpi-btl-tcp.txt / peer hung up\n"
      "[vm:08445] Set MCA parameter \"orte_base_help_aggregate\" to 0 to see all help / error "
      "messages\n";
  MpirunStderr lost;
  lost.quiet_losses();
  EXPECT_EQ(lost.feed(hung_up + aggregated + kLostDaemon) + lost.finish(), "");
  // Without a loss to explain them they are left to bsprun, which shows them when the run
  // failed by itself; so are the others' MPI error handler blocks (Open MPI 5, "Socket closed").
  MpirunStderr unexplained;
  unexplained.quiet_losses();
  EXPECT_EQ(unexplained.feed("rank output\n" + hung_up + aggregated), "rank output\n");
  EXPECT_EQ(unexplained.flush(), "");
  EXPECT_EQ(unexplained.finish(), "");
  EXPECT_EQ(unexplained.held_consequences(), hung_up + aggregated);
  const std::string socket_closed =
      "[emu2:00000] *** An error occurred in Socket closed\n"
      "[emu2:00000] *** reported by process [1305608193,0]\n"
      "[emu2:00000] *** MPI_ERRORS_ARE_FATAL (processes in this communicator will now abort,\n";
  EXPECT_EQ(with_restarts(socket_closed + "\nrank output\n"),
            Passed("rank output\n", socket_closed));
  // PRRTE's complaints as Slurm ends it with the job (Open MPI 5, a batch job's time limit).
  const std::string oob =
      "[emu4:04917] oob:tcp: send_msg: write failed: Broken pipe (32) [sd = 19]\n"
      "[emu4:04917] [prterun-emu4-4917@0,0]-[prterun-emu4-4917@0,1] "
      "prte_oob_tcp_peer_send_handler: unable to send message ON SOCKET 19\n";
  EXPECT_EQ(with_restarts(oob), Passed("", oob));
  // MPICH 4.2's proxies and Slurm's srun, as Slurm 24.11 ends the allocation under the job.
  const std::string cut =
      "slurmstepd-emu1: error: *** STEP 2.1 ON emu1 CANCELLED AT 2026-11-29T07:10:04 DUE TO "
      "TIME LIMIT ***\n"
      "[proxy:0@emu1] HYD_pmcd_pmip_control_cmd_cb (proxy/pmip_cb.c:484): assert (!closed) "
      "failed\n"
      "[proxy:0@emu1] HYDT_dmxu_poll_wait_for_event (lib/tools/demux/demux_poll.c:76): callback "
      "returned error status\n"
      "[proxy:0@emu1] main (proxy/pmip.c:122): demux engine error waiting for event\n"
      "srun: error: emu1: task 0: Exited with exit code 7\n"
      "srun: got SIGCONT\n"
      "[mpiexec@vm] HYDT_bscu_wait_for_completion (lib/tools/bootstrap/utils/bscu_wait.c:109): "
      "one of the processes terminated badly; aborting\n"
      "[mpiexec@vm] main (mpiexec/mpiexec.c:260): process manager error waiting for completion\n";
  EXPECT_EQ(with_restarts(cut + "rank output\n"), Passed("rank output\n", cut));
  // Without restarts they pass.
  MpirunStderr shown;
  EXPECT_EQ(through(shown, "srun: error: emu1: task 0: Exited with exit code 7\n"),
            "srun: error: emu1: task 0: Exited with exit code 7\n");
  // Without restarts they pass as they come.
  MpirunStderr plain;
  EXPECT_EQ(through(plain, hung_up + aggregated), hung_up + aggregated);
}

TEST(MpirunMessages, OpenMpi5sBlockAfterAnAbortIsLeftOut) {
  MpirunStderr filter;
  const std::string block =
      "--------------------------------------------------------------------------\n"
      "prterun has exited due to process rank 0 with PID 0 on node vm calling\n"
      "\"abort\". This may have caused other processes in the application to be\n"
      "terminated by signals sent by prterun (as reported here).\n"
      "--------------------------------------------------------------------------\n";
  std::string out = filter.feed("bspg: process 0: bsp_put: pid 7 is out of range 0..1\n" + block);
  out += filter.finish();
  EXPECT_EQ(out, "bspg: process 0: bsp_put: pid 7 is out of range 0..1\n");
  EXPECT_EQ(filter.failure().exit_status, 0);  // not a start-up failure
}

// The library's word that a checkpoint is whole (BSPG_SAY_WHOLE) is bsprun's alone: taken out,
// the newest kept; a line that only looks like it passes.
TEST(MpirunMessages, WholeCheckpointLinesAreTakenOut) {
  MpirunStderr filter;
  std::string out =
      filter.feed("bspg: checkpoint 3 is whole\nuser line\nbspg: checkpoint 4 is whole\n");
  out += filter.feed("bspg: checkpoint 5x is whole\nbspg: checkpoint 6 is whole!\n");
  out += filter.finish();
  EXPECT_EQ(out, "user line\nbspg: checkpoint 5x is whole\nbspg: checkpoint 6 is whole!\n");
  EXPECT_EQ(filter.whole_checkpoint(), 4U);
}

// PRRTE (Open MPI 5, Slurm 24.11) once the allocation ended under a running job: srun no longer
// runs, and its 20 lines about the Slurm version are held for bsprun, which knows why.
TEST(MpirunMessages, OpenMpi5sSlurmVersionBlockIsHeld) {
  MpirunStderr filter;
  filter.quiet_losses();
  const std::string block =
      "--------------------------------------------------------------------------\n"
      "The Slurm process starter requires a minimum Slurm version level\n"
      "of v17.11. The detected version being used here is:\n"
      "\n"
      "  Major: 0\n"
      "  Minor: 0\n"
      "\n"
      "This will result in use of the ssh process starter. This will have\n"
      "--------------------------------------------------------------------------\n";
  std::string out = filter.feed("before\n" + block + "after\n");
  out += filter.finish();
  EXPECT_EQ(out, "before\nafter\n");
  EXPECT_NE(filter.slurm_starter_refused().find("Major: 0"), std::string::npos);
}

// MPICH 4.2 on the grid path: after a process's crash line, Hydra's words on the connections that
// ended with it are left out (the crash line is the one line).
TEST(HydraMessages, AfterACrashLineTheCutConnectionsAreLeftOut) {
  MpirunStderr filter;
  const std::string crash = "bspg: process 2: crashed with signal SIGSEGV (segmentation fault)\n";
  std::string out = filter.feed(
      "[proxy:0:1@emu2] HYD_pmcd_pmip_control_cmd_cb (proxy/pmip_cb.c:480): assert (!closed) "
      "failed\n" +
      crash +
      "[proxy:0:1@emu2] HYDT_dmxu_poll_wait_for_event (lib/tools/demux/demux_poll.c:76): callback "
      "returned error status\n"
      "[proxy:0:1@emu2] main (proxy/pmip.c:122): demux engine error waiting for event\n"
      "[mpiexec@vm] control_cb (mpiexec/pmiserv_cb.c:362): assert (!closed) failed\n"
      "[mpiexec@vm] HYDT_dmxu_poll_wait_for_event (lib/tools/demux/demux_poll.c:76): callback "
      "returned error status\n"
      "[mpiexec@vm] HYD_pmci_wait_for_completion (mpiexec/pmiserv_pmci.c:160): error waiting for "
      "event\n"
      "[mpiexec@vm] main (mpiexec/mpiexec.c:325): process manager error waiting for completion\n");
  out += filter.finish();
  // The proxy line before the crash line passes (nothing explained it yet); none after it.
  EXPECT_EQ(out,
            "[proxy:0:1@emu2] HYD_pmcd_pmip_control_cmd_cb (proxy/pmip_cb.c:480): assert (!closed) "
            "failed\n" +
                crash);
}

// MPICH's Hydra, as mpiexec 4.0 printed it on the grid path: single lines, after which it waits
// for ever (bsprun stops it: starter_waits_on_failure).
const std::string kHydraSockError =
    "[mpiexec@vm] HYDU_sock_write (utils/sock/sock.c:254): write error (Bad file descriptor)\n"
    "[mpiexec@vm] HYD_pmcd_pmiserv_send_signal (pm/pmiserv/pmiserv_cb.c:176): unable to write "
    "data to proxy\n";

TEST(HydraMessages, AProgramAProxyCouldNotExecuteIsOneLineNamingTheHost) {
  MpirunStderr missing;
  missing.starter_waits_on_failure();
  // Two proxies' lines, the second broken into the first, as Hydra wrote them.
  EXPECT_EQ(through(missing,
                    "[proxy:0:0@emu1] HYDU_create_process (utils/launch/launch.c:73): "
                    "[proxy:0:0@emu1] HYDU_create_process (utils/launch/launch.c:73): execvp error "
                    "on file nosuchprog (No such file or directory)\n"
                    "execvp error on file nosuchprog (No such file or directory)\n" +
                        kHydraSockError),
            "bsprun: emu1: program nosuchprog not found there\n");
  EXPECT_EQ(missing.failure().exit_status, 127);
  EXPECT_EQ(missing.failure().host, "emu1");
  // Hydra says "Permission denied" of a missing path and of a directory alike.
  MpirunStderr denied;
  EXPECT_EQ(through(denied,
                    "[proxy:0:1@emu2] HYDU_create_process (utils/launch/launch.c:73): execvp "
                    "error on file /tmp/ (Permission denied)\n"),
            "bsprun: emu2: program /tmp/ not found there, or not executable\n");
  EXPECT_EQ(denied.failure().exit_status, 127);
  MpirunStderr other;
  EXPECT_EQ(through(other,
                    "[proxy:0:1@emu2] HYDU_create_process (utils/launch/launch.c:73): execvp "
                    "error on file /p (Exec format error)\n"),
            "bsprun: emu2: cannot execute /p: Exec format error\n");
  EXPECT_EQ(other.failure().exit_status, 126);
}

TEST(HydraMessages, AProxyThatCannotReachMpiexecIsOneLineNamingTheHost) {
  MpirunStderr filter;
  filter.starter_waits_on_failure();
  EXPECT_EQ(through(filter,
                    "[proxy:0:0@emu2] HYDU_sock_connect (utils/sock/sock.c:141): unable to connect "
                    "from \"emu2\" to \"vm\" (Connection refused)\n"
                    "[proxy:0:0@emu2] main (pm/pmiserv/pmip.c:149): unable to connect to server vm "
                    "at port 33595 (check for firewalls!)\n"),
            "bsprun: emu2: MPICH's proxy there could not connect back to mpiexec (unable to "
            "connect from \"emu2\" to \"vm\" (Connection refused)); where this machine has "
            "several networks, name the one the hosts reach in HYDRA_IFACE\n");
  EXPECT_EQ(filter.failure().exit_status, 125);
  EXPECT_EQ(filter.failure().host, "emu2");
}

TEST(HydraMessages, AWorkingDirectoryIs125WhetherTheProxySaysItOrNot) {
  MpirunStderr said;
  said.starter_waits_on_failure();
  EXPECT_EQ(through(said,
                    "[proxy:0:0@emu1] launch_procs (pm/pmiserv/pmip_cb.c:621): unable to change "
                    "wdir to /no/dir (No such file or directory)\n"
                    "[proxy:0:0@emu1] HYD_pmcd_pmip_control_cmd_cb (pm/pmiserv/pmip_cb.c:906): "
                    "launch_procs returned error\n"
                    "[mpiexec@vm] control_cb (pm/pmiserv/pmiserv_cb.c:206): assert (!closed) "
                    "failed\n"),
            "bsprun: emu1: cannot change to the working directory /no/dir (it does not exist "
            "there, or cannot be entered)\n");
  EXPECT_EQ(said.failure().exit_status, 125);
  // The proxy's line lost as it ended, mpiexec's cutting into its start.
  MpirunStderr cut;
  cut.starter_waits_on_failure();
  EXPECT_EQ(
      through_to_end(cut,
                     "[proxy:0:0@emu1] [mpiexec@vm] control_cb (pm/pmiserv/pmiserv_cb.c:206): "
                     "assert (!closed) failed\n"
                     "[mpiexec@vm] main (ui/mpich/mpiexec.c:325): process manager error waiting "
                     "for completion\n"),
      "bsprun: could not start the job on emu1: MPICH's proxy there ended before its "
      "processes started (mpiexec gives no reason; a working directory missing there ends "
      "it so)\n");
  EXPECT_EQ(cut.failure().exit_status, 125);
}

TEST(HydraMessages, SshsLineAloneIsTheFailureWhereTheStarterWaits) {
  const std::map<std::string, std::string> names{{"127.0.41.2", "emu2"}, {"127.0.41.1", "emu1"}};
  MpirunStderr refused(names);
  refused.starter_waits_on_failure();
  // Nothing follows ssh's line: Hydra waits for the proxy.
  EXPECT_EQ(through(refused, "ssh: connect to host 127.0.41.2 port 22: Connection refused\n"),
            "bsprun: emu2: could not start the job there: ssh: connect to host 127.0.41.2 port "
            "22: Connection refused\n");
  EXPECT_EQ(refused.failure().exit_status, 125);
  EXPECT_TRUE(refused.failure().host_lost);
  // A connection cut while the job ran: the host was lost.
  MpirunStderr cut(names);
  cut.starter_waits_on_failure();
  EXPECT_EQ(through(cut,
                    "rank 1 of 2 on emu2\nConnection to 127.0.41.2 closed by remote host.\n"
                    "[mpiexec@vm] control_cb (pm/pmiserv/pmiserv_cb.c:206): assert (!closed) "
                    "failed\n"),
            "rank 1 of 2 on emu2\nbsprun: lost contact with emu2 while the job ran (the host or "
            "its network failed); the job was stopped\n");
  EXPECT_EQ(cut.failure().exit_status, 125);
  EXPECT_EQ(cut.failure().host, "emu2");
  // Where the starter reports by itself (Open MPI), ssh's line waits for the block as before.
  MpirunStderr held(names);
  EXPECT_EQ(held.feed("ssh: connect to host 127.0.41.2 port 22: Connection refused\n"), "");
  EXPECT_EQ(held.failure().exit_status, 0);
}

TEST(HydraMessages, HydrasOwnLinesPassUntilAFailureAndAreDroppedWhileStopping) {
  MpirunStderr running;
  running.starter_waits_on_failure();
  EXPECT_EQ(through(running, kHydraSockError), kHydraSockError);
  EXPECT_EQ(running.failure().exit_status, 0);
  MpirunStderr stopping;
  stopping.starter_waits_on_failure();
  stopping.stopping();
  EXPECT_EQ(through(stopping, kHydraSockError), "");
}

TEST(HydraMessages, ALineWrittenInPiecesIsRecognisedWhole) {
  const std::string text =
      "rank 0 of 2 on emu1\n"
      "[mpiexec@vm] control_cb (mpiexec/pmiserv_cb.c:280): assert (!closed) failed\n"
      "[mpiexec@vm] main (mpiexec/mpiexec.c:260): process manager error waiting for completion\n";
  for (std::size_t piece : {1, 3, 13, 40}) {
    MpirunStderr filter;
    filter.starter_waits_on_failure();
    EXPECT_EQ(through_to_end(filter, text, piece),
              "rank 0 of 2 on emu1\nbsprun: could not start the job: MPICH's proxy on one of the "
              "hosts ended before its processes started (mpiexec gives no reason; a working "
              "directory missing there ends it so)\n")
        << piece;
    EXPECT_EQ(filter.failure().exit_status, 125) << piece;
  }
}

TEST(HydraMessages, AProxyThatEndedOnAHostThatIsGoneIsThatHostLost) {
  MpirunStderr filter;
  filter.starter_waits_on_failure();
  EXPECT_EQ(filter.feed("[mpiexec@vm] control_cb (mpiexec/pmiserv_cb.c:280): assert (!closed) "
                        "failed\n"),
            "");
  EXPECT_EQ(
      filter.hosts_gone({"emu2 (ssh: connect to host 127.0.4.2 port 22: Connection refused)"}),
      "bsprun: lost contact with emu2 while the job ran (the host or its network failed); "
      "the job was stopped\n");
  EXPECT_EQ(filter.failure().exit_status, 125);
  EXPECT_TRUE(filter.failure().host_lost);
  EXPECT_EQ(filter.finish(), "");
  // Without such a proxy, unreachable hosts change nothing.
  MpirunStderr plain;
  plain.starter_waits_on_failure();
  EXPECT_EQ(plain.hosts_gone({"emu2 (no answer)"}), "");
  EXPECT_EQ(plain.failure().exit_status, 0);
}

TEST(HydraMessages, AProxyThatCouldNotBeLaunchedIsPlacedByTheHostBsprunCannotReach) {
  const std::string launch =
      "[mpiexec@vm] ui_cmd_cb (mpiexec/pmiserv_pmci.c:51): Launch proxy failed.\n"
      "[mpiexec@vm] main (mpiexec/mpiexec.c:260): process manager error waiting for completion\n";
  MpirunStderr placed;
  placed.starter_waits_on_failure();
  EXPECT_EQ(placed.feed(launch), "");
  EXPECT_EQ(
      placed.hosts_gone({"emu2 (ssh: connect to host 127.0.4.2 port 22: Connection refused)"}),
      "bsprun: emu2: could not start the job there: ssh: connect to host 127.0.4.2 port 22: "
      "Connection refused\n");
  EXPECT_EQ(placed.failure().exit_status, 125);
  EXPECT_EQ(placed.failure().host, "emu2");
  EXPECT_TRUE(placed.failure().host_lost);
  // No host to blame: said as it is after a second (flush).
  MpirunStderr unplaced;
  unplaced.starter_waits_on_failure();
  EXPECT_TRUE(unplaced.feed(launch).empty());
  EXPECT_TRUE(unplaced.failure_pending());
  EXPECT_EQ(unplaced.flush(), "");  // still waiting for ssh's word or the host bsprun cannot reach
  EXPECT_EQ(unplaced.finish(),
            "bsprun: could not start the job on every host: MPICH's mpiexec could not start its "
            "proxy on one of them (it does not say which)\n");
  EXPECT_EQ(unplaced.failure().exit_status, 125);
}

namespace {

using bspg::launcher::MpirunStdout;

// MPICH 4.0's mpiexec on its stdout after a process crashed.
const std::string kHydraBadTermination =
    "\n" + std::string(83, '=') +
    "\n"
    "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n"
    "=   PID 24905 RUNNING AT vm\n"
    "=   EXIT CODE: 11\n"
    "=   CLEANING UP REMAINING PROCESSES\n"
    "=   YOU CAN IGNORE THE BELOW CLEANUP MESSAGES\n" +
    std::string(83, '=') +
    "\n"
    "YOUR APPLICATION TERMINATED WITH THE EXIT STRING: Segmentation fault (signal 11)\n"
    "This typically refers to a problem with your application.\n"
    "Please see the FAQ page for debugging suggestions\n";

// Everything the filter lets out, fed in pieces of `piece` bytes, with the stream's end.
std::string through_stdout_filter(MpirunStdout& filter, const std::string& text,
                                  std::size_t piece = std::string::npos) {
  std::string out;
  for (std::size_t at = 0; at < text.size(); at += piece)
    out += filter.feed(std::string_view(text).substr(at, piece));
  return out + filter.finish();
}

}  // namespace

TEST(MpirunStdoutMessages, HydrasBadTerminationBlockIsHeld) {
  for (std::size_t piece : {std::size_t{1}, std::size_t{7}, std::string::npos}) {
    MpirunStdout filter;
    EXPECT_EQ(through_stdout_filter(filter, "result 42\n" + kHydraBadTermination, piece),
              "result 42\n")
        << piece;
    EXPECT_EQ(filter.held(), kHydraBadTermination) << piece;
  }
}

TEST(MpirunStdoutMessages, TheExitStringAloneIsHeldAndWhatFollowsPasses) {
  MpirunStdout filter;
  const std::string exit_string =
      "YOUR APPLICATION TERMINATED WITH THE EXIT STRING: Killed (signal 9)\n"
      "This typically refers to a problem with your application.\n";
  EXPECT_EQ(through_stdout_filter(filter, exit_string + "next\n"), "next\n");
  EXPECT_EQ(filter.held(), exit_string);
}

TEST(MpirunStdoutMessages, OpenMpisHangUpNoticeIsHeld) {
  MpirunStdout filter;
  EXPECT_EQ(through_stdout_filter(filter, "a\n" + kHungUp + "b\n", 5), "a\nb\n");
  EXPECT_EQ(filter.held(), kHungUp);
}

TEST(MpirunStdoutMessages, AProgramsOwnRulesAndBlankLinesPassInOrder) {
  const std::string equals(83, '='), dashes(74, '-');
  const std::string text = "title\n" + equals + "\n\n" + equals + "\n=   not Hydra's\n" + equals +
                           "\n" + equals + "\n" + dashes + "\nA table\n" + dashes + "\n\n\nend\n";
  for (std::size_t piece : {std::size_t{1}, std::size_t{3}, std::string::npos}) {
    MpirunStdout filter;
    EXPECT_EQ(through_stdout_filter(filter, text, piece), text) << piece;
    EXPECT_EQ(filter.held(), "") << piece;
  }
}

TEST(MpirunStdoutMessages, ALineThatMayBeginABlockWaitsOnlyForTheNextLineOrFlush) {
  MpirunStdout filter;
  const std::string equals(83, '=');
  EXPECT_EQ(filter.feed("\n" + equals + "\n"), "");
  EXPECT_EQ(filter.flush(), "\n" + equals + "\n");
  EXPECT_EQ(filter.feed(equals + "\n=   BAD TERMINATION OF"), "");
  EXPECT_EQ(filter.feed(" SOMETHING ELSE\n"), equals + "\n=   BAD TERMINATION OF SOMETHING ELSE\n");
  EXPECT_EQ(filter.held(), "");
}

TEST(MpirunStdoutMessages, UnfinishedLinesPassAtOnceUnlessTheyMayBeginABlock) {
  MpirunStdout filter;
  EXPECT_EQ(filter.feed("Enter a number: "), "Enter a number: ");
  EXPECT_EQ(filter.feed("===="), "====");  // the rest of a line already begun
  EXPECT_EQ(filter.feed("\nprogress 10%"), "\nprogress 10%");
  EXPECT_EQ(filter.feed("\n===="), "\n");
  EXPECT_EQ(filter.feed("===> "), "=======> ");
  EXPECT_EQ(filter.feed("go\n===="), "go\n");
  EXPECT_EQ(filter.flush(), "====");
  EXPECT_EQ(filter.feed("==\n"), "==\n");
  EXPECT_EQ(filter.finish(), "");
  EXPECT_EQ(filter.held(), "");
}

TEST(MpirunStdoutMessages, OutputAroundABlockKeepsItsOrder) {
  MpirunStdout filter;
  const std::string equals(83, '=');
  std::string out = filter.feed("1\n\n2\n" + equals + "\n3\n");
  out += filter.feed(kHydraBadTermination.substr(0, 40));
  out += filter.feed(kHydraBadTermination.substr(40) + "4\n");
  out += filter.finish();
  EXPECT_EQ(out, "1\n\n2\n" + equals + "\n3\n4\n");
  EXPECT_EQ(filter.held(), kHydraBadTermination);
}

TEST(MpirunStdoutMessages, LargeOutputPassesWhole) {
  std::string text;
  for (int i = 0; i < 20000; ++i) text += "line " + std::to_string(i) + (i % 7 ? "\n" : "\n\n");
  MpirunStdout filter;
  EXPECT_EQ(through_stdout_filter(filter, text, 65536), text);
}

TEST(MpirunStdoutMessages, WhereTheProgramsOutputComesTooOnlyOpenMpisBlocksAreLookedFor) {
  MpirunStdout filter(false);
  const std::string equals(83, '=');
  EXPECT_EQ(filter.feed("\n"), "\n");
  EXPECT_EQ(filter.feed(equals + "\n"), equals + "\n");
  EXPECT_EQ(filter.feed("===="), "====");
  EXPECT_EQ(filter.feed("\n" + kHydraBadTermination), "\n" + kHydraBadTermination);
  EXPECT_EQ(filter.feed(kHungUp + "after\n"), "after\n");
  EXPECT_EQ(filter.finish(), "");
  EXPECT_EQ(filter.held(), kHungUp);
}

// The library's word that a process started (BSPG_SAY_STARTED) is counted and taken out, whole
// or in pieces, among other lines; a line that only looks like it stays.
TEST(MpirunMessages, StartedLinesAreCountedAndTakenOut) {
  MpirunStderr filter;
  const std::string text =
      "bspg: process started\nfirst words\nbspg: process started\n"
      "said: bspg: process started\nbspg: process started\n";
  EXPECT_EQ(through(filter, text, 5), "first words\nsaid: bspg: process started\n");
  EXPECT_EQ(filter.processes_started(), 3);
}

// Inside a block of the starter's the word still counts, and the block is as it was.
TEST(MpirunMessages, StartedLineInsideABlockCountsAndLeavesTheBlock) {
  MpirunStderr filter;
  const std::string body = "Some notice of the starter's.\n";
  EXPECT_EQ(through(filter, kRule + "bspg: process started\n" + body + kRule), block(body));
  EXPECT_EQ(filter.processes_started(), 1);
}
