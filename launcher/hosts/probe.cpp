// probe_hosts: bounded fan-out over non-blocking SSH sessions. A few poll loops (threads), each
// driving its share of the open probes; name lookups, which block, run on a few threads of their
// own. Threads and memory do not grow with the number of hosts, only with the fan-out's sockets.
#include <dirent.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <iostream>
#include <memory>
#include <mutex>
#include <new>
#include <system_error>
#include <thread>

#include "hosts.h"
#include "probe_answer.h"
#include "ssh_connection.h"
#include "untrusted.h"

namespace bspg::hosts {

const char* describe(ProgramStatus status) {
  switch (status) {
    case ProgramStatus::kOk:
      return "present and executable";
    case ProgramStatus::kNotFound:
      return "not found";
    case ProgramStatus::kNotRegularFile:
      return "not a regular file";
    case ProgramStatus::kNotExecutable:
      return "not executable";
    case ProgramStatus::kUnchecked:
    default:
      return "not checked";
  }
}

namespace {

using detail::Address;
using detail::Clock;
using detail::Connection;
using detail::LocalError;

constexpr int kMaxLoops = 4;  // poll loops: enough for the key exchanges of thousands of hosts
constexpr size_t kHostsPerLoop = 64;  // fewer hosts than this per loop do not need another thread
constexpr int kLookupThreads = 4;     // concurrent name lookups
constexpr int kSpareFiles = 32;  // descriptors left for ssh config, keys, known_hosts, the agent

// Problems of this machine, each kind said once, whichever thread meets it. Never throws: it is
// used where memory ran out.
class LocalReport {
 public:
  enum Kind { kFiles, kMemory, kThreads, kOther, kKinds };

  explicit LocalReport(const std::function<void(const std::string&)>& sink) : sink_(sink) {}

  // make_line() builds the line only when it is said.
  template <typename MakeLine>
  void say(Kind kind, MakeLine make_line) noexcept {
    try {
      std::lock_guard<std::mutex> lock(mutex_);
      if (said_[kind]) return;
      said_[kind] = true;
      const std::string line = make_line();
      if (sink_) {
        sink_(line);
      } else {
        std::cerr << program_invocation_short_name << ": " << line << std::endl;
      }
    } catch (...) {  // nothing left to say it with
    }
  }

  static Kind kind_of(const char* cause) {
    if (std::strstr(cause, "open files") != nullptr) return kFiles;
    if (std::strstr(cause, "memory") != nullptr) return kMemory;
    if (std::strstr(cause, "thread") != nullptr) return kThreads;
    return kOther;
  }

 private:
  std::function<void(const std::string&)> sink_;
  std::mutex mutex_;
  bool said_[kKinds] = {};
};

int count_open_files() {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return 16;  // a guess; the spare descriptors cover it
  int count = -1;                 // the directory's own descriptor
  while (readdir(dir) != nullptr) ++count;
  closedir(dir);
  return std::max(0, count - 2);  // "." and ".."
}

std::string limit_text(rlim_t limit) {
  return limit == RLIM_INFINITY ? "unlimited" : std::to_string(limit);
}

// The open-file limit (RLIMIT_NOFILE) for the fan-out: the soft limit is raised toward the hard one
// while probing when the fan-out needs it, and the fan-out is fitted to what that allows.
class OpenFileBudget {
 public:
  OpenFileBudget(int wanted, LocalReport& report) {
    fanout_ = wanted;
    if (getrlimit(RLIMIT_NOFILE, &original_) != 0) return;
    const int in_use = count_open_files();
    const rlim_t need = static_cast<rlim_t>(in_use) + static_cast<rlim_t>(wanted) + kSpareFiles;
    rlim_t soft = original_.rlim_cur;
    if (soft != RLIM_INFINITY && soft < need) {
      rlimit raised = original_;
      raised.rlim_cur =
          original_.rlim_max == RLIM_INFINITY ? need : std::min(original_.rlim_max, need);
      if (raised.rlim_cur > soft && setrlimit(RLIMIT_NOFILE, &raised) == 0) {
        raised_ = true;
        soft = raised.rlim_cur;
      }
    }
    if (soft == RLIM_INFINITY || soft >= need) return;
    const long long room = static_cast<long long>(soft) - in_use - kSpareFiles;
    fanout_ = static_cast<int>(std::clamp<long long>(room, 1, wanted));
    report.say(LocalReport::kFiles, [&] {
      return "probing at most " + std::to_string(fanout_) +
             " hosts at a time: the open-file limit (ulimit -n) is " + limit_text(soft) +
             ", hard limit " + limit_text(original_.rlim_max) + ", with " + std::to_string(in_use) +
             " files already open";
    });
  }
  ~OpenFileBudget() {
    if (raised_) setrlimit(RLIMIT_NOFILE, &original_);
  }
  OpenFileBudget(const OpenFileBudget&) = delete;
  OpenFileBudget& operator=(const OpenFileBudget&) = delete;
  int fanout() const { return fanout_; }

 private:
  rlimit original_{};
  bool raised_ = false;
  int fanout_ = 1;
};

// Answers of name lookups for one poll loop, with an eventfd that wakes it.
struct Mailbox {
  struct Answer {
    size_t index;
    std::vector<Address> addresses;
    std::string error;  // the host's problem
    std::string local;  // or this machine's
  };
  explicit Mailbox(int fd) : wake_fd(fd) {}
  ~Mailbox() { close(wake_fd); }
  void post(Answer answer) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      answers.push_back(std::move(answer));
    }
    const uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = write(wake_fd, &one, sizeof one);
  }
  std::vector<Answer> take() {
    uint64_t count;
    [[maybe_unused]] const ssize_t n = read(wake_fd, &count, sizeof count);
    std::lock_guard<std::mutex> lock(mutex);
    return std::move(answers);
  }
  const int wake_fd;
  std::mutex mutex;
  std::vector<Answer> answers;
};

// Name lookups (getaddrinfo blocks, for seconds when DNS is slow) on a few threads. They are
// detached: probing does not wait for a lookup that its deadline gave up on.
class Lookups {
 public:
  Lookups() : shared_(std::make_shared<Shared>()) {}
  ~Lookups() {
    std::lock_guard<std::mutex> lock(shared_->mutex);
    shared_->closed = true;
    shared_->jobs.clear();
    shared_->wake.notify_all();
  }
  Lookups(const Lookups&) = delete;
  Lookups& operator=(const Lookups&) = delete;

  // Looks host:port up and posts the answer for `index`; throws LocalError when no thread can.
  void ask(std::shared_ptr<Mailbox> box, size_t index, const std::string& host, unsigned port) {
    std::lock_guard<std::mutex> lock(shared_->mutex);
    shared_->jobs.push_back(Job{std::move(box), index, host, port});
    if (shared_->threads < kLookupThreads && shared_->idle == 0) {
      try {
        std::thread(work, shared_).detach();
        ++shared_->threads;
      } catch (const std::system_error& e) {
        if (shared_->threads == 0) {
          shared_->jobs.pop_back();
          throw LocalError("cannot start a thread for name lookups (" + std::string(e.what()) +
                           ")");
        }
      }
    }
    shared_->wake.notify_one();
  }

 private:
  struct Job {
    std::shared_ptr<Mailbox> box;
    size_t index;
    std::string host;
    unsigned port;
  };
  struct Shared {
    std::mutex mutex;
    std::condition_variable wake;
    std::deque<Job> jobs;
    int threads = 0, idle = 0;
    bool closed = false;
  };

  static void work(std::shared_ptr<Shared> shared) {
    std::unique_lock<std::mutex> lock(shared->mutex);
    for (;;) {
      ++shared->idle;
      shared->wake.wait(lock, [&] { return shared->closed || !shared->jobs.empty(); });
      --shared->idle;
      if (shared->jobs.empty()) break;
      Job job = std::move(shared->jobs.front());
      shared->jobs.pop_front();
      lock.unlock();
      Mailbox::Answer answer{job.index, {}, {}, {}};
      try {
        answer.error = detail::resolve(job.host, job.port, true, answer.addresses);
      } catch (const LocalError& e) {
        answer.local = e.what();
      } catch (const std::bad_alloc&) {
        answer.local = "out of memory";
      }
      job.box->post(std::move(answer));
      lock.lock();
    }
    --shared->threads;
  }

  std::shared_ptr<Shared> shared_;
};

// What every poll loop shares.
struct Probing {
  const std::vector<HostSpec>& hosts;
  const ProbeOptions& opt;
  const std::string command;
  std::vector<CommandResult>& results;
  LocalReport report;
  Lookups lookups;
  std::atomic<size_t> next{0};  // the next host no loop has taken yet
  std::atomic<int> open{0};     // probes open in all loops
};

// A probe's answer, from what its command printed.
ProbeResult probe_result(const ProbeOptions& opt, CommandResult&& run) {
  ProbeResult result;
  result.host = std::move(run.host);
  result.elapsed_s = run.elapsed_s;
  result.round_trip_ms = run.round_trip_ms;
  if (!run.ok) {
    result.error = std::move(run.error);
    return result;
  }
  const auto first_line = [](const std::string& text) {
    return untrusted::excerpt(text.substr(0, text.find('\n')), 200);
  };
  if (run.exit_status != 0 && run.exit_status != -1) {
    result.error = "command failed (exit " + std::to_string(run.exit_status) +
                   "): " + first_line(run.err.empty() ? run.out : run.err);
  } else if (std::string problem = detail::read_probe_answer(run.out, !opt.program.empty(), result);
             !problem.empty()) {
    result.error = problem + (run.err.empty() ? "" : " (" + first_line(run.err) + ")");
  }
  result.ok = result.error.empty();
  return result;
}

// One poll loop: starts probes up to its limit, waits for any of their sockets or the earliest
// deadline, and moves each probe on that can.
class ProbeLoop {
 public:
  // Up to `limit` probes open at once, `most` if add_limit raises it.
  ProbeLoop(Probing& probing, int limit, int most) : probing_(probing), limit_(std::max(1, limit)) {
    // All the room the loop can need, taken now: waiting must not allocate.
    probes_.reserve(static_cast<size_t>(std::max(limit_, most)));
    fds_.reserve(probes_.capacity() + 1);
    retry_.reserve(probes_.capacity() + 1);
  }

  void add_limit(int more) { limit_ += more; }

  // Never throws: a loop may run on a thread of its own.
  void run() {
    for (;;) {
      try {
        size_t index;
        while (open_ < limit_ && take(index)) start(index);
        probes_.erase(std::remove(probes_.begin(), probes_.end(), nullptr), probes_.end());
        if (probes_.empty()) return;  // nothing open, so nothing left to take
        wait_and_step();
        expire(Clock::now());
      } catch (const std::exception&) {
        // Out of memory between probes (a probe's own failures are handled where they happen):
        // go on with fewer.
        limit_ = std::max(1, open_ - open_ / 4);
        probing_.report.say(LocalReport::kMemory, [] {
          return std::string(
              "out of memory on this machine while probing: probing fewer hosts at a time");
        });
      }
    }
  }

 private:
  struct Probe {
    size_t index;
    Clock::time_point start, deadline;
    std::unique_ptr<Connection> connection;
    bool looking_up = false;
  };

  bool take(size_t& index) {
    if (!retry_.empty()) {
      index = retry_.back();
      retry_.pop_back();
      return true;
    }
    index = probing_.next.fetch_add(1);
    return index < probing_.hosts.size();
  }

  void start(size_t index) {
    try {
      auto probe = std::make_unique<Probe>();
      probe->index = index;
      probe->start = Clock::now();
      probe->deadline = probe->start + std::chrono::milliseconds(probing_.opt.timeout_ms);
      probe->connection = std::make_unique<Connection>(probing_.hosts[index], probing_.opt);
      Connection& connection = *probe->connection;
      if (std::string problem = connection.configure(); !problem.empty())
        return finish(*probe, problem);
      connection.set_command(probing_.command);
      std::vector<Address> addresses;
      if (!connection.target_host().empty()) {
        std::string problem =
            detail::resolve(connection.target_host(), connection.target_port(), false, addresses);
        if (!problem.empty()) return finish(*probe, problem);
        if (addresses.empty()) {  // a name: looked up elsewhere, answered through the mailbox
          if (!mailbox_) mailbox_ = make_mailbox();
          probing_.lookups.ask(mailbox_, index, connection.target_host(), connection.target_port());
          probe->looking_up = true;
        }
      }
      probes_.push_back(std::move(probe));
      ++open_;
      ++probing_.open;
      if (!probes_.back()->looking_up) {
        probes_.back()->connection->connect(std::move(addresses));
        step(probes_.back());
      }
    } catch (const LocalError& e) {
      local_failure(index, e.what());
    } catch (const std::bad_alloc&) {
      local_failure(index, "out of memory");
    }
  }

  std::shared_ptr<Mailbox> make_mailbox() {
    const int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (fd < 0) {
      const std::string cause = detail::local_cause(errno);
      throw LocalError(cause.empty() ? "cannot create an eventfd" : cause);
    }
    return std::make_shared<Mailbox>(fd);
  }

  // Moves one open probe on; finishes it when done or failed.
  void step(std::unique_ptr<Probe>& probe) {
    try {
      switch (probe->connection->advance()) {
        case Connection::Progress::kWaiting:
          return;
        case Connection::Progress::kDone: {
          CommandResult& result = probing_.results[probe->index];
          detail::CommandOutput output = probe->connection->take_output();
          result.out = std::move(output.out);
          result.err = std::move(output.err);
          result.exit_status = output.exit_status;
          result.round_trip_ms = probe->connection->round_trip_ms();
          return close_probe(probe, "");
        }
        case Connection::Progress::kFailed:
          return close_probe(probe, probe->connection->error());
      }
    } catch (const LocalError& e) {
      close_local(probe, e.what());
    } catch (const std::bad_alloc&) {
      close_local(probe, "out of memory");
    }
  }

  void wait_and_step() {
    std::vector<pollfd>& fds = fds_;
    fds.clear();
    fds.push_back(pollfd{mailbox_ ? mailbox_->wake_fd : -1, POLLIN, 0});
    Clock::time_point earliest = Clock::time_point::max();
    for (const auto& probe : probes_) {
      earliest = std::min(earliest, probe->deadline);
      if (probe->looking_up) {
        fds.push_back(pollfd{-1, 0, 0});
      } else {
        fds.push_back(pollfd{probe->connection->fd(), probe->connection->events(), 0});
      }
    }
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(earliest - Clock::now()).count();
    const int ready =
        poll(fds.data(), fds.size(), static_cast<int>(std::clamp<long long>(left, 0, 1 << 30)));
    if (ready <= 0) return;  // a deadline, or a signal
    // probes_ keeps its order and size until the erase in run(), so fds[i + 1] is probes_[i].
    for (size_t i = 0; i < probes_.size(); ++i)
      if (fds[i + 1].revents != 0 && probes_[i]) step(probes_[i]);
    if (fds[0].revents != 0) deliver_lookups();
  }

  void deliver_lookups() {
    for (Mailbox::Answer& answer : mailbox_->take()) {
      for (auto& probe : probes_) {
        if (!probe || probe->index != answer.index || !probe->looking_up) continue;
        probe->looking_up = false;
        if (!answer.local.empty()) {
          close_local(probe, answer.local.c_str());
        } else if (!answer.error.empty()) {
          close_probe(probe, answer.error);
        } else {
          probe->connection->connect(std::move(answer.addresses));
          step(probe);
        }
        break;
      }
    }
  }

  void expire(Clock::time_point now) {
    for (auto& probe : probes_) {
      if (!probe || probe->deadline > now) continue;
      std::string error = detail::timeout_message(probing_.opt.timeout_ms);
      if (probe->looking_up) error += " (looking up " + probe->connection->target_host() + ")";
      probe->connection->abandon();  // may be repeated, should closing fail for want of memory
      close_probe(probe, error);
    }
  }

  void finish(Probe& probe, const std::string& error) {
    CommandResult& result = probing_.results[probe.index];
    result.host = probing_.hosts[probe.index];
    result.error = error;
    result.ok = error.empty();
    result.elapsed_s = std::chrono::duration<double>(Clock::now() - probe.start).count();
  }

  void close_probe(std::unique_ptr<Probe>& probe, const std::string& error) {
    finish(*probe, error);
    probe.reset();  // disconnects
    --open_;
    --probing_.open;
  }

  void close_local(std::unique_ptr<Probe>& probe, const char* cause) noexcept {
    const size_t index = probe->index;
    probe.reset();
    --open_;
    --probing_.open;
    local_failure(index, cause);
  }

  // This machine ran out of something while probing a host: not the host's fault. With other
  // probes open, this loop goes on with fewer at a time and tries the host again later; alone,
  // the host is reported as not probed. Never throws: memory may be what ran out.
  void local_failure(size_t index, const char* cause) noexcept {
    const auto kind = LocalReport::kind_of(cause);
    if (open_ > 0 && retry_.size() < retry_.capacity()) {
      limit_ = std::max(1, open_ - open_ / 4);  // the open ones still need memory as they go on
      retry_.push_back(index);
      const int open = probing_.open.load() + 1;
      probing_.report.say(kind, [&] {
        return std::string(cause) + " on this machine with " + std::to_string(open) +
               " hosts being probed: probing fewer at a time";
      });
      return;
    }
    probing_.report.say(kind, [&] {
      return std::string(cause) + " on this machine: some hosts could not be probed";
    });
    CommandResult& result = probing_.results[index];
    try {
      result.error = std::string("not probed: ") + cause + " on this machine";
    } catch (const std::bad_alloc&) {
      result.error.clear();  // the table then shows no reason; the line above said it
    }
  }

  Probing& probing_;
  int limit_;
  int open_ = 0;                                // probes not finished
  std::vector<std::unique_ptr<Probe>> probes_;  // in the order they started; null once finished
  std::vector<size_t> retry_;                   // hosts to try again after a local failure
  std::vector<pollfd> fds_;                     // the mailbox's, then one per entry of probes_
  std::shared_ptr<Mailbox> mailbox_;
};

std::vector<CommandResult> run_all(const std::vector<HostSpec>& hosts, const std::string& command,
                                   const ProbeOptions& opt) {
  std::vector<CommandResult> results(hosts.size());
  for (size_t i = 0; i < hosts.size(); ++i) results[i].host = hosts[i];
  if (hosts.empty()) return results;

  Probing probing{hosts, opt, command, results, LocalReport(opt.report_local), {}, {}, {}};
  const int wanted =
      static_cast<int>(std::clamp<long long>(opt.fanout, 1, static_cast<long long>(hosts.size())));
  const OpenFileBudget files(wanted, probing.report);
  const int fanout = files.fanout();

  // One loop per kHostsPerLoop hosts, up to the cores and kMaxLoops, each with its share of the
  // fan-out; the caller runs the first, and takes over the share of a thread that cannot start.
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int loops = static_cast<int>(std::clamp<long long>(
      static_cast<long long>(std::min(hosts.size() / kHostsPerLoop, static_cast<size_t>(fanout))),
      1, std::min(cores, kMaxLoops)));
  const int share = fanout / loops;
  ProbeLoop mine(probing, fanout - (loops - 1) * share, fanout);
  std::vector<std::unique_ptr<ProbeLoop>> others;
  for (int k = 1; k < loops; ++k)
    others.push_back(std::make_unique<ProbeLoop>(probing, share, share));
  std::vector<std::thread> threads;
  threads.reserve(others.size());
  for (auto& loop : others) {
    try {
      threads.emplace_back([&loop] { loop->run(); });
    } catch (const std::system_error& e) {
      mine.add_limit(share * static_cast<int>(others.size() - threads.size()));
      probing.report.say(LocalReport::kThreads, [&] {
        return "probing from " + std::to_string(threads.size() + 1) + " threads instead of " +
               std::to_string(loops) + ": cannot start another (" + e.what() + ")";
      });
      break;
    }
  }
  mine.run();
  for (auto& thread : threads) thread.join();
  return results;
}

}  // namespace

std::vector<CommandResult> run_on_hosts(const std::vector<HostSpec>& hosts,
                                        const std::string& command, const ProbeOptions& opt) {
  try {
    return run_all(hosts, command, opt);
  } catch (const std::bad_alloc&) {  // before any probe started: nothing to report per host
    throw std::runtime_error("out of memory on this machine: cannot reach " +
                             std::to_string(hosts.size()) + " hosts");
  }
}

std::vector<ProbeResult> probe_hosts(const std::vector<HostSpec>& hosts, const ProbeOptions& opt) {
  std::vector<CommandResult> runs = run_on_hosts(hosts, detail::probe_command(opt), opt);
  std::vector<ProbeResult> results;
  try {
    results.reserve(runs.size());
    for (CommandResult& run : runs) results.push_back(probe_result(opt, std::move(run)));
  } catch (const std::bad_alloc&) {
    throw std::runtime_error("out of memory on this machine: cannot probe " +
                             std::to_string(hosts.size()) + " hosts");
  }
  return results;
}

}  // namespace bspg::hosts
