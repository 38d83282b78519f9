// remote_stop_test.cpp - the script bsprun runs on each host to stop a job's processes there,
// run here on this machine: it ends the processes carrying the job's marker, frozen ones too,
// and nothing else.
#include "remote_stop.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

using namespace bspg::launcher;

namespace {

// A `sleep 60` whose environment holds BSPG_JOB_MARKER=marker.
pid_t marked_sleep(const std::string& marker) {
  const pid_t pid = fork();
  if (pid == 0) {
    const std::string variable = std::string(kJobMarkerVariable) + "=" + marker;
    char* const argv[] = {const_cast<char*>("sleep"), const_cast<char*>("60"), nullptr};
    char* const envp[] = {const_cast<char*>(variable.c_str()),
                          const_cast<char*>("PATH=/usr/bin:/bin"), nullptr};
    execve("/bin/sleep", argv, envp);
    _exit(127);
  }
  return pid;
}

// Waits up to 10 s for pid to end; its wait status, or -1 when it is still running.
int ended(pid_t pid) {
  for (int i = 0; i < 200; ++i) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) return status;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return -1;
}

}  // namespace

TEST(RemoteStop, MarkersAreFreshAndNeedNoQuoting) {
  const std::string a = new_job_marker(), b = new_job_marker();
  EXPECT_NE(a, b);
  EXPECT_EQ(a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-"),
            std::string::npos)
      << a;
}

TEST(RemoteStop, ScriptEndsTheJobsProcessesEvenFrozenOnesAndNothingElse) {
  const std::string marker = new_job_marker();
  const pid_t frozen = marked_sleep(marker);
  const pid_t running = marked_sleep(marker);
  const pid_t other_job = marked_sleep(new_job_marker());
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // exec done: the environment is set
  ASSERT_EQ(kill(frozen, SIGSTOP), 0);

  FILE* sh = popen("sh -s", "w");
  ASSERT_NE(sh, nullptr);
  const std::string script = remote_stop_script(marker);
  std::fwrite(script.data(), 1, script.size(), sh);
  EXPECT_EQ(pclose(sh), 0);

  const int frozen_status = ended(frozen), running_status = ended(running);
  EXPECT_TRUE(WIFSIGNALED(frozen_status) && WTERMSIG(frozen_status) == SIGTERM) << frozen_status;
  EXPECT_TRUE(WIFSIGNALED(running_status) && WTERMSIG(running_status) == SIGTERM) << running_status;
  int status = 0;
  EXPECT_EQ(waitpid(other_job, &status, WNOHANG), 0) << "a process of another job was stopped";
  kill(other_job, SIGKILL);
  waitpid(other_job, &status, 0);
}

TEST(RemoteStop, HostsNotStoppedAreNamedInOneLine) {
  EXPECT_EQ(not_stopped_line({"emu2 (Connection refused)", "emu3 (no answer within 10 s)"}),
            "could not reach emu2 (Connection refused), emu3 (no answer within 10 s) to stop the "
            "job there; its processes there may still run");
}
