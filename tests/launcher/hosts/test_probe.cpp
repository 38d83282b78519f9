// Probing and staging against emulated hosts (tests/launcher/emuhosts.sh): real sshd, real SSH.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>
#include <string>

#include "hosts.h"

using namespace bspg::hosts;

namespace {

struct Shell {
  int status;
  std::string output;
};

// Runs a shell command, returning its exit status and combined output.
Shell sh(const std::string& command) {
  Shell result{-1, ""};
  FILE* pipe = popen(("(" + command + ") 2>&1").c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) result.output.append(buffer, n);
  const int status = pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

constexpr int kHosts =
    17;  // 1-4: the load pool; 1-16: concurrency; 15, 16: lying and hanging; 17: taken down
const char* const kLoads[kHosts] = {"0.1", "2.0", "0.5", "3.5", "1.0", "1.0", "1.0", "1.0", "1.0",
                                    "1.0", "1.0", "1.0", "1.0", "1.0", "1.0", "1.0", "1.0"};

class EmulatedHosts : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (geteuid() != 0) {
      skip_reason_ = "emulated hosts need root (sshd on port 22, mount namespaces)";
      return;
    }
    if (sh("unshare --mount --uts --propagation private true").status != 0) {
      skip_reason_ = "unshare --mount --uts does not work here";
      return;
    }
    if (access("/usr/sbin/sshd", X_OK) != 0) {
      skip_reason_ = "/usr/sbin/sshd is not installed (openssh-server)";
      return;
    }
    char pattern[] = "/tmp/bspg-probe-test-XXXXXX";
    if (mkdtemp(pattern) == nullptr) {
      setup_error_ = "mkdtemp failed";
      return;
    }
    dir_ = pattern;
    // Stops the hosts even if this process dies without TearDownTestSuite (crash, kill).
    sh("setsid sh -c 'while kill -0 " + std::to_string(getpid()) +
       " 2>/dev/null; do sleep 1; done; " + BSPG_EMUHOSTS + " stop " + dir_ + "; rm -rf " + dir_ +
       "' </dev/null >/dev/null 2>&1 &");
    std::string command = std::string(BSPG_EMUHOSTS) + " start " + dir_;
    for (const char* load : kLoads) command += std::string(" ") + load;
    // Sessions on the hosts find bspg-hostinfo (the build's, or a test's stand-in in DIR/bin).
    std::filesystem::create_directories(dir_ + "/bin");
    command = "EMU_PATH=" + dir_ + "/bin:" + BSPG_HOSTINFO_DIR + ":/usr/local/bin:/usr/bin:/bin " +
              command;
    const Shell started = sh(command);
    if (started.status != 0) {
      setup_error_ = "emuhosts.sh start failed: " + started.output;
      return;
    }
    try {
      hosts_ = read_hostfile(dir_ + "/hosts.yaml");
    } catch (const std::exception& e) {
      setup_error_ = e.what();
    }
  }

  static void TearDownTestSuite() {
    if (dir_.empty()) return;
    sh(std::string(BSPG_EMUHOSTS) + " stop " + dir_);
    std::filesystem::remove_all(dir_);
    dir_.clear();
  }

  void SetUp() override {
    if (!skip_reason_.empty()) GTEST_SKIP() << skip_reason_;
    ASSERT_TRUE(setup_error_.empty()) << setup_error_;
    ASSERT_EQ(hosts_.size(), static_cast<size_t>(kHosts));
  }

  static HostSpec host(int i) { return hosts_.at(i - 1); }  // 1-based, like emuhosts.sh
  static std::string emu(const std::string& args) {
    return std::string(BSPG_EMUHOSTS) + " " + args;
  }

  // A fresh ed25519 key pair in the test folder; returns the private key's path.
  static std::string new_key(const std::string& name) {
    const std::string path = dir_ + "/" + name;
    std::filesystem::remove(path);
    std::filesystem::remove(path + ".pub");
    EXPECT_EQ(sh("ssh-keygen -q -t ed25519 -N '' -f " + path).status, 0);
    return path;
  }

  // A stand-in for bspg-hostinfo on every host (ahead of the real one on the PATH) for the test's
  // duration.
  struct FakeHostinfo {
    explicit FakeHostinfo(const std::string& script) : path(dir_ + "/bin/bspg-hostinfo") {
      std::ofstream(path) << "#!/bin/sh\n" << script << "\n";
      chmod(path.c_str(), 0755);
    }
    ~FakeHostinfo() { std::filesystem::remove(path); }
    const std::string path;
  };

  // Host i's /proc/loadavg holds `text` for the test's duration.
  struct LoadavgText {
    LoadavgText(int i, const std::string& text)
        : path(dir_ + "/emu" + std::to_string(i) + "/loadavg") {
      saved = read_text(path);
      std::ofstream(path) << text;  // truncated in place: the bind mount is on this inode
    }
    ~LoadavgText() { std::ofstream(path) << saved; }
    const std::string path;
    std::string saved;
  };

  // Host i's sshd pid and mount namespace (from emuhosts.sh's pids file).
  static std::pair<std::string, std::string> sshd_of(int i) {
    std::istringstream lines(read_text(dir_ + "/pids"));
    std::string number, pid, ns;
    while (lines >> number >> pid >> ns)
      if (number == std::to_string(i)) return {pid, ns};
    return {"", ""};
  }

  // Every process on host i but its listening sshd: sessions and what they run ("pid: command").
  static std::vector<std::string> processes_on(int i) {
    const auto [sshd, ns] = sshd_of(i);
    std::vector<std::string> found;
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
      const std::string pid = entry.path().filename();
      if (pid.find_first_not_of("0123456789") != std::string::npos || pid == sshd) continue;
      std::error_code error;
      if (std::filesystem::read_symlink(entry.path() / "ns" / "mnt", error).string() != ns || error)
        continue;
      std::string command = read_text(entry.path() / "cmdline");
      std::replace(command.begin(), command.end(), '\0', ' ');
      found.push_back(pid + ": " + command);
    }
    return found;
  }

  // Waits up to `seconds` for host i to run nothing but its sshd; returns what is left.
  static std::vector<std::string> left_on(int i, double seconds) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    std::vector<std::string> left = processes_on(i);
    while (!left.empty() && std::chrono::steady_clock::now() < until) {
      usleep(100000);
      left = processes_on(i);
    }
    return left;
  }

  static std::string joined(const std::vector<std::string>& lines) {
    std::string text;
    for (const auto& line : lines) text += line + "\n";
    return text;
  }

  static inline std::string dir_, skip_reason_, setup_error_;
  static inline std::vector<HostSpec> hosts_;
};

TEST_F(EmulatedHosts, ReportsEachHostsLoadAndName) {
  ProbeOptions opt;
  const std::vector<HostSpec> pool{host(1), host(2), host(3), host(4)};
  const auto results = probe_hosts(pool, opt);
  ASSERT_EQ(results.size(), 4u);
  const double loads[] = {0.1, 2.0, 0.5, 3.5};
  for (int i = 0; i < 4; ++i) {
    const ProbeResult& r = results[i];
    SCOPED_TRACE(pool[i].name);
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(r.error, "");
    EXPECT_EQ(r.host.name, pool[i].name);
    EXPECT_EQ(r.hostname, "emu" + std::to_string(i + 1));
    EXPECT_DOUBLE_EQ(r.load1, loads[i]);
    EXPECT_DOUBLE_EQ(r.load5, loads[i]);
    EXPECT_DOUBLE_EQ(r.load15, loads[i]);
    EXPECT_EQ(r.cores, static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)));
    EXPECT_GT(r.mem_available_kb, 0);
    EXPECT_GT(r.elapsed_s, 0.0);
    EXPECT_LT(r.elapsed_s, opt.timeout_ms / 1000.0);
  }
}

TEST_F(EmulatedHosts, CoreCountComesFromBspgHostinfoWhereInstalled) {
  std::vector<ProbeResult> results;
  {
    const FakeHostinfo fake("[ \"$1\" = --cores ] && echo 7");  // a count no machine here has
    results = probe_hosts({host(5)}, ProbeOptions{});
  }
  ASSERT_TRUE(results[0].ok) << results[0].error;
  EXPECT_EQ(results[0].cores, 7);
  results = probe_hosts({host(5)}, ProbeOptions{});  // the real bspg-hostinfo (hwloc)
  ASSERT_TRUE(results[0].ok) << results[0].error;
  EXPECT_EQ(results[0].cores,
            std::stoi(sh(std::string(BSPG_HOSTINFO_DIR) + "/bspg-hostinfo --cores").output));
}

TEST_F(EmulatedHosts, SeesALoadChange) {
  ASSERT_EQ(sh(emu("setload " + dir_ + " 3 6.25")).status, 0);
  auto results = probe_hosts({host(3)}, ProbeOptions{});
  ASSERT_TRUE(results[0].ok) << results[0].error;
  EXPECT_DOUBLE_EQ(results[0].load1, 6.25);
  ASSERT_EQ(sh(emu("setload " + dir_ + " 3 0.5")).status, 0);
  results = probe_hosts({host(3)}, ProbeOptions{});
  ASSERT_TRUE(results[0].ok) << results[0].error;
  EXPECT_DOUBLE_EQ(results[0].load1, 0.5);
}

TEST_F(EmulatedHosts, HostThatIsDownIsDroppedWithinTheTimeout) {
  ASSERT_EQ(sh(emu("down " + dir_ + " 17")).status, 0);
  ProbeOptions opt;
  opt.timeout_ms = 3000;
  const auto results = probe_hosts({host(1), host(17)}, opt);
  EXPECT_TRUE(results[0].ok) << results[0].error;
  EXPECT_FALSE(results[1].ok);
  EXPECT_TRUE(results[1].error == "connection refused" ||
              results[1].error == "timed out after 3.0 s")
      << results[1].error;
  EXPECT_LT(results[1].elapsed_s, 3.5);
}

TEST_F(EmulatedHosts, SilentHostTimesOut) {
  // Accepts TCP connections (kernel backlog) but never says a word, like a hung machine.
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(listen(listener, 16), 0);
  socklen_t length = sizeof address;
  ASSERT_EQ(getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length), 0);

  HostSpec silent = host(1);
  silent.name = "silent";
  silent.address = "127.0.0.1";
  silent.port = ntohs(address.sin_port);
  ProbeOptions opt;
  opt.timeout_ms = 1000;
  const auto results = probe_hosts({silent}, opt);
  close(listener);
  EXPECT_FALSE(results[0].ok);
  EXPECT_EQ(results[0].error, "timed out after 1.0 s");
  EXPECT_GE(results[0].elapsed_s, 0.9);
  EXPECT_LT(results[0].elapsed_s, 2.0);
}

TEST_F(EmulatedHosts, WrongKeyIsRefused) {
  HostSpec spec = host(1);
  spec.identity = new_key("stranger_id");
  const auto results = probe_hosts({spec}, ProbeOptions{});
  EXPECT_FALSE(results[0].ok);
  EXPECT_EQ(results[0].error, "authentication refused for user root");
}

TEST_F(EmulatedHosts, MissingIdentityFileIsNamed) {
  HostSpec spec = host(1);
  spec.identity = dir_ + "/no_such_key";
  const auto results = probe_hosts({spec}, ProbeOptions{});
  EXPECT_FALSE(results[0].ok);
  EXPECT_EQ(results[0].error, "identity file " + dir_ + "/no_such_key is not readable");
}

TEST_F(EmulatedHosts, ChangedHostKeyIsRefusedEvenWhenUnknownKeysAreAccepted) {
  const std::string other = new_key("impostor_host_key");
  const std::string known = dir_ + "/changed_known_hosts";
  std::ofstream(known) << host(1).address << " " << read_text(other + ".pub");
  HostSpec spec = host(1);
  spec.known_hosts = known;
  for (bool accept : {false, true}) {
    ProbeOptions opt;
    opt.accept_unknown_host_keys = accept;
    const auto results = probe_hosts({spec}, opt);
    EXPECT_FALSE(results[0].ok);
    EXPECT_EQ(results[0].error, "host key CHANGED (possible impersonation) per " + known)
        << "accept=" << accept;
  }
}

TEST_F(EmulatedHosts, UnknownHostIsRefusedUnlessAccepted) {
  const std::string known = dir_ + "/empty_known_hosts";
  std::ofstream{known};
  HostSpec spec = host(2);
  spec.known_hosts = known;
  auto results = probe_hosts({spec}, ProbeOptions{});
  EXPECT_FALSE(results[0].ok);
  EXPECT_EQ(results[0].error, "unknown host key (not in " + known + ")");

  ProbeOptions accept;
  accept.accept_unknown_host_keys = true;
  results = probe_hosts({spec}, accept);
  ASSERT_TRUE(results[0].ok) << results[0].error;
  EXPECT_EQ(results[0].hostname, "emu2");
  // Accepted keys are recorded, so the next probe (and Open MPI's ssh) trusts the host.
  EXPECT_TRUE(contains(read_text(known), spec.address)) << read_text(known);
  results = probe_hosts({spec}, ProbeOptions{});
  EXPECT_TRUE(results[0].ok) << results[0].error;
}

TEST_F(EmulatedHosts, SixteenCandidatesAreProbedConcurrently) {
  std::vector<HostSpec> candidates(hosts_.begin(), hosts_.begin() + 16);
  ProbeOptions opt;
  opt.timeout_ms = 20000;  // 16 logins on 2 shared cores: generous, the point is the overlap
  const auto start = std::chrono::steady_clock::now();
  const auto results = probe_hosts(candidates, opt);
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  double sum = 0, slowest = 0;
  for (const ProbeResult& r : results) {
    EXPECT_TRUE(r.ok) << r.host.name << ": " << r.error;
    sum += r.elapsed_s;
    slowest = std::max(slowest, r.elapsed_s);
  }
  std::printf("16 probes: wall %.3f s, slowest probe %.3f s, sum of probe times %.3f s\n", wall,
              slowest, sum);
  EXPECT_LT(wall, 0.5 * sum);
  EXPECT_LT(wall, slowest + 0.5);
}

TEST_F(EmulatedHosts, StagingCopiesOnceAndKeepsTheExecBit) {
  const std::string program = dir_ + "/staged-hello";
  const auto write_program = [&](const std::string& greeting) {
    std::ofstream(program) << "#!/bin/sh\necho " << greeting << " from $(uname -n)\n";
    chmod(program.c_str(), 0755);
  };
  write_program("staged-v1");
  std::vector<std::string> folders;
  const auto cleanup = [&] {
    for (const auto& folder : folders)
      std::filesystem::remove_all(folder);  // same file system as the host
  };

  const StageResult first = stage_executable(host(1), program, ProbeOptions{});
  ASSERT_TRUE(first.ok) << first.error;
  folders.push_back(std::filesystem::path(first.remote_path).parent_path());
  EXPECT_TRUE(first.copied);
  EXPECT_TRUE(contains(first.remote_path, "/.cache/bspg/stage/")) << first.remote_path;
  EXPECT_EQ(std::filesystem::path(first.remote_path).filename(), "staged-hello");
  const Shell ran = sh("ssh -F " + dir_ + "/ssh_config emu1 " + first.remote_path);
  EXPECT_EQ(ran.status, 0) << ran.output;
  EXPECT_EQ(ran.output, "staged-v1 from emu1\n");

  const StageResult second = stage_executable(host(1), program, ProbeOptions{});
  ASSERT_TRUE(second.ok) << second.error;
  EXPECT_FALSE(second.copied);
  EXPECT_EQ(second.remote_path, first.remote_path);

  write_program("staged-v2");  // new content: a new cache entry
  const StageResult third = stage_executable(host(1), program, ProbeOptions{});
  ASSERT_TRUE(third.ok) << third.error;
  folders.push_back(std::filesystem::path(third.remote_path).parent_path());
  EXPECT_TRUE(third.copied);
  EXPECT_NE(third.remote_path, first.remote_path);
  EXPECT_EQ(sh("ssh -F " + dir_ + "/ssh_config emu1 " + third.remote_path).output,
            "staged-v2 from emu1\n");

  const StageResult missing = stage_executable(host(1), dir_ + "/no-such-program", ProbeOptions{});
  EXPECT_FALSE(missing.ok);
  EXPECT_TRUE(contains(missing.error, "no-such-program")) << missing.error;
  cleanup();
}

TEST_F(EmulatedHosts, GeneratedSshConfigReachesTheHostsLikeTheProbe) {
  const std::string config = dir_ + "/generated_ssh_config";
  std::ofstream(config) << ssh_config_for({host(1), host(2)});
  const Shell one = sh("timeout 20 ssh -F " + config + " emu2 'uname -n; cat /proc/loadavg'");
  EXPECT_EQ(one.status, 0) << one.output;
  EXPECT_EQ(one.output, "emu2\n2.0 2.0 2.0 1/100 12345\n");
#if defined(BSPG_TEST_MPICH)
  // Hydra runs ssh through a program without arguments: a script that adds the configuration.
  const std::string launcher = dir_ + "/ssh-launcher";
  std::ofstream(launcher) << "#!/bin/sh\nexec ssh -F '" << config << "' \"$@\"\n";
  chmod(launcher.c_str(), 0700);
  const Shell mpi = sh("timeout 60 " BSPG_MPIRUN " -launcher ssh -launcher-exec " + launcher +
                       " -hosts emu1:1,emu2:1 -n 2 uname -n > " + dir_ + "/mpi.out");
#elif defined(BSPG_TEST_OPENMPI5)
  // Open MPI 5's run-time (PRRTE) has parameters of its own; the hosts have networks of their own.
  const Shell mpi =
      sh("timeout 60 " BSPG_MPIRUN " --allow-run-as-root --prtemca plm_ssh_agent 'ssh -F " +
         config + "' --host emu1:1,emu2:1 -n 2 uname -n > " + dir_ + "/mpi.out");
#else
  const Shell mpi =
      sh("timeout 60 " BSPG_MPIRUN
         " --allow-run-as-root --oversubscribe --mca plm_rsh_agent 'ssh -F " +
         config +
         "' --host emu1:1,emu2:1 -np 2 --mca oob_tcp_if_include lo --mca btl_tcp_if_include lo "
         "--mca btl tcp,self uname -n > " +
         dir_ + "/mpi.out");
#endif
  EXPECT_EQ(sh("grep -x 'emu[0-9]*' " + dir_ + "/mpi.out | sort").output, "emu1\nemu2\n")
      << read_text(dir_ + "/mpi.out");
  EXPECT_EQ(mpi.status, 0) << mpi.output;
}

TEST_F(EmulatedHosts, ImpossibleLoadIsRefusedNamingTheValue) {
  for (const std::string load : {"-100", "1e308", "nan", "inf", "4194305"}) {
    const LoadavgText lie(15, load + " " + load + " " + load + " 1/100 12345\n");
    const auto results = probe_hosts({host(15)}, ProbeOptions{});
    EXPECT_FALSE(results[0].ok) << load;
    EXPECT_EQ(results[0].error, "impossible load average '" + load + "' in /proc/loadavg");
  }
  const LoadavgText garbage(15, "\x1b[2Jhigh\n");  // the terminal sees it escaped, not executed
  const auto results = probe_hosts({host(15)}, ProbeOptions{});
  EXPECT_EQ(results[0].error, "unreadable load average '\\x1b[2Jhigh' in /proc/loadavg");
}

TEST_F(EmulatedHosts, ImpossibleCoreCountIsRefusedNamingTheValue) {
  for (const std::string cores : {"100000000", "0", "-4", "2.5"}) {
    const FakeHostinfo lie("echo " + cores);
    const auto results = probe_hosts({host(15)}, ProbeOptions{});
    EXPECT_FALSE(results[0].ok) << cores;
    EXPECT_EQ(results[0].error,
              "impossible core count '" + cores + "' (bspg-hostinfo --cores, nproc)");
  }
}

TEST_F(EmulatedHosts, TimedOutProbeLeavesNothingRunningOnTheHost) {
  ASSERT_EQ(joined(left_on(16, 5)), "");  // nothing from earlier tests
  ProbeOptions opt;
  opt.timeout_ms = 2000;
  std::vector<ProbeResult> results;
  {
    const FakeHostinfo hang("exec sleep 300");  // the probe's command hangs on the host
    results = probe_hosts({host(16)}, opt);
  }
  EXPECT_EQ(results[0].error, "timed out after 2.0 s");
  EXPECT_EQ(joined(left_on(16, 3)), "");
}

TEST_F(EmulatedHosts, HangInTheLoginShellsStartUpIsEndedToo) {
  // The probe's own command never starts: only the SSH signal request can end the session. sshd
  // refuses signals to root's sessions (no privilege separation after a root login), so host 16
  // gets a user of its own, in its mount namespace alone: an /etc/passwd line (uid 65534) whose
  // ~/.bashrc hangs.
  const std::string home = dir_ + "/probe-user", passwd = dir_ + "/passwd";
  std::filesystem::create_directories(home);
  std::ofstream(home + "/.bashrc") << "sleep 300\n";
  std::ofstream(passwd) << read_text("/etc/passwd")
                        << "bspgprobe:x:65534:65534:bspg probe test:" << home << ":/bin/bash\n";
  ASSERT_EQ(sh("chown -R 65534:65534 " + home + " && chmod 0711 " + dir_).status,
            0);  // sshd reads keys as the user
  const std::string sshd = sshd_of(16).first;
  ASSERT_EQ(sh("nsenter -t " + sshd + " -m -r mount --bind " + passwd + " /etc/passwd").status, 0);
  HostSpec spec = host(16);
  spec.user = "bspgprobe";
  ProbeOptions opt;
  opt.timeout_ms = 2000;
  const auto results = probe_hosts({spec}, opt);
  const std::vector<std::string> left = left_on(16, 3);
  sh("nsenter -t " + sshd + " -m -r umount /etc/passwd; chmod 0700 " + dir_);
  EXPECT_EQ(results[0].error, "timed out after 2.0 s");
  EXPECT_EQ(joined(left), "");
}

TEST_F(EmulatedHosts, ProgramIsCheckedInTheSameCommand) {
  const std::string folder = dir_ + "/programs";
  std::filesystem::create_directories(folder + "/a directory");
  const auto make = [&](const std::string& name, mode_t mode) {
    const std::string path = folder + "/" + name;
    std::ofstream(path) << "#!/bin/sh\n";
    chmod(path.c_str(), mode);
    return path;
  };
  // Every byte a file name can hold (all but NUL and '/'): quoting must not let any through.
  std::string every_byte;
  for (int c = 1; c < 256; ++c)
    if (c != '/') every_byte += static_cast<char>(c);
  // Run as commands, these would create PWNED in the login directory.
  const std::string hostile = "$(touch PWNED)`touch PWNED`';touch PWNED;'\"";
  const std::pair<std::string, ProgramStatus> cases[] = {
      {make("prog", 0755), ProgramStatus::kOk},
      {make(every_byte, 0755), ProgramStatus::kOk},
      {make(hostile, 0755), ProgramStatus::kOk},
      {make("plain", 0644), ProgramStatus::kNotExecutable},
      {folder + "/a directory", ProgramStatus::kNotRegularFile},
      {folder + "/missing", ProgramStatus::kNotFound},
      {folder + "/" + hostile + "-missing", ProgramStatus::kNotFound},
  };
  const bool pwned_before = std::filesystem::exists("/root/PWNED");
  const std::string log = dir_ + "/emu1/sshd.log";
  const auto sessions = [&] {
    return std::stoi(sh("grep -c 'Starting session: command' " + log).output);
  };
  for (const auto& [path, status] : cases) {
    ProbeOptions opt;
    opt.program = path;
    const int before = sessions();
    const auto results = probe_hosts({host(1)}, opt);
    ASSERT_TRUE(results[0].ok) << results[0].error;
    EXPECT_EQ(results[0].program_status, status) << describe(status) << " for " << path;
    EXPECT_EQ(results[0].hostname, "emu1");
    EXPECT_EQ(sessions() - before, 1);  // the same command as the figures: no extra round trip
  }
  if (!pwned_before) {
    EXPECT_FALSE(std::filesystem::exists("/root/PWNED"));
    std::filesystem::remove("/root/PWNED");
  }
  EXPECT_EQ(probe_hosts({host(1)}, ProbeOptions{})[0].program_status, ProgramStatus::kUnchecked);
  std::filesystem::remove_all(folder);
}

TEST_F(EmulatedHosts, SlowNameLookupIsBoundedByTheTimeoutAndHoldsUpNoOneElse) {
  // In a child with a mount namespace of its own: /etc/resolv.conf names a DNS server on
  // loopback (this test's network namespace) that never answers, so looking a name up blocks
  // for 10 s (2 tries of 5 s).
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  const pid_t child = fork();
  if (child == 0) {
    close(pipe_fds[0]);
    const std::string resolv = dir_ + "/resolv.conf";
    std::ofstream(resolv) << "nameserver 127.0.0.1\noptions timeout:5 attempts:2\n";
    const int dns = socket(AF_INET, SOCK_DGRAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(53);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (unshare(CLONE_NEWNS) != 0 || mount("", "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        mount(resolv.c_str(), "/etc/resolv.conf", nullptr, MS_BIND, nullptr) != 0 ||
        bind(dns, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0)
      _exit(2);
    HostSpec slow = host(1);
    slow.name = "slow";
    slow.address = "slow-dns-candidate.example";
    ProbeOptions opt;
    opt.timeout_ms = 2000;
    const auto start = std::chrono::steady_clock::now();
    const auto results = probe_hosts({slow, host(1)}, opt);
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const std::string report = results[0].error + "\n" + (results[1].ok ? "ok" : results[1].error) +
                               "\n" + std::to_string(wall) + "\n";
    [[maybe_unused]] const ssize_t n = write(pipe_fds[1], report.data(), report.size());
    _exit(0);  // not waiting for the lookup, which blocks on for seconds
  }
  close(pipe_fds[1]);
  std::string report;
  char buffer[512];
  ssize_t n;
  while ((n = read(pipe_fds[0], buffer, sizeof buffer)) > 0)
    report.append(buffer, static_cast<size_t>(n));
  close(pipe_fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "child set-up failed, status " << status;
  std::istringstream lines(report);
  std::string slow_error, other, wall;
  std::getline(lines, slow_error);
  std::getline(lines, other);
  std::getline(lines, wall);
  EXPECT_EQ(slow_error, "timed out after 2.0 s (looking up slow-dns-candidate.example)");
  EXPECT_EQ(other, "ok");
  EXPECT_LT(std::stod(wall), 4.0);  // the lookup alone takes 10 s
}

}  // namespace
