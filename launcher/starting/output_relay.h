// output_relay.h - the job's output on its way to bsprun's stdout and stderr: OutputFiles follows
// the files the starter writes each process's output to, OutputRelay passes it on in whole lines
// (tagged with --tag-output) and mpirun's own through its filters. Only runner.cpp includes it.
#ifndef BSPG_LAUNCHER_OUTPUT_RELAY_H
#define BSPG_LAUNCHER_OUTPUT_RELAY_H

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "message_lines.h"
#include "mpirun_messages.h"
#include "output_lines.h"
#include "runner.h"
#include "stopping.h"  // Clock
#include "untrusted.h"
#include "write_all.h"

namespace bspg::launcher::runner_internal {

// output_relay.cpp.
void empty_directory(const std::string& dir);

// The files the starter writes each process's output to, followed as they grow: Open MPI 4's
// (--output-filename DIR) DIR/<job>/rank.<r>/{stdout,stderr,stddiag}, MPICH's (-outfile-pattern)
// DIR/{stdout,stderr}.<r>. Each is unlinked once open (the starter keeps its own descriptor), so
// that nothing of it stays on disk, whatever ends bsprun. The first job (MPICH's, or Open MPI's
// lowest number) is the BSP job or master mode's master; a later one is a master's spawn, whose
// rank k is BSP pid k+1.
class OutputFiles {
 public:
  OutputFiles(std::string dir, LineAssembler& out, LineAssembler& err)
      : dir_(std::move(dir)), out_(out), err_(err) {}
  ~OutputFiles() {
    for (auto& f : files_) close(f.fd);
  }
  OutputFiles(const OutputFiles&) = delete;
  OutputFiles& operator=(const OutputFiles&) = delete;

  // Reads what the files gained since (a bounded amount each, so that bsprun stays responsive);
  // whether anything was read.
  bool poll(Clock::time_point now) {
    find_files();
    bool got = false;
    for (auto& f : files_) got |= read_from(f, now);
    return got;
  }
  // After the run: everything, then the files are removed.
  void finish() {
    while (poll(Clock::now())) {
    }
    for (auto& f : files_) close(f.fd);
    files_.clear();
    empty_directory(dir_);
  }

 private:
  struct Followed {
    int fd = -1;
    off_t offset = 0;
    off_t freed = 0;  // bytes given back to the file system (read already)
    int job = 0;
    int rank = 0;
    bool is_stdout = true;
  };

  static bool number_after(const std::string& name, const std::string& prefix, int& value) {
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) return false;
    char* end = nullptr;
    const long v = std::strtol(name.c_str() + prefix.size(), &end, 10);
    if (*end != '\0' || v < 0 || v > 1000000000) return false;
    value = static_cast<int>(v);
    return true;
  }

  static std::vector<std::string> entries(const std::string& dir) {
    std::vector<std::string> names;
    if (DIR* d = opendir(dir.c_str())) {
      while (dirent* entry = readdir(d)) names.emplace_back(entry->d_name);
      closedir(d);
    }
    return names;
  }

  void follow(const std::string& path, int job, int rank, bool is_stdout) {
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    unlink(path.c_str());
    Followed f;
    f.fd = fd;
    f.job = job;
    f.rank = rank;
    f.is_stdout = is_stdout;
    files_.push_back(f);
    first_job_ = std::min(first_job_, job);
  }

  void find_files() {
    for (const auto& job_name : entries(dir_)) {
      int job = 0, rank = 0;
      if (number_after(job_name, "stdout.", rank) || number_after(job_name, "stderr.", rank)) {
        follow(dir_ + "/" + job_name, 0, rank, job_name[3] == 'o');
        continue;
      }
      if (!number_after(job_name, "", job)) continue;
      const std::string job_dir = dir_ + "/" + job_name;
      for (const auto& rank_name : entries(job_dir)) {
        int rank = 0;
        if (!number_after(rank_name, "rank.", rank)) continue;
        for (const char* stream : {"stdout", "stderr", "stddiag"})
          follow(job_dir + "/" + rank_name + "/" + stream, job, rank,
                 std::strcmp(stream, "stdout") == 0);
      }
    }
  }

  bool read_from(Followed& f, Clock::time_point now) {
    static char buffer[1 << 16];
    const int pid = f.job == first_job_ ? f.rank : f.rank + 1;
    bool got = false;
    for (int chunk = 0; chunk < 64; ++chunk) {
      const ssize_t n = pread(f.fd, buffer, sizeof buffer, f.offset);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got = true;
      f.offset += n;
      (f.is_stdout ? out_ : err_)
          .add(pid, std::string_view(buffer, static_cast<std::size_t>(n)), now);
    }
    // What was read need not stay on disk (a job may print gigabytes).
    if (f.offset - f.freed >= (off_t{1} << 22) &&
        fallocate(f.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, f.offset) == 0)
      f.freed = f.offset;
    return got;
  }

  std::string dir_;
  LineAssembler& out_;
  LineAssembler& err_;
  std::vector<Followed> files_;
  int first_job_ = INT_MAX;
};

// The job's output on its way to bsprun's stdout and stderr (JobOutput): each process's in whole
// lines where the starter keeps them apart; mpirun's own messages through MpirunStderr and
// MpirunStdout.
class OutputRelay {
 public:
  OutputRelay(const JobOutput& how, MpirunStderr& filter, MpirunStdout& out_filter)
      : how_(how),
        filter_(filter),
        out_filter_(out_filter),
        out_lines_([this](int pid, std::string_view text) { to_stdout(pid, text); }),
        err_lines_([this](int pid, std::string_view text) { to_stderr(pid, text); }),
        holding_(how.processes_to_start > 0) {
    if (how.separation.how == OutputSeparation::kFiles)
      files_ = std::make_unique<OutputFiles>(how.separation.directory, out_lines_, err_lines_);
  }

  // mpirun's own stderr (and, where nothing is separated, the processes' as the starter forwards
  // it).
  void from_stderr(std::string_view bytes) { take_mpirun_stderr(filter_.feed(bytes)); }
  // Nothing came on mpirun's stderr for a while: what the filter held back.
  void flush_stderr() { take_mpirun_stderr(filter_.flush()); }

  // mpirun's own stdout (and, where nothing is separated, the processes' as the starter forwards
  // it).
  void from_stdout(std::string_view bytes) { take_mpirun_stdout(out_filter_.feed(bytes)); }
  // Nothing came on mpirun's stdout for a while: what the filter held as a block's possible
  // beginning.
  void flush_stdout() { take_mpirun_stdout(out_filter_.flush()); }
  // Whether bsprun's stdout is gone (a write to it failed).
  bool stdout_gone() const { return stdout_gone_; }

  // The output files' news, and lines that waited long enough; whether files had news.
  bool poll(Clock::time_point now) {
    const bool got = files_ && files_->poll(now);
    out_lines_.flush_waiting(now);
    err_lines_.flush_waiting(now);
    release_once_started();
    write_out();
    return got;
  }

  // The starter printed text while not every process had started, and none started within
  // the bound since the text or the last start (JobOutput::processes_to_start).
  bool start_overdue(Clock::time_point now) const {
    return holding_ && !dropping_ && starter_spoke_at_ &&
           now - *starter_spoke_at_ > seconds(how_.start_bound_s);
  }
  int processes_started() const { return filter_.processes_started(); }
  // What the starter said before the start, in one line (its frames left out, shown escaped, at
  // most 500 bytes); it is not shown otherwise.
  std::string held_in_one_line() {
    std::vector<std::string> lines;
    std::istringstream held(held_err_ + held_out_);
    for (std::string line; std::getline(held, line);) lines.push_back(line);
    held_err_.clear();
    held_out_.clear();
    // The job is being stopped: what the starter says from now on adds nothing to this line.
    dropping_ = true;
    return untrusted::excerpt(messages_internal::joined(lines), 500);
  }

  // mpirun's stderr has ended: everything else, unfinished lines as they are.
  void finish() {
    if (files_) files_->finish();
    out_lines_.finish();
    err_lines_.finish();
    out_.append(out_filter_.finish());
    release_held();
    write_out();
  }

 private:
  std::string prefix(int pid) const { return "[" + std::to_string(pid) + "] "; }

  void release_once_started() {
    if (!holding_ || dropping_) return;
    const int started = filter_.processes_started();
    if (started >= how_.processes_to_start) return release_held();
    // A process started: the starter is at work, and the bound counts from here.
    if (started > started_seen_ && starter_spoke_at_) starter_spoke_at_ = Clock::now();
    started_seen_ = started;
  }

  void take_mpirun_stdout(const std::string& passed) {
    release_once_started();
    if (!passed.empty() && hold(held_out_, passed)) return;
    if (!passed.empty()) {
      out_.append(passed);
      mpirun_mid_line_ = passed.back() != '\n';
    }
    write_out();
  }

  void take_mpirun_stderr(const std::string& passed) {
    release_once_started();
    if (!passed.empty() && hold(held_err_, passed)) return;
    err_.append(passed);
    write_out();
  }

  // Until every process has said it started (release_once_started, called first), what mpirun
  // itself prints waits in `held`; whether it did.
  bool hold(std::string& held, const std::string& passed) {
    if (dropping_) return true;
    if (!holding_) return false;
    if (!starter_spoke_at_) starter_spoke_at_ = Clock::now();
    // A starter that prints without end before the start: its first megabyte is enough.
    if (held.size() < (std::size_t{1} << 20)) held += passed;
    return true;
  }

  void release_held() {
    if (!holding_ || dropping_) return;
    holding_ = false;
    err_.insert(0, held_err_);
    if (!held_out_.empty()) {
      out_.insert(0, held_out_);
      if (out_.size() == held_out_.size()) mpirun_mid_line_ = held_out_.back() != '\n';
    }
    held_err_.clear();
    held_out_.clear();
  }

  // What a chunk of input gave goes out in one write per stream (not one per line).
  void write_out() {
    if (!out_.empty() && !write_all(STDOUT_FILENO, out_)) stdout_gone_ = true;
    if (!err_.empty()) write_all(STDERR_FILENO, err_);
    out_.clear();
    err_.clear();
  }

  void to_stdout(int pid, std::string_view text) {
    if (!how_.tag_with_pid) {
      out_.append(text);
      return;
    }
    const std::string tag = prefix(pid);
    // A process's output starts on a line of its own, after an unfinished line of mpirun's too.
    if (mpirun_mid_line_) out_ += '\n';
    mpirun_mid_line_ = false;
    while (!text.empty()) {
      const std::size_t newline = text.find('\n');
      const std::size_t line = newline == std::string_view::npos ? text.size() : newline + 1;
      out_.append(tag).append(text.substr(0, line));
      // An unfinished line given up on ends here: the next text, of whichever process, starts
      // on a line of its own with its prefix.
      if (newline == std::string_view::npos) out_ += '\n';
      text.remove_prefix(line);
    }
  }

  // The processes' stderr goes through the filter as before (it hears the library's words about
  // checkpoints); with --tag-output a line the filter passes as it is gets its prefix.
  void to_stderr(int pid, std::string_view text) {
    if (!how_.tag_with_pid) {
      err_.append(filter_.feed(text));
      return;
    }
    while (!text.empty()) {
      const std::size_t newline = text.find('\n');
      const std::size_t length = newline == std::string_view::npos ? text.size() : newline + 1;
      // An unfinished line given up on is ended here, as on stdout (and so that the filter,
      // which waits for whole lines, passes it on now).
      std::string line(text.substr(0, length));
      if (newline == std::string_view::npos) line += '\n';
      const std::string passed = filter_.feed(line);
      if (passed == line) err_.append(prefix(pid));
      err_.append(passed);
      text.remove_prefix(length);
    }
  }

  JobOutput how_;
  MpirunStderr& filter_;
  MpirunStdout& out_filter_;
  bool mpirun_mid_line_ = false;  // mpirun's own stdout ended inside a line
  bool stdout_gone_ = false;
  LineAssembler out_lines_;
  LineAssembler err_lines_;
  std::unique_ptr<OutputFiles> files_;
  std::string out_, err_;  // for bsprun's stdout and stderr, written by write_out
  // Before every process started: what mpirun printed, held (JobOutput::processes_to_start).
  bool holding_;
  bool dropping_ = false;  // held_in_one_line said it: the starter's text goes no further
  std::string held_err_, held_out_;
  std::optional<Clock::time_point> starter_spoke_at_;
  int started_seen_ = 0;
};

}  // namespace bspg::launcher::runner_internal

#endif
