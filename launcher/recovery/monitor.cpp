// HostMonitor: see monitor.h.
#include "monitor.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "checkpoints.h"
#include "probe_answer.h"
#include "say.h"
#include "untrusted.h"

namespace bspg::launcher {
namespace {

using Clock = std::chrono::steady_clock;

// A probe gets at least this long, however near a host's deadline (seconds).
constexpr double kShortestProbe = 0.5;
// A host whose silence is this close to --host-timeout when its probe fails is lost (seconds):
// the round that ends at the deadline may end a little before it.
constexpr double kDeadlineSlack = 0.05;

// One round on the hosts: the probe's figures and, with a marker line, the job's processes
// there (frozen.h) from the same login; `processes[i]` is empty when host i did not list them.
std::vector<hosts::ProbeResult> probe_round(const std::vector<hosts::HostSpec>& specs,
                                            const hosts::ProbeOptions& probe,
                                            const std::string& marker_line,
                                            std::vector<std::vector<JobProcess>>& processes,
                                            std::vector<bool>& listed) {
  processes.assign(specs.size(), {});
  listed.assign(specs.size(), false);
  if (marker_line.empty()) return hosts::probe_hosts(specs, probe);
  // Two command lines for the login shell, one after the other: the probe's, then the list's.
  const std::string command =
      hosts::detail::probe_command(probe) + " ; " +
      hosts::guarded_command(job_processes_script(marker_line), probe.timeout_ms);
  std::vector<hosts::CommandResult> runs = hosts::run_on_hosts(specs, command, probe);
  std::vector<hosts::ProbeResult> results(runs.size());
  for (std::size_t i = 0; i < runs.size(); ++i) {
    hosts::ProbeResult& r = results[i];
    r.host = runs[i].host;
    r.elapsed_s = runs[i].elapsed_s;
    if (!runs[i].ok) {
      r.error = runs[i].error;
      continue;
    }
    if (const std::string problem = hosts::detail::read_probe_answer(runs[i].out, false, r);
        !problem.empty()) {
      r.error = problem;
      continue;
    }
    r.ok = true;
    bool complete = false;
    processes[i] = read_job_processes(runs[i].out, complete);
    listed[i] = complete;
  }
  return results;
}

}  // namespace

HostMonitor::HostMonitor(std::vector<WatchedHost> hosts, MonitorOptions options)
    : hosts_(std::move(hosts)), options_(std::move(options)), busy_rounds_(hosts_.size(), 0) {}

HostMonitor::~HostMonitor() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

double HostMonitor::interval_s(double host_timeout_s) {
  return std::clamp(host_timeout_s / 3, 0.5, 10.0);
}

double HostMonitor::probe_timeout_s(double host_timeout_s, double probe_timeout_s) {
  return std::clamp(std::min(probe_timeout_s, host_timeout_s / 2), 0.5, 600.0);
}

void HostMonitor::start() {
  if (hosts_.empty()) return;
  // The thread (and the probe threads it starts) must not take bsprun's stop signals: run_job
  // reads them from a signalfd, which only sees signals that every thread blocks.
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &previous);
  thread_ = std::thread([this] { run(); });
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

std::string HostMonitor::lost() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return lost_;
}

std::string HostMonitor::lost_host() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return lost_host_;
}

std::string HostMonitor::silent_host() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return silent_host_;
}

std::string HostMonitor::moving_off() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return moving_off_;
}

void HostMonitor::host_gone(const std::string& host) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    gone_.push_back(host);
  }
  wake_.notify_all();
}

void HostMonitor::recovery_refused() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    refused_ = true;
  }
  wake_.notify_all();
}

void HostMonitor::run() {
  using Seconds = std::chrono::duration<double>;
  const Seconds interval(interval_s(options_.host_timeout_s));
  const auto host_timeout =
      std::chrono::duration_cast<Clock::duration>(Seconds(options_.host_timeout_s));
  hosts::ProbeOptions probe = options_.probe;
  const double probe_timeout = probe_timeout_s(options_.host_timeout_s, probe.timeout_ms / 1000.0);
  std::vector<Clock::time_point> answered(hosts_.size(), Clock::now());
  // Silent hosts handed to options_.leave_silent: no longer probed, and lost after the grace
  // unless the library recovered from them.
  std::vector<bool> left(hosts_.size(), false);
  std::vector<Clock::time_point> left_at(hosts_.size());
  std::vector<bool> settled(hosts_.size(), false);  // the library recovered from it
  std::vector<bool> gone_host(hosts_.size(), false);  // handed over by host_gone
  bool refused = false;                               // recovery_refused, as last seen
  const auto grace = std::chrono::duration_cast<Clock::duration>(Seconds(kLeftHostGrace));
  StopClock stop_clock(options_.host_timeout_s);
  std::vector<std::vector<JobProcess>> processes;
  std::vector<bool> listed;
  {
    // The probe that chose the hosts has just seen them: the first round waits an interval, so
    // that a job's start makes no second login to each host beside the MPI daemon's.
    std::unique_lock<std::mutex> lock(mutex_);
    if (wake_.wait_for(lock, interval, [&] { return stopping_ || !gone_.empty(); }) && stopping_)
      return;
  }
  // The earliest last answer of the hosts still probed.
  const auto earliest_answer = [&] {
    auto earliest = Clock::time_point::max();
    for (std::size_t i = 0; i < hosts_.size(); ++i)
      if (!left[i]) earliest = std::min(earliest, answered[i]);
    return earliest;
  };
  for (;;) {
    // Hosts gone with their daemon (host_gone): left to the library at once, or lost.
    std::vector<std::string> gone;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      gone.swap(gone_);
      refused = refused_;
    }
    for (const std::string& name : gone)
      for (std::size_t i = 0; i < hosts_.size(); ++i) {
        if (hosts_[i].host.name != name || left[i]) continue;
        if (options_.leave_silent && options_.recovered_from && options_.leave_silent(name, true)) {
          left[i] = gone_host[i] = true;
          left_at[i] = Clock::now();
          continue;
        }
        std::lock_guard<std::mutex> lock(mutex_);
        lost_host_ = silent_host_ = name;
        lost_ = name + ": its MPI daemon is gone and it does not answer ssh, noticed by bsprun";
        return;
      }
    const auto round = Clock::now();
    for (std::size_t i = 0; i < hosts_.size(); ++i) {
      if (!left[i] || settled[i] || (round < left_at[i] + grace && !refused)) continue;
      if (options_.recovered_from(hosts_[i].host.name)) {
        settled[i] = true;
        continue;
      }
      std::lock_guard<std::mutex> lock(mutex_);
      lost_host_ = silent_host_ = hosts_[i].host.name;
      lost_ = lost_host_ +
              (gone_host[i] ? std::string(": its MPI daemon is gone and it does not answer ssh")
                            : ": no answer for " +
                                  seconds_text(Seconds(round - answered[i]).count()) + " s") +
              (refused ? ", and the library could not recover in place from its processes"
                       : ", and the job did not recover in place from its processes within " +
                             seconds_text(kLeftHostGrace) + " s") +
              ", noticed by bsprun" + (gone_host[i] ? "" : "'s probes");
      return;
    }
    std::vector<hosts::HostSpec> specs;
    std::vector<std::size_t> probed;  // index in hosts_ of each spec
    for (std::size_t i = 0; i < hosts_.size(); ++i)
      if (!left[i]) {
        specs.push_back(hosts_[i].host);
        probed.push_back(i);
      }
    // The round ends by the earliest host's deadline (its last answer plus --host-timeout), so
    // that a silent host is declared lost at its timeout rather than up to a probe later.
    const auto earliest = earliest_answer();
    const double until_deadline = earliest == Clock::time_point::max()
                                      ? probe_timeout
                                      : Seconds(earliest + host_timeout - round).count();
    probe.timeout_ms =
        static_cast<int>(std::clamp(until_deadline, kShortestProbe, probe_timeout) * 1000);
    const std::vector<hosts::ProbeResult> results =
        probe_round(specs, probe, options_.job_marker_line, processes, listed);
    const auto now = Clock::now();
    for (std::size_t k = 0; k < specs.size(); ++k) {
      const std::size_t i = probed[k];
      if (results[k].ok) {
        // When it answered, not when the round ended: a round waits for its slowest host, and a
        // host frozen meanwhile would be given that much more than --host-timeout.
        answered[i] = std::min(now, round + std::chrono::duration_cast<Clock::duration>(
                                                Seconds(results[k].elapsed_s)));
        if (listed[k]) {
          if (std::string what = stop_clock.observe(hosts_[i].host.name, processes[k], now);
              !what.empty()) {
            if (options_.end_stopped &&
                options_.end_stopped->end(hosts_[i].host.name, stop_clock.lost_process()))
              continue;
            std::lock_guard<std::mutex> lock(mutex_);
            lost_host_ = hosts_[i].host.name;
            lost_ = what + ", noticed by bsprun's probes";
            return;
          }
        }
        if (options_.migrate_load > 0) busy(hosts_[i], results[k].load1 - hosts_[i].job_processes);
        continue;
      }
      const double silent = Seconds(now - answered[i]).count();
      if (silent < options_.host_timeout_s - kDeadlineSlack) continue;
      if (options_.leave_silent && options_.recovered_from &&
          options_.leave_silent(hosts_[i].host.name, false)) {
        left[i] = true;
        left_at[i] = Clock::now();
        continue;
      }
      std::lock_guard<std::mutex> lock(mutex_);
      lost_host_ = silent_host_ = hosts_[i].host.name;
      lost_ = lost_host_ + ": no answer for " + seconds_text(silent) + " s (" +
              untrusted::printable(results[k].error) + "), noticed by bsprun's probes";
      return;
    }
    // The next round: after the interval, or earlier when a deadline needs a probe before it.
    const auto next_earliest = earliest_answer();
    const auto last_chance =
        next_earliest == Clock::time_point::max()
            ? Clock::time_point::max()
            : next_earliest + host_timeout -
                  std::chrono::duration_cast<Clock::duration>(Seconds(kShortestProbe));
    // A stopped process is looked at again when its time is up (the round then sees it); a host
    // left to the library, when its grace ends.
    auto next = std::min({round + std::chrono::duration_cast<Clock::duration>(interval),
                          last_chance, stop_clock.next_deadline()});
    for (std::size_t i = 0; i < hosts_.size(); ++i)
      if (left[i] && !settled[i]) next = std::min(next, left_at[i] + grace);
    std::unique_lock<std::mutex> lock(mutex_);
    if (wake_.wait_until(lock, next,
                         [&] { return stopping_ || !gone_.empty() || refused_ != refused; }) &&
        stopping_)
      return;
  }
}

// A host busy with other work: after kBusyRounds probes in a row, the job moves at its next
// checkpoint, if it can run elsewhere.
void HostMonitor::busy(const WatchedHost& watched, double other_load) {
  const std::size_t i = static_cast<std::size_t>(&watched - hosts_.data());
  busy_rounds_[i] = other_load > options_.migrate_load ? busy_rounds_[i] + 1 : 0;
  if (busy_rounds_[i] < kBusyRounds || !moving_off().empty()) return;
  char load[64];
  std::snprintf(load, sizeof load, "%.2f", std::max(0.0, other_load));
  const std::string what = watched.host.name + " is busy (load " + load + " besides the job's " +
                           std::to_string(watched.job_processes) + " process" +
                           (watched.job_processes == 1 ? "" : "es") + ", above --migrate-load " +
                           seconds_text(options_.migrate_load) + " in " +
                           std::to_string(kBusyRounds) + " probes in a row)";
  if (options_.room_elsewhere && !options_.room_elsewhere(watched.host.name)) {
    if (!said_no_room_) say(what + ", but the other hosts have no room for the job; it stays");
    said_no_room_ = true;
    return;
  }
  hosts::ProbeOptions opt = options_.probe;
  const auto run = hosts::run_on_hosts(
      {watched.host},
      hosts::guarded_command(stop_file_script(options_.checkpoint_dir, options_.run_id),
                             opt.timeout_ms),
      opt);
  if (!run.front().ok || run.front().exit_status != 0) {
    say(what + ", but its stop file could not be written (" +
        untrusted::printable(run.front().ok ? run.front().err : run.front().error) +
        "); the job stays");
    busy_rounds_[i] = 0;
    return;
  }
  say(what + ": moving the job to other hosts after its next checkpoint");
  std::lock_guard<std::mutex> lock(mutex_);
  moving_off_ = watched.host.name;
}

}  // namespace bspg::launcher
