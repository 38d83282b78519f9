// Probing at scale, as a user runs it: bsprun --dry-run against hundreds of silent candidates
// (tests/launcher/hosts/silent_hosts: they accept TCP and never answer, like hung machines).
// Checks the wall time, threads, sockets, CPU and wake-ups of bsprun, and how it meets local
// limits (address space, open files). Runs in a network namespace of its own (netns.sh).
#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kCandidates = 300;

// What one bsprun run did, seen from outside.
struct BsprunRun {
  int exit_status = -1;
  bool killed = false;  // ran past the bound and was killed
  double wall_s = 0, cpu_s = 0;
  long wakeups = 0;  // context switches (all threads)
  int peak_threads = 0, peak_sockets = 0;
  std::string output;  // stdout and stderr
};

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

int threads_of(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string key;
  int value = 0;
  while (status >> key)
    if (key == "Threads:" && status >> value) return value;
  return 0;
}

int sockets_of(pid_t pid) {
  const std::string dir = "/proc/" + std::to_string(pid) + "/fd";
  DIR* fds = opendir(dir.c_str());
  if (fds == nullptr) return 0;
  int count = 0;
  char target[64];
  while (dirent* entry = readdir(fds)) {
    const ssize_t n = readlink((dir + "/" + entry->d_name).c_str(), target, sizeof target - 1);
    if (n > 7 && std::string(target, 7) == "socket:") ++count;
  }
  closedir(fds);
  return count;
}

// Runs bsprun with these arguments and limits (0 = unchanged), killing it after bound_s.
BsprunRun run_bsprun(const std::vector<std::string>& args, rlim_t address_space = 0,
                     rlim_t open_files = 0, double bound_s = 60) {
  BsprunRun run;
  char pattern[] = "/tmp/bspg-probe-scale-out-XXXXXX";
  const int out = mkstemp(pattern);
  const auto start = Clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    if (address_space != 0) {
      const rlimit limit{address_space, address_space};
      setrlimit(RLIMIT_AS, &limit);
    }
    if (open_files != 0) {
      const rlimit limit{open_files, open_files};
      setrlimit(RLIMIT_NOFILE, &limit);
    }
    dup2(out, 1);
    dup2(out, 2);
    std::vector<char*> argv{const_cast<char*>(BSPG_BSPRUN)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(BSPG_BSPRUN, argv.data());
    _exit(127);
  }
  for (;;) {
    int status = 0;
    rusage usage{};
    if (wait4(pid, &status, WNOHANG, &usage) == pid) {
      run.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
      run.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      run.cpu_s = usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6 + usage.ru_stime.tv_sec +
                  usage.ru_stime.tv_usec / 1e6;
      run.wakeups = usage.ru_nvcsw + usage.ru_nivcsw;
      break;
    }
    run.peak_threads = std::max(run.peak_threads, threads_of(pid));
    run.peak_sockets = std::max(run.peak_sockets, sockets_of(pid));
    if (!run.killed && std::chrono::duration<double>(Clock::now() - start).count() > bound_s) {
      kill(pid, SIGKILL);
      run.killed = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  close(out);
  run.output = read_text(pattern);
  std::filesystem::remove(pattern);
  return run;
}

int count_lines(const std::string& text, const std::string& pattern) {
  const std::regex re(pattern);
  std::istringstream lines(text);
  std::string line;
  int n = 0;
  while (std::getline(lines, line)) n += std::regex_search(line, re) ? 1 : 0;
  return n;
}

std::string summary(const BsprunRun& run) {
  std::ostringstream text;
  text << "exit " << run.exit_status << (run.killed ? " (killed)" : "") << ", wall " << run.wall_s
       << " s, cpu " << run.cpu_s << " s, wake-ups " << run.wakeups << ", threads "
       << run.peak_threads << ", sockets " << run.peak_sockets
       << "\n---- output (first 40 lines):\n";
  std::istringstream lines(run.output);
  std::string line;
  for (int i = 0; i < 40 && std::getline(lines, line); ++i) text << line << "\n";
  return text.str();
}

class SilentCandidates : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    char pattern[] = "/tmp/bspg-probe-scale-XXXXXX";
    dir_ = mkdtemp(pattern);
    hostfile_ = dir_ + "/silent.yaml";
    listener_ = fork();
    if (listener_ == 0) {  // it refuses to run outside a network namespace of its own (netns.sh)
      const std::string log = dir_ + "/silent_hosts.log";
      freopen(log.c_str(), "w", stderr);
      execl(BSPG_SILENT_HOSTS, BSPG_SILENT_HOSTS, std::to_string(kCandidates).c_str(),
            hostfile_.c_str(), nullptr);
      _exit(127);
    }
    for (int i = 0; i < 200 && !std::filesystem::exists(hostfile_) &&
                    waitpid(listener_, nullptr, WNOHANG) == 0;
         ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (!std::filesystem::exists(hostfile_))
      setup_error_ =
          "silent_hosts did not write " + hostfile_ + ": " + read_text(dir_ + "/silent_hosts.log");
  }

  static void TearDownTestSuite() {
    if (listener_ > 0) {
      kill(listener_, SIGKILL);
      waitpid(listener_, nullptr, 0);
      listener_ = 0;
    }
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  void SetUp() override { ASSERT_TRUE(setup_error_.empty()) << setup_error_; }

  // bsprun --dry-run on the silent candidates, each probe bounded by timeout_s.
  static std::vector<std::string> dry_run(double timeout_s, std::vector<std::string> extra = {}) {
    std::vector<std::string> args{"--dry-run",
                                  "-p",
                                  "1",
                                  "--hostfile",
                                  hostfile_,
                                  "--probe-timeout",
                                  std::to_string(timeout_s)};
    args.insert(args.end(), extra.begin(), extra.end());
    args.push_back("/bin/true");
    return args;
  }

  static int timed_out_rows(const BsprunRun& run, const std::string& timeout) {
    return count_lines(run.output, "^silent[0-9]+ .*not used: timed out after " + timeout + " s$");
  }

  static inline std::string dir_, hostfile_, setup_error_;
  static inline pid_t listener_ = 0;
};

TEST_F(SilentCandidates, AllAtOnceFromAFewIdleThreads) {
  const BsprunRun run = run_bsprun(dry_run(2));
  const std::string info = summary(run);
  std::printf("%d silent candidates, timeout 2 s: %s", kCandidates,
              info.substr(0, info.find('\n') + 1).c_str());
  EXPECT_EQ(run.exit_status, 125) << info;
  EXPECT_EQ(timed_out_rows(run, "2.0"), kCandidates) << info;
  EXPECT_LT(run.wall_s, 3 * 2.0) << info;  // about one timeout: all probed at once
  // A fixed thread budget: the caller, at most 3 more poll loops, at most 4 name lookups.
  EXPECT_LE(run.peak_threads, 8) << info;
  EXPECT_GE(run.peak_sockets, kCandidates * 9 / 10) << info;  // the default fan-out holds them all
  // Idle while waiting: no polling in slices. Setting up 300 sessions costs some CPU; waiting
  // for them costs (almost) none. Old one-thread-per-host probing woke 50 times per second each.
  EXPECT_LT(run.cpu_s, 0.3) << info;
  EXPECT_LT(run.wakeups, 3000) << info;
}

TEST_F(SilentCandidates, FullFanoutUnderAnAddressSpaceLimit) {
  // ulimit -v 1000000, as on many login nodes.
  const BsprunRun run = run_bsprun(dry_run(2), 1000000ULL * 1024, 0, 20);
  const std::string info = summary(run);
  EXPECT_EQ(run.exit_status, 125) << info;
  EXPECT_EQ(timed_out_rows(run, "2.0"), kCandidates) << info;
  EXPECT_LT(run.wall_s, 3 * 2.0) << info;
  EXPECT_EQ(count_lines(run.output, "bad_alloc|internal error|not probed|fewer at a time"), 0)
      << info;
}

TEST_F(SilentCandidates, FanoutBoundsTheProbesOpenAtOnce) {
  const BsprunRun run = run_bsprun(dry_run(1, {"--fanout", "100"}));
  const std::string info = summary(run);
  EXPECT_EQ(run.exit_status, 125) << info;
  EXPECT_EQ(timed_out_rows(run, "1.0"), kCandidates) << info;
  EXPECT_LE(run.peak_sockets, 100 + 2) << info;  // the probes, and perhaps the ssh agent
  EXPECT_GE(run.peak_sockets, 50) << info;
  EXPECT_GE(run.wall_s, 2.9) << info;  // three rounds of silent hosts, each a full timeout
  EXPECT_LT(run.wall_s, 15.0) << info;
}

TEST_F(SilentCandidates, OpenFileLimitIsReportedOnceAsThisMachinesProblem) {
  const BsprunRun run = run_bsprun(dry_run(1), 0, 128);
  const std::string info = summary(run);
  EXPECT_EQ(run.exit_status, 125) << info;
  EXPECT_EQ(count_lines(run.output,
                        "^bsprun: probing at most [0-9]+ hosts at a time: the open-file limit"),
            1)
      << info;
  // Every host gets its real result; none is blamed for this machine's limit.
  EXPECT_EQ(timed_out_rows(run, "1.0"), kCandidates) << info;
  EXPECT_EQ(count_lines(run.output, "[Tt]oo many open files|not probed"), 0) << info;
  EXPECT_LT(run.wall_s, 20.0) << info;
}

}  // namespace
