// cleanup_test.cpp - the parts of "nothing outlives bsprun" that need no job: how long a process
// counts as stopped, the list of a job's processes (the script a probe runs, and /proc here),
// and what --clean-up says per host.
#include "cleanup.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "frozen.h"
#include "remote_stop.h"

using namespace bspg::launcher;
using Clock = StopClock::Clock;

namespace {

// A `sleep 60` with `line` (NAME=VALUE) in its environment.
pid_t marked_sleep(const std::string& line) {
  const pid_t pid = fork();
  if (pid == 0) {
    char* const argv[] = {const_cast<char*>("sleep"), const_cast<char*>("60"), nullptr};
    char* const envp[] = {const_cast<char*>(line.c_str()), const_cast<char*>("PMI_RANK=3"),
                          const_cast<char*>("PATH=/usr/bin:/bin"), nullptr};
    execve("/bin/sleep", argv, envp);
    _exit(127);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // exec done
  return pid;
}

void end(pid_t pid) {
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

std::string run_sh(const std::string& script) {
  FILE* sh = popen(("sh -c '" + script + "'").c_str(), "r");
  std::string out;
  char buffer[4096];
  while (sh && std::fgets(buffer, sizeof buffer, sh)) out += buffer;
  if (sh) pclose(sh);
  return out;
}

JobProcess process(long pid, char state, int rank, bool daemon = false,
                   const std::string& name = "ckpt_job") {
  JobProcess p;
  p.pid = pid;
  p.state = state;
  p.rank = rank;
  p.daemon = daemon;
  p.name = name;
  return p;
}

}  // namespace

TEST(StopClock, AProcessStoppedForTheTimeoutSinceItWasLastSeenRunningIsLost) {
  const auto t0 = Clock::now();
  StopClock clock(4, t0);
  const auto at = [&](double s) {
    return t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
  };
  EXPECT_EQ(clock.observe("emu3", {process(10, 'S', 2)}, at(1)), "");
  EXPECT_EQ(clock.observe("emu3", {process(10, 'T', 2)}, at(2)), "");  // stopped since 1 s
  EXPECT_EQ(clock.next_deadline(), at(5));
  EXPECT_EQ(clock.observe("emu3", {process(10, 'T', 2)}, at(4.9)), "");
  EXPECT_EQ(clock.observe("emu3", {process(10, 'T', 2)}, at(5)),
            "process 2 on emu3: stopped (SIGSTOP) for 4 s");
}

TEST(StopClock, RunningAgainOrGoneStartsOver) {
  const auto t0 = Clock::now();
  StopClock clock(2, t0);
  const auto at = [&](double s) {
    return t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
  };
  EXPECT_EQ(clock.observe("h", {process(10, 'T', 0)}, at(1)), "");
  EXPECT_EQ(clock.observe("h", {process(10, 'R', 0)}, at(2)), "");  // continued
  EXPECT_EQ(clock.observe("h", {process(10, 'T', 0)}, at(3)), "");
  EXPECT_EQ(clock.observe("h", {}, at(3.5)), "");  // ended
  EXPECT_EQ(clock.next_deadline(), Clock::time_point::max());
  EXPECT_EQ(clock.observe("h", {process(10, 'T', 0)}, at(4)), "");
  // Another host's round does not count for this one.
  EXPECT_EQ(clock.observe("other", {process(10, 'R', 0)}, at(5.4)), "");
  EXPECT_EQ(clock.observe("h", {process(10, 'T', 0)}, at(5.5)),
            "process 0 on h: stopped (SIGSTOP) for 2 s");
}

TEST(StopClock, NamesADaemonOrATracedProcess) {
  const auto t0 = Clock::now();
  StopClock clock(1, t0);
  const auto later = t0 + std::chrono::seconds(2);
  EXPECT_EQ(clock.observe("emu2", {process(800, 'T', -1, true, "orted")}, later),
            "the MPI daemon orted (pid 800) on emu2: stopped (SIGSTOP) for 2 s");
  StopClock traced(1, t0);
  EXPECT_EQ(traced.observe("emu2", {process(12, 't', 1)}, later),
            "process 1 on emu2: stopped by a tracer (debugger) for 2 s");
}

TEST(StoppedProcessEnder, EndsOnlyAProcessOfTheJobAndEachOnce) {
  std::vector<std::string> ended;
  bool works = true;
  StoppedProcessEnder ender([&](const std::string& host, const JobProcess& p) {
    ended.push_back(host + ":" + std::to_string(p.pid));
    return works;
  });
  EXPECT_FALSE(ender.end("emu2", process(800, 'T', -1, true, "prted")));  // a daemon: never
  EXPECT_FALSE(ender.end("emu2", process(801, 'T', -1)));                 // no rank: not the job's
  EXPECT_TRUE(ender.end("emu2", process(12, 'T', 1)));
  EXPECT_FALSE(ender.end("emu2", process(12, 'T', 1)));  // seen again: ending it failed
  EXPECT_TRUE(ender.end("emu3", process(12, 'T', 2)));   // the same pid on another host
  works = false;
  EXPECT_FALSE(ender.end("emu3", process(13, 'T', 3)));  // could not be ended
  EXPECT_EQ(ended, (std::vector<std::string>{"emu2:12", "emu3:12", "emu3:13"}));
  ender.forget();  // a new run
  works = true;
  EXPECT_TRUE(ender.end("emu2", process(12, 'T', 1)));
  EXPECT_FALSE(StoppedProcessEnder().end("emu2", process(12, 'T', 1)));  // none set
}

TEST(JobProcesses, TheScriptListsTheJobsProcessesWithStateAndRankAndNothingElse) {
  const std::string line = "BSPG_JOB_MARKER=" + new_job_marker();
  const pid_t stopped = marked_sleep(line), running = marked_sleep(line);
  const pid_t other = marked_sleep("BSPG_JOB_MARKER=" + new_job_marker());
  ASSERT_EQ(kill(stopped, SIGSTOP), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  bool complete = false;
  const auto found = read_job_processes("motd\n" + run_sh(job_processes_script(line)), complete);
  EXPECT_TRUE(complete);
  ASSERT_EQ(found.size(), 2u);
  for (const JobProcess& p : found) {
    EXPECT_TRUE(p.pid == stopped || p.pid == running) << p.pid;
    EXPECT_EQ(p.state, p.pid == stopped ? 'T' : 'S');
    EXPECT_EQ(p.rank, 3);
    EXPECT_EQ(p.name, "sleep");
    EXPECT_FALSE(p.daemon);
  }
  // The same from /proc here, for the local path (all lines must be there).
  const auto here = local_job_processes({line, "PMI_RANK=3"});
  EXPECT_EQ(here.size(), 2u);
  EXPECT_TRUE(local_job_processes({line, "PMI_RANK=4"}).empty());
  for (pid_t p : {stopped, running, other}) end(p);
}

TEST(JobProcesses, AnAnswerCutShortSaysNothing) {
  bool complete = true;
  const auto found = read_job_processes(
      std::string(kJobProcessesBegin) + "\nproc 12 T 0 a\nproc x T 0 b\n", complete);
  EXPECT_FALSE(complete);
  EXPECT_EQ(found.size(), 1u);
}

TEST(CleanUp, EndsTheJobsProcessesEvenStoppedOnesAndSaysWhich) {
  const std::string line = "BSPG_JOB_ID=cleanup-test-" + std::to_string(getpid());
  const pid_t stopped = marked_sleep(line), running = marked_sleep(line);
  const pid_t other = marked_sleep("BSPG_JOB_ID=another-job");
  ASSERT_EQ(kill(stopped, SIGSTOP), 0);
  const CleanedHost host = read_cleanup_output("this machine", run_sh(end_job_script(line)));
  int status = 0;
  EXPECT_EQ(waitpid(stopped, &status, 0), stopped);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << status;
  EXPECT_EQ(waitpid(running, &status, 0), running);
  EXPECT_EQ(waitpid(other, &status, WNOHANG), 0) << "a process of another job was ended";
  end(other);
  ASSERT_EQ(host.ended.size(), 2u);
  EXPECT_TRUE(host.left.empty());
  const std::string stopped_text = "sleep (pid " + std::to_string(stopped) + ", stopped)";
  EXPECT_TRUE(host.ended[0] == stopped_text || host.ended[1] == stopped_text);
}

TEST(CleanUp, OneLinePerHost) {
  CleanedHost host = read_cleanup_output(
      "emu2",
      "found 12 process T ckpt_job\nfound 10 daemon T orted\nfound 13 process S ckpt_job\n"
      "left 13\nfound x daemon T y\n");
  EXPECT_EQ(cleanup_lines("sim1", host),
            (std::vector<std::string>{
                "emu2: ended 2 processes of job sim1: ckpt_job (pid 12, stopped), orted (pid 10, "
                "MPI daemon, stopped)",
                "emu2: 1 process of job sim1 did not end even after SIGKILL: ckpt_job (pid 13)"}));
  EXPECT_EQ(cleanup_lines("sim1", read_cleanup_output("emu1", "")),
            std::vector<std::string>{"emu1: nothing of job sim1 left"});
  CleanedHost down;
  down.host = "emu3";
  down.error = "connection refused";
  EXPECT_EQ(cleanup_lines("sim1", down),
            std::vector<std::string>{"emu3: could not reach it (connection refused); processes "
                                     "of job sim1 there may still run"});
}
