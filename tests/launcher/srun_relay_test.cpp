// bsprun as the srun that Open MPI 5 starts its daemons with inside Slurm (srun_relay.h): an srun
// that starts no daemon is the real one, unchanged; the daemons' way back to mpirun goes through
// the relay, which tells mpirun when a daemon ends on a node whose slurmd answers, and holds
// mpirun's side (with one line on mpirun's standard error) when the node is gone. Stand-ins on
// this machine: srun (a script), the daemons it starts, mpirun (this test's listening socket and
// a parent process whose standard error is a file) and slurmd (a listening socket).
#include "srun_relay.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "daemon_relay.h"
#include "loopback.h"

using namespace bspg::launcher;

namespace {

using bspg::test::listen_local;
using bspg::test::read_within;

std::string file_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// One relay run: `daemons` stand-in daemons started by the stand-in srun, each connecting to the
// port its prte_hnp_uri names, saying hello, and ending its connection once the file `end`
// exists (then srun ends, as srun does when its tasks have).
struct SrunRun {
  std::string dir, end, err, args;
  int hnp = -1, hnp_port = 0, slurmd = -1, slurmd_port = 0;
  std::vector<int> links;
  std::thread slurmd_thread;
  std::atomic<bool> slurmd_gone{false};
  pid_t starter = -1;

  // Slurm's slurmd on the "node": takes connections and keeps them, until it is gone.
  void start_slurmd() {
    slurmd = listen_local(&slurmd_port);
    slurmd_thread = std::thread([this] {
      std::vector<int> kept;
      while (!slurmd_gone) {
        pollfd p{slurmd, POLLIN, 0};
        if (poll(&p, 1, 20) != 1) continue;
        const int c = accept(slurmd, nullptr, nullptr);
        if (c >= 0) kept.push_back(c);
      }
      for (int c : kept) close(c);
      close(slurmd);
    });
  }
  void stop_slurmd() {
    slurmd_gone = true;
    if (slurmd_thread.joinable()) slurmd_thread.join();
  }

  // Runs the relay as the child of a stand-in mpirun (whose stderr is `err`), with `words` after
  // srun's path and slurmd's port.
  void start(std::vector<std::string> words) {
    char templ[] = "/tmp/bspg-srun-relay-test-XXXXXX";
    ASSERT_NE(mkdtemp(templ), nullptr);
    dir = templ;
    end = dir + "/end";
    err = dir + "/err";
    args = dir + "/args";
    hnp = listen_local(&hnp_port);
    ASSERT_GE(hnp, 0);
    start_slurmd();
    ASSERT_GE(slurmd, 0);
    {
      std::ofstream fake(dir + "/srun");
      fake << "#!/bin/bash\n"
              "printf '%s\\n' \"$@\" > '"
           << args
           << "'\n"
              "port=$(printf '%s' \"$*\" | sed -n 's|.*tcp://127.0.0.1:\\([0-9]*\\):.*|\\1|p')\n"
              "[ -n \"$port\" ] || exit 0\n"
              "n=$(printf '%s\\n' \"$@\" | sed -n 's/^--ntasks=//p')\n"
              "for i in $(seq 1 \"${n:-1}\"); do\n"
              "  ( exec 3<>/dev/tcp/127.0.0.1/$port; printf hello >&3;\n"
              "    while [ ! -e '"
           << end << "' ] && [ -d '" << dir
           << "' ]; do sleep 0.02; done; exec 3>&- ) </dev/null >/dev/null 2>&1 &\n"
              "done\n"
              "wait\n";
    }
    chmod((dir + "/srun").c_str(), 0755);
    for (std::string& word : words)
      for (std::size_t at = word.find("HNP_PORT"); at != std::string::npos;
           at = word.find("HNP_PORT"))
        word.replace(at, 8, std::to_string(hnp_port));
    const std::string srun = dir + "/srun", port = std::to_string(slurmd_port);
    starter = fork();
    if (starter == 0) {
      close(hnp);  // mpirun's and slurmd's sockets are not the relay's
      close(slurmd);
      const int e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(e, STDERR_FILENO);
      const pid_t relay = fork();
      if (relay == 0) {
        std::vector<std::string> all = {"bsprun", kSrunRelayOption, srun, port};
        all.insert(all.end(), words.begin(), words.end());
        std::vector<char*> argv;
        for (std::string& word : all) argv.push_back(word.data());
        argv.push_back(nullptr);
        _exit(run_srun_relay(static_cast<int>(all.size()), argv.data()));
      }
      int status = 0;
      waitpid(relay, &status, 0);
      _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 99);
    }
    ASSERT_GT(starter, 0);
  }

  // mpirun takes `n` daemons' connections, each saying hello.
  void take_links(int n) {
    for (int i = 0; i < n; ++i) {
      pollfd p{hnp, POLLIN, 0};
      ASSERT_EQ(poll(&p, 1, 10000), 1) << "the relay connects to mpirun's port";
      const int link = accept(hnp, nullptr, nullptr);
      ASSERT_GE(link, 0);
      links.push_back(link);
      char hello[8] = {};
      ASSERT_EQ(read_within(link, hello, 5, 5000), 5);
      EXPECT_EQ(std::string(hello, 5), "hello");
    }
  }

  // The relay's (the starter's) status, waited for up to `seconds`; -1 where it did not end.
  int wait_starter(double seconds) {
    const auto until =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(int(seconds * 1000));
    while (std::chrono::steady_clock::now() < until) {
      int status = 0;
      if (waitpid(starter, &status, WNOHANG) == starter) {
        starter = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return -1;
  }

  ~SrunRun() {
    for (int link : links) close(link);
    if (hnp >= 0) close(hnp);
    if (!dir.empty()) std::ofstream(end).flush();
    if (starter > 0) {
      kill(starter, SIGKILL);  // the relay ends with its starter, and ends its srun
      waitpid(starter, nullptr, 0);
    }
    stop_slurmd();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (!dir.empty()) std::system(("rm -rf '" + dir + "'").c_str());
  }
};

// PRRTE's srun command for its daemons (the words plm/slurm passes, quoted as it quotes them).
std::vector<std::string> daemon_srun(int ntasks) {
  return {"--ntasks-per-node=1",
          "--nodelist=127.0.0.1",
          "--ntasks=" + std::to_string(ntasks),
          "prted",
          "--prtemca",
          "ess",
          "\"slurm\"",
          "--prtemca",
          "prte_hnp_uri",
          "\"prterun-t-1@0.0;tcp://127.0.0.1:HNP_PORT:8\""};
}

}  // namespace

TEST(SrunRelay, TheScriptRunsTheRelayAndRefusesPathsItCannotQuote) {
  const std::string script = srun_relay_script("/opt/bspg/bin/bsprun", "/usr/bin/srun", 6818);
  EXPECT_NE(script.find("exec '/opt/bspg/bin/bsprun' --as-srun-relay '/usr/bin/srun' 6818 \"$@\""),
            std::string::npos)
      << script;
  EXPECT_EQ(script.rfind("#!/bin/sh\n", 0), 0U);
  EXPECT_EQ(srun_relay_script("/opt/it's/bsprun", "/usr/bin/srun", 6818), "");
  EXPECT_EQ(srun_relay_script("/opt/bspg/bin/bsprun", "", 6818), "");
}

TEST(SrunRelay, AnSrunThatStartsNoDaemonIsTheRealOneUnchanged) {
  SrunRun run;
  ASSERT_NO_FATAL_FAILURE(run.start({"--nodes=2", "--label", "/bin/sh", "-c", "echo a b"}));
  EXPECT_EQ(run.wait_starter(10), 0);
  EXPECT_EQ(file_text(run.args), "--nodes=2\n--label\n/bin/sh\n-c\necho a b\n");
}

TEST(SrunRelay, EveryDaemonIsRelayedAndEndsWhereItsNodeAnswers) {
  SrunRun run;
  ASSERT_NO_FATAL_FAILURE(run.start(daemon_srun(2)));
  ASSERT_NO_FATAL_FAILURE(run.take_links(2));
  EXPECT_EQ(file_text(run.args).find(":" + std::to_string(run.hnp_port) + ":"), std::string::npos)
      << "srun's daemons are pointed at the relay, not at mpirun";
  std::ofstream(run.end).flush();
  for (int link : run.links) {
    char buffer[16];
    EXPECT_EQ(read_within(link, buffer, sizeof buffer, 5000), 0)
        << "mpirun sees each daemon's connection end, as without the relay";
  }
  EXPECT_EQ(run.wait_starter(10), 0) << "the relay ends with its srun, with srun's status";
  EXPECT_EQ(file_text(run.err).find("is gone"), std::string::npos);
}

TEST(SrunRelay, ADaemonGoneWithItsNodeLeavesMpirunsSideOpenAndSaysSo) {
  SrunRun run;
  ASSERT_NO_FATAL_FAILURE(run.start(daemon_srun(1)));
  ASSERT_NO_FATAL_FAILURE(run.take_links(1));
  run.stop_slurmd();  // the node's slurmd is gone: its port refuses
  std::ofstream(run.end).flush();
  char buffer[16];
  EXPECT_EQ(read_within(run.links[0], buffer, sizeof buffer, 2500), -2)
      << "mpirun's side stays open: to mpirun the node is silent";
  // The line goes to mpirun's standard error (Open MPI gives srun /dev/null), naming the node by
  // its address where Slurm does not name it.
  EXPECT_NE(file_text(run.err).find(daemon_gone_line("127.0.0.1", "Slurm's slurmd")),
            std::string::npos)
      << file_text(run.err);
  EXPECT_EQ(run.wait_starter(0.5), -1) << "the relay holds on after its srun ended";
  // What mpirun sends meanwhile goes nowhere; the relay ends with mpirun.
  EXPECT_EQ(send(run.links[0], "x", 1, MSG_NOSIGNAL), 1);
}
