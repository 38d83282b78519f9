// profile_run.cpp - see profile_run.h.
#include "profile_run.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <random>

#include "bspprof.h"
#include "job_lock.h"
#include "raw_format.h"
#include "runner.h"
#include "safe_paths.h"
#include "say.h"
#include "untrusted.h"

namespace bspg::launcher {

namespace {

std::string directory;  // absolute; "" when not profiling
int next_attempt = 0;
bool only_shown = false;      // --show: the variables are shown, nothing is written or gathered
std::uint32_t job_token = 0;  // profile::kJobTokenVariable: this job's files carry it
JobLocks directory_lock;      // held from prepare_profile to bsprun's end
// Where the records of the profile DIR held before this job wait (DIR/raw.previous) until this
// job has written records of its own; "" when nothing was set aside.
std::string set_aside;

// DIR/raw/job: the job id whose records raw holds, so that --resume goes on only with its own.
constexpr const char* kJobFile = "job";
// DIR/.bsprun.lock: one bsprun at a time per profile directory.
constexpr const char* kLockFile = ".bsprun.lock";

constexpr std::size_t kMostRecordBytes = std::size_t{1} << 36;  // 64 GiB: a file larger is not ours

// The attempt number of a record file's name, or -1 for another name.
int attempt_of(const std::string& name) {
  int attempt = 0, section = 0, pid = 0;
  return profile::parse_record_file_name(name, attempt, section, pid) ? attempt : -1;
}

// The shell word for `text` in single quotes (no newline can be in it: --profile refuses those).
std::string sh_quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Reads exactly n bytes from fd (a pipe) into out, or fails at the deadline or at its end.
bool read_exactly(int fd, char* out, std::size_t n,
                  std::chrono::steady_clock::time_point deadline) {
  while (n > 0) {
    const auto left = deadline - std::chrono::steady_clock::now();
    const int wait_ms = static_cast<int>(std::max<long long>(
        0, std::chrono::duration_cast<std::chrono::milliseconds>(left).count()));
    pollfd p{fd, POLLIN, 0};
    const int ready = poll(&p, 1, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return false;
    const ssize_t got = read(fd, out, n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    out += got;
    n -= static_cast<std::size_t>(got);
  }
  return true;
}

// One line ("NAME SIZE\n") of the gathering script's output; false at its end.
bool read_line(int fd, std::string& line, std::chrono::steady_clock::time_point deadline) {
  line.clear();
  char c;
  while (read_exactly(fd, &c, 1, deadline)) {
    if (c == '\n') return true;
    if (line.size() > 200) return false;
    line += c;
  }
  return false;
}

// Takes one host's files from the script's output: each is checked (name, size, the header's
// magic and job token) and copied in pieces as it comes, never through a link; another job's
// file (an earlier one's, left on that host) is read past.
std::string take_files(int fd, std::chrono::steady_clock::time_point deadline) {
  const std::string raw = directory + "/raw/";
  std::vector<char> piece(1 << 20);
  std::string line;
  while (read_line(fd, line, deadline)) {
    const std::size_t space = line.find(' ');
    const std::string name = line.substr(0, space);
    char* end = nullptr;
    const unsigned long long size =
        space == std::string::npos ? 0 : std::strtoull(line.c_str() + space + 1, &end, 10);
    if (attempt_of(name) < 0 || end == nullptr || *end != '\0' || size > kMostRecordBytes)
      return "unexpected answer '" + line + "'";
    profile::FileHeader header{};
    const std::size_t head = std::min<std::size_t>(size, sizeof header);
    if (!read_exactly(fd, reinterpret_cast<char*>(&header), head, deadline))
      return "the answer ended within " + name;
    const bool ours = head == sizeof header &&
                      std::memcmp(header.magic, profile::kMagic, sizeof header.magic) == 0 &&
                      header.job_token == job_token;
    int out = -1;
    const std::string path = raw + name;
    if (ours) {
      out = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
      if (out < 0 || write(out, &header, head) != static_cast<ssize_t>(head)) {
        const std::string why = std::strerror(errno);
        if (out >= 0) close(out);
        return "cannot write " + path + ": " + why;
      }
    }
    for (unsigned long long left = size - head; left > 0;) {
      const std::size_t n =
          static_cast<std::size_t>(std::min<unsigned long long>(left, piece.size()));
      if (!read_exactly(fd, piece.data(), n, deadline)) {
        if (out >= 0) close(out);
        return "the answer ended within " + name;
      }
      if (out >= 0 && write(out, piece.data(), n) != static_cast<ssize_t>(n)) {
        const std::string why = std::strerror(errno);
        close(out);
        return "cannot write " + path + ": " + why;
      }
      left -= n;
    }
    if (out >= 0 && close(out) != 0) return "cannot write " + path + ": " + std::strerror(errno);
  }
  return "";
}

// The highest attempt number among the record files (a*.bspprof) in raw, a directory opened
// without following a link; -1 when it holds none (or cannot be read).
int last_attempt_in(const std::string& raw) {
  const int fd = open(raw.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return -1;
  DIR* dir = fdopendir(fd);
  if (dir == nullptr) {
    close(fd);
    return -1;
  }
  int last = -1;
  while (const dirent* entry = readdir(dir)) last = std::max(last, attempt_of(entry->d_name));
  closedir(dir);
  return last;
}

// The job id DIR/raw/job names; "" when there is none (or it is not a small regular file).
std::string job_of_records(const std::string& raw) {
  std::string text, ignored;
  if (!untrusted::read_regular_file(raw + "/" + kJobFile, 4096, text, ignored)) return "";
  text = text.substr(0, text.find('\n'));
  return text;
}

}  // namespace

void show_profile(const Options& opt, std::vector<std::string>& exports) {
  if (opt.profile_dir.empty()) return;
  std::error_code error;
  const std::filesystem::path dir = std::filesystem::absolute(opt.profile_dir, error);
  directory = (error ? std::filesystem::path(opt.profile_dir) : dir).lexically_normal();
  if (directory.size() > 1 && directory.back() == '/') directory.pop_back();
  only_shown = true;
  next_attempt = 0;
  exports.push_back(std::string(profile::kProfileVariable) + "=" + directory);
  exports.push_back(std::string(profile::kJobTokenVariable) + "=1");
}

std::string prepare_profile(const Options& opt, std::vector<std::string>& exports) {
  if (opt.profile_dir.empty()) return "";
  std::error_code error;
  const std::filesystem::path dir = std::filesystem::absolute(opt.profile_dir, error);
  if (error) return "--profile " + opt.profile_dir + ": " + error.message();
  // Made 0700 where missing, and refused before the job starts where it is not this user's own
  // (bspprof writes nothing into a directory that others can write).
  const safe_paths::OpenedDirectory own =
      safe_paths::open_own_directory(dir.string(), "the profile directory", true);
  if (!own.ok()) return "--profile: " + own.why();
  close(own.fd);
  std::filesystem::create_directories(dir / "raw", error);
  struct stat st;
  if (error || lstat((dir / "raw").c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return "--profile " + opt.profile_dir + ": cannot make the directory " +
           (dir / "raw").string() +
           (error ? ": " + error.message() : " (something else is in its place)");
  directory = dir.lexically_normal().string();
  if (directory.size() > 1 && directory.back() == '/') directory.pop_back();
  next_attempt = 0;
  bool busy = false;
  const std::string lock_problem =
      directory_lock.take(directory + "/" + kLockFile, lock_holder_text(opt.job_id), false, busy);
  if (!lock_problem.empty()) {
    const std::string shown = directory;
    directory.clear();
    if (busy)
      return "--profile " + shown + ": the directory is " + lock_problem +
             "; give this job a directory of its own";
    return "--profile " + shown + ": cannot lock the directory: " + lock_problem;
  }
  const std::string raw = directory + "/raw";
  // --resume goes on with the records of its own job; an unrelated job's are never merged in.
  // Any other job's records (and the profile made of them) stay as they are until this job has
  // written records of its own: a job that never starts leaves the directory as it was.
  if (opt.resume && job_of_records(raw) == opt.job_id) {
    next_attempt = last_attempt_in(raw) + 1;
  } else if (last_attempt_in(raw) >= 0) {
    set_aside = directory + "/raw.previous";
    std::filesystem::remove_all(set_aside, error);  // a killed bsprun's, older than raw
    if (error || rename(raw.c_str(), set_aside.c_str()) != 0 || mkdir(raw.c_str(), 0700) != 0) {
      const std::string why = error ? error.message() : std::strerror(errno);
      set_aside.clear();
      return "--profile: cannot set the earlier job's records aside (" + raw + "): " + why;
    }
  }
  {
    std::string why;
    const int fd = safe_paths::create_file(raw + "/" + kJobFile, why, 0644);
    if (fd < 0) return "--profile: " + why;
    const std::string line = opt.job_id + "\n";
    const bool written = write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
    close(fd);
    if (!written) return "--profile: cannot write " + raw + "/" + kJobFile;
  }
  exports.push_back(std::string(profile::kProfileVariable) + "=" + directory);
  std::random_device random;
  // Never 0: that is what a process started without bsprun reads (and it clears DIR/raw then).
  job_token = (static_cast<std::uint32_t>(random()) & 0x7fffffffu) | 1u;
  exports.push_back(std::string(profile::kJobTokenVariable) + "=" + std::to_string(job_token));
  return "";
}

bool profiling() { return !directory.empty() && !only_shown; }

void gather_profile(const std::vector<std::string>& hosts, const std::vector<std::string>& silent,
                    const ScriptCommand& command) {
  if (directory.empty() || only_shown) return;
  for (const std::string& host : silent)
    say("profile: the records of " + host +
        "'s processes stay there (it does not answer); they are missing from the profile");
  const std::string marker = ".bsprun-" + std::to_string(job_token);
  // Here: the mark by which a host sees that its DIR is this one.
  const std::string mark_path = directory + "/raw/" + marker;
  if (const int fd = open(mark_path.c_str(), O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
      fd >= 0)
    close(fd);
  const std::string script =
      "cd -- " + sh_quoted(directory + "/raw") +
      " 2>/dev/null || exit 0\n"
      "[ -e " +
      marker +
      " ] && exit 0\n"
      "for f in a*.bspprof; do\n"
      "  [ -f \"$f\" ] && [ ! -L \"$f\" ] || continue\n"
      "  printf '%s %s\\n' \"$f\" \"$(wc -c < \"$f\" | tr -d ' ')\" && cat -- \"$f\"\n"
      "done\n";
  for (const std::string& host : hosts) {
    if (std::find(silent.begin(), silent.end(), host) != silent.end()) continue;
    std::vector<std::string> argv = command.argv(host);
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    int in[2] = {-1, -1}, out[2];
    if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) {
      say(std::string("profile: cannot bring the records of other hosts here: ") +
          std::strerror(errno));
      if (in[0] >= 0) close(in[0]), close(in[1]);
      break;
    }
    const pid_t pid = fork();
    if (pid == 0) {
      dup2(in[0], STDIN_FILENO);
      dup2(out[1], STDOUT_FILENO);
      execvp(args[0], args.data());
      _exit(127);
    }
    close(in[0]);
    close(out[1]);
    std::string problem;
    if (pid < 0) {
      problem = "cannot run " + command.through + ": " + std::strerror(errno);
      close(in[1]);
    } else {
      const ssize_t ignored =
          write(in[1], script.data(), script.size());  // far below a pipe's size
      (void)ignored;
      close(in[1]);
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
      problem = take_files(out[0], deadline);
      if (!problem.empty()) kill(pid, SIGKILL);
      int status = 0;
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      if (problem.empty() && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
        problem = command.through + " failed (status " +
                  std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status)) +
                  ")";
    }
    close(out[0]);
    if (!problem.empty())
      say("profile: could not bring the records of " + host + " here: " + problem +
          "; its processes are missing from the profile");
  }
  unlink(mark_path.c_str());
}

const std::string& profile_directory() { return directory; }

std::string next_profile_attempt() {
  if (directory.empty()) return "";
  return std::string(profile::kAttemptVariable) + "=" + std::to_string(next_attempt++);
}

int finish_profile() {
  if (directory.empty() || only_shown) return 0;
  const std::string raw = directory + "/raw";
  if (!set_aside.empty()) {
    std::error_code error;
    if (last_attempt_in(raw) < 0) {
      // The job wrote nothing (it never started, or ended before bsp_begin): the earlier
      // profile stays as it was, and is not made again.
      std::filesystem::remove_all(raw, error);
      if (!error && rename(set_aside.c_str(), raw.c_str()) == 0) {
        say("profile: this job wrote no records; " + directory +
            " keeps the earlier profile as it was");
        return profile::kNoProfile;
      }
      say("profile: this job wrote no records; the earlier job's records are in " + set_aside);
      return profile::kNoProfile;
    }
    std::filesystem::remove_all(set_aside, error);
  }
  profile::MergeOptions merge;
  merge.dir = directory;
  std::cerr.flush();
  std::fflush(nullptr);
  // The merge (and gnuplot) run in a process group of their own, so that a stop signal (held
  // by bsprun: hold_stop_signals) ends them and bsprun at once, however large the profile.
  const pid_t child = fork();
  if (child < 0) return profile::merge_profile(merge, std::cerr, std::cerr);
  if (child == 0) {
    setpgid(0, 0);
    const int status = profile::merge_profile(merge, std::cerr, std::cerr);
    std::cerr.flush();
    std::fflush(nullptr);
    _exit(status);  // not exit: bsprun's own at-exit work (its locks, its files) stays its own
  }
  setpgid(child, child);
  // A job stopped by a signal is merged too (its supersteps are what the user wants to see),
  // but bsprun ends within seconds of the signal, as it does at every stage.
  using Clock = std::chrono::steady_clock;
  const bool stopping = signal_to_end_with() != 0;
  const Clock::time_point deadline = Clock::now() + std::chrono::seconds(2);
  for (;;) {
    int status = 0;
    const pid_t done = waitpid(child, &status, WNOHANG);
    if (done == child) return WIFEXITED(status) ? WEXITSTATUS(status) : profile::kCannotWrite;
    if (done < 0 && errno != EINTR) return profile::kCannotWrite;
    const int sig = pending_stop_signal();
    if (sig != 0 || (stopping && Clock::now() > deadline)) {
      kill(-child, SIGKILL);
      while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
      }
      const char* name = sigabbrev_np(sig != 0 ? sig : signal_to_end_with());
      say(std::string("profile: stopped by SIG") + (name != nullptr ? name : "?") +
          " while merging; " + directory + "/raw keeps the records: `bspprof " + directory +
          "` makes the profile");
      return profile::kCannotWrite;
    }
    poll(nullptr, 0, 20);
  }
}

}  // namespace bspg::launcher
