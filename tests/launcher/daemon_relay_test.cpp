// bsprun as Open MPI 5's ssh agent (daemon_relay.h): the daemon's way back to mpirun is pointed at
// the relay, the relay carries its bytes, tells mpirun when the daemon ends on a host that still
// answers, and holds mpirun's side (with one line) when the host is gone.
#include "daemon_relay.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "loopback.h"
#include "mpirun_messages.h"

using namespace bspg::launcher;

namespace {

// PRRTE's command for a daemon, as plm/ssh passes it (one word, for the remote shell).
std::string daemon_command(const std::string& uri) {
  return "PRTE_PREFIX=/usr;export PRTE_PREFIX;/usr/bin/prted --daemonize --prtemca ess \"env\" "
         "--prtemca ess_base_vpid 2 --prtemca prte_hnp_uri \"" +
         uri + "\" --prtemca plm \"ssh\"";
}

TEST(DaemonRelay, TheDaemonsWayBackPointsAtTheRelaysPort) {
  std::vector<std::string> words = {
      daemon_command("prterun-vm-165@0.0;tcp://10.200.76.254:48613:24")};
  int hnp_port = 0;
  ASSERT_TRUE(point_hnp_uri_at(words, 40001, &hnp_port));
  EXPECT_EQ(hnp_port, 48613);
  EXPECT_EQ(words[0], daemon_command("prterun-vm-165@0.0;tcp://10.200.76.254:40001:24"));
}

TEST(DaemonRelay, EveryAddressListIsPointedThereIPv6Too) {
  std::vector<std::string> words = {
      "--prtemca", "prte_hnp_uri",
      "prterun-h-7@0.0;tcp://10.0.0.1,192.168.1.5:5000:24,16;tcp6://[fe80::1],[::1]:5000:64,128"};
  int hnp_port = 0;
  ASSERT_TRUE(point_hnp_uri_at(words, 123, &hnp_port));
  EXPECT_EQ(hnp_port, 5000);
  EXPECT_EQ(
      words[2],
      "prterun-h-7@0.0;tcp://10.0.0.1,192.168.1.5:123:24,16;tcp6://[fe80::1],[::1]:123:64,128");
  EXPECT_EQ(words[0], "--prtemca");
}

TEST(DaemonRelay, ACommandWithoutTheUriOrWithTwoPortsIsLeftAsItIs) {
  std::vector<std::string> none = {"/usr/bin/prted --daemonize"};
  int hnp_port = 0;
  EXPECT_FALSE(point_hnp_uri_at(none, 1, &hnp_port));
  EXPECT_EQ(none[0], "/usr/bin/prted --daemonize");
  std::vector<std::string> two = {
      daemon_command("x@0.0;tcp://10.0.0.1:5000:24;tcp://10.0.0.2:6000:24")};
  const std::vector<std::string> before = two;
  EXPECT_FALSE(point_hnp_uri_at(two, 1, &hnp_port));
  EXPECT_EQ(two, before);
  std::vector<std::string> no_port = {daemon_command("x@0.0;tcp://10.0.0.1")};
  EXPECT_FALSE(point_hnp_uri_at(no_port, 1, &hnp_port));
}

TEST(DaemonRelay, TheAgentIsRefusedWherePrrteWouldSplitItsWords) {
  EXPECT_EQ(daemon_relay_agent("/usr/bin/bsprun", "/tmp/cfg"),
            std::string("/usr/bin/bsprun ") + kDaemonRelayOption + " /tmp/cfg");
  EXPECT_EQ(daemon_relay_agent("/opt/my tools/bsprun", "/tmp/cfg"), "");
  EXPECT_EQ(daemon_relay_agent("/usr/bin/bsprun", "/tmp/a'b"), "");
  EXPECT_EQ(daemon_relay_agent("/usr/bin/bsprun (deleted)", "/tmp/cfg"), "");
  EXPECT_EQ(daemon_relay_agent("/usr/bin/bsprun", ""), "");
}

TEST(DaemonRelay, TheGoneLineNamesItsHostAndNoOtherLineIsTaken) {
  const std::string line = daemon_gone_line("emu3");
  EXPECT_EQ(daemon_gone_host(line), "emu3");
  EXPECT_EQ(daemon_gone_host(line.substr(0, line.size() - 1)), "emu3");
  std::string hostile = line;
  hostile.replace(hostile.find("emu3"), 4, "emu3; rm -rf x");
  EXPECT_EQ(daemon_gone_host(hostile), "");
  EXPECT_EQ(daemon_gone_host("bspg: the MPI daemon on emu3 is gone"), "");
  EXPECT_EQ(daemon_gone_host("[emu1] " + line), "");

  MpirunStderr filter;
  std::string shown = filter.feed("some output\n" + line + daemon_gone_line("emu5"));
  shown += filter.finish();
  EXPECT_EQ(filter.daemons_gone(), (std::vector<std::string>{"emu3", "emu5"}));
  EXPECT_NE(shown.find(line), std::string::npos);  // the user sees it too
}

using bspg::test::listen_local;
using bspg::test::read_within;

// Whether something listens on 127.0.0.1:port.
bool port_answers(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  const bool ok = connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  close(fd);
  return ok;
}

// Whether a process has `path` open (the relay keeps its stderr).
bool someone_holds(const std::string& path) {
  for (const auto& process : std::filesystem::directory_iterator("/proc")) {
    const std::string name = process.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::error_code ec;
    for (const auto& fd : std::filesystem::directory_iterator(process.path() / "fd", ec)) {
      std::error_code link_ec;
      if (std::filesystem::read_symlink(fd.path(), link_ec) == path) return true;
    }
  }
  return false;
}

bool file_has(const std::string& path, const std::string& text) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str().find(text) != std::string::npos;
}

// The agent run against a stand-in for ssh and for mpirun on this machine: the stand-in ssh
// (-G: the host's ssh port; otherwise a "daemon" left behind, as prted --daemonize is) connects
// to the port its command's prte_hnp_uri names, says hello, and ends its connection once the
// file `end` exists. host_gone: the host's ssh port is closed before that.
struct RelayRun {
  std::string dir, end, err;
  int hnp = -1, hnp_port = 0, ssh = -1, ssh_port = 0, link = -1;
  std::thread sshd;
  std::atomic<bool> sshd_gone{false};

  // The host's sshd ends: its port refuses from now on.
  void stop_sshd() {
    sshd_gone = true;
    if (sshd.joinable()) sshd.join();
  }
  pid_t agent = -1;

  // ssh_fails: the stand-in ssh ends with status 5 before any daemon starts; the agent's status
  // goes to *agent_status, and nothing more is done.
  void start(bool ssh_fails = false, int* agent_status = nullptr) {
    char templ[] = "/tmp/bspg-relay-test-XXXXXX";
    ASSERT_NE(mkdtemp(templ), nullptr);
    dir = templ;
    end = dir + "/end";
    err = dir + "/err";
    hnp = listen_local(&hnp_port);
    ssh = listen_local(&ssh_port);
    ASSERT_GE(hnp, 0);
    ASSERT_GE(ssh, 0);
    // The host's sshd: greets every connection, until it is gone.
    sshd = std::thread([this] {
      while (!sshd_gone) {
        pollfd p{ssh, POLLIN, 0};
        if (poll(&p, 1, 20) != 1) continue;
        const int c = accept(ssh, nullptr, nullptr);
        if (c < 0) continue;
        send(c, "SSH-2.0-test\r\n", 14, MSG_NOSIGNAL);
        close(c);
      }
      close(ssh);
    });
    {
      std::ofstream fake(dir + "/ssh");
      fake << "#!/bin/bash\n"
              "if [ \"$1\" = -G ]; then echo \"hostname 127.0.0.1\"; echo \"port "
           << ssh_port
           << "\"; exit 0; fi\n"
              "port=$(printf '%s' \"$*\" | sed -n 's|.*tcp://127.0.0.1:\\([0-9]*\\):.*|\\1|p')\n"
              "[ -n \"$port\" ] || { echo \"no relay port in: $*\" >&2; exit 3; }\n"
              "[ -e '"
           << dir << "/fail' ] && exit 5\n"
              "echo \"$port\" > '"
           << dir
           << "/relay-port'\n"
              "( echo $BASHPID > '"
           << dir
           << "/daemon-pid'; exec 3<>/dev/tcp/127.0.0.1/$port; printf hello >&3;\n"
              "  while [ ! -e '"
           << end << "' ] && [ -d '" << dir
           << "' ]; do sleep 0.02; done; exec 3>&- ) </dev/null >/dev/null 2>&1 &\n"
              "exit 0\n";
    }
    chmod((dir + "/ssh").c_str(), 0755);
    if (ssh_fails) std::ofstream(dir + "/fail") << "";
    const std::string path = dir + ":" + (std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin");
    const std::string command =
        daemon_command("prterun-t-1@0.0;tcp://127.0.0.1:" + std::to_string(hnp_port) + ":8");
    agent = fork();
    if (agent == 0) {
      close(hnp);  // mpirun's and the host's sockets are not the agent's
      close(ssh);
      setenv("PATH", path.c_str(), 1);
      const int e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(e, STDERR_FILENO);
      std::string me = "bsprun", option = kDaemonRelayOption, config = dir + "/config",
                  host = "emu9", word = command;
      char* argv[] = {me.data(), option.data(), config.data(), host.data(), word.data(), nullptr};
      _exit(run_daemon_relay(5, argv));
    }
    int status = 0;
    ASSERT_EQ(waitpid(agent, &status, 0), agent);
    ASSERT_TRUE(WIFEXITED(status));
    if (agent_status) {
      *agent_status = WEXITSTATUS(status);
      return;
    }
    ASSERT_EQ(WEXITSTATUS(status), 0) << "the agent reports the daemon started";
    pollfd p{hnp, POLLIN, 0};
    ASSERT_EQ(poll(&p, 1, 10000), 1) << "the relay connects to mpirun's port";
    link = accept(hnp, nullptr, nullptr);
    ASSERT_GE(link, 0);
    char hello[16] = {};
    ASSERT_EQ(read_within(link, hello, 5, 5000), 5);
    EXPECT_EQ(std::string(hello, 5), "hello");
  }

  ~RelayRun() {
    if (link >= 0) close(link);
    if (hnp >= 0) close(hnp);
    stop_sshd();
    if (dir.empty()) return;
    // The stand-in daemon ends once `end` exists: waited for, so that no test leaves it behind.
    std::ofstream(end).flush();
    pid_t daemon = 0;
    std::ifstream(dir + "/daemon-pid") >> daemon;
    for (int i = 0; daemon > 0 && i < 100 && kill(daemon, 0) == 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::system(("rm -rf '" + dir + "'").c_str());
  }
};

TEST(DaemonRelay, ADaemonThatEndsWhereItsHostAnswersEndsItsConnectionToMpirun) {
  RelayRun run;
  ASSERT_NO_FATAL_FAILURE(run.start());
  std::ofstream(run.end) << "";
  char buffer[16];
  EXPECT_EQ(read_within(run.link, buffer, sizeof buffer, 5000), 0)
      << "mpirun sees the daemon's connection end, as without the relay";
  EXPECT_FALSE(file_has(run.err, "is gone"));
}

TEST(DaemonRelay, SshsFailureIsTheAgentsStatusAndNoRelayStays) {
  RelayRun run;
  int status = -1;
  ASSERT_NO_FATAL_FAILURE(run.start(true, &status));
  EXPECT_EQ(status, 5) << "mpirun learns that the daemon did not start, as from ssh itself";
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  bool gone = false;
  while (!gone && std::chrono::steady_clock::now() < until) {
    gone = !someone_holds(run.err);
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(gone) << "the relay ended with ssh's failure";
}

TEST(DaemonRelay, OnlyTheDaemonsConnectionIsRelayed) {
  RelayRun run;
  ASSERT_NO_FATAL_FAILURE(run.start());
  int relay_port = 0;
  std::ifstream(run.dir + "/relay-port") >> relay_port;
  ASSERT_GT(relay_port, 0);
  EXPECT_FALSE(port_answers(relay_port)) << "a second connection would be relayed";
  char buffer[16];
  EXPECT_EQ(read_within(run.link, buffer, sizeof buffer, 300), -2) << "the daemon's link stays";
}

TEST(DaemonRelay, ADaemonGoneWithItsHostLeavesMpirunsSideOpenAndSaysSo) {
  RelayRun run;
  ASSERT_NO_FATAL_FAILURE(run.start());
  run.stop_sshd();  // the host's sshd is gone: its port refuses
  std::ofstream(run.end) << "";
  char buffer[16];
  EXPECT_EQ(read_within(run.link, buffer, sizeof buffer, 2000), -2)
      << "mpirun's side stays open: to mpirun the host is silent";
  EXPECT_TRUE(file_has(run.err, daemon_gone_line("emu9")));
  // What mpirun sends meanwhile goes nowhere, and the relay ends once mpirun closes its side.
  EXPECT_EQ(send(run.link, "x", 1, MSG_NOSIGNAL), 1);
  EXPECT_TRUE(someone_holds(run.err)) << "the relay (its stderr is that file) is there";
  close(run.link);
  run.link = -1;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  bool ended = false;
  while (!ended && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ended = !someone_holds(run.err);
  }
  EXPECT_TRUE(ended) << "the relay ended with mpirun's side";
}

}  // namespace
