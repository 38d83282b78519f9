// grid_place.cpp - the restart loop's place on the hosts of a host file (the grid path, -p N).
#include <algorithm>
#include <future>
#include <mutex>
#include <set>

#include "grid.h"
#include "in_place.h"
#include "place_support.h"
#include "restart.h"
#include "say.h"
#include "untrusted.h"

namespace bspg::launcher {
namespace {

class GridPlace : public JobPlace {
 public:
  explicit GridPlace(const GridJob& job) : job_(job), dir_(checkpoint_directory(job.opt)) {}

  int plan(const std::map<std::string, std::string>& left_out, bool first) override {
    left_out_ = left_out;
    // Each process restarts where it ran, where it can: its checkpoint lies there.
    if (const int status =
            plan_grid(job_, left_out, first || job_.opt.verbose, plan_, host_of_pid_);
        status != 0)
      return status;
    reachable_.clear();
    for (const auto& c : plan_.allocation.candidates)
      if (c.probe.ok) reachable_.push_back(c.probe.host);
    host_of_pid_ = hosts_of_pids(plan_);
    // The run's hosts: the job's, and those that hold only spares (watched, searched for exit
    // notes and cleaned up as the job's: a spare may take a lost process's place).
    run_hosts_ = plan_.chosen;
    for (const auto& spare : plan_.spares) {
      bool listed = false;
      for (const auto& h : run_hosts_) listed = listed || h.name == spare.contact;
      if (!listed) run_hosts_.push_back(hosts::host_named(job_.candidates, spare.contact));
    }
    for (const auto& h : run_hosts_) used_.insert(h.name);
    return 0;
  }

  std::vector<Holdings> survey() override {
    hosts::ProbeOptions opt = job_.probe;
    opt.timeout_ms = static_cast<int>((job_.opt.probe_timeout_s + kSurveySeconds) * 1000);
    const auto runs = hosts::run_on_hosts(
        reachable_,
        hosts::guarded_command(survey_script(dir_, sibling_hostinfo(), true), opt.timeout_ms), opt);
    std::vector<Holdings> holdings;
    for (const auto& run : runs) {
      Holdings h;
      h.host = run.host.name;
      const std::string problem = !run.ok ? run.error
                                  : run.exit_status != 0
                                      ? "exit status " + std::to_string(run.exit_status)
                                      : read_survey(run.out, h);
      keep_listing(run.host.name, problem, std::move(h), job_.opt, dir_, holdings);
    }
    return holdings;
  }

  std::vector<std::string> host_of_pid() const override { return host_of_pid_; }

  std::string hosts_text() const override { return chosen_text(plan_); }

  std::string bring(const std::vector<Transfer>& transfers, std::string& failed_host) override {
    hosts::ProbeOptions opt = job_.probe;
    std::vector<std::future<hosts::RelayResult>> copies;
    for (const Transfer& t : transfers) {
      const hosts::HostSpec from = hosts::host_named(job_.candidates, t.from_host),
                            to = hosts::host_named(job_.candidates, t.to_host);
      const std::string from_path = sftp_path(dir_) + "/" + t.from_name,
                        to_path = sftp_path(dir_) + "/" + t.to_name;
      if (job_.opt.verbose)
        say("copying " + t.from_host + ":" + t.from_name + " to " + t.to_host + ":" + t.to_name);
      copies.push_back(std::async(std::launch::async, [=] {
        return hosts::relay_file(from, from_path, to, to_path, opt);
      }));
    }
    std::string problem;
    for (auto& copy : copies) {
      const hosts::RelayResult r = copy.get();
      if (!r.ok && problem.empty()) {
        problem = r.error;
        failed_host = r.host;
      }
    }
    return problem;
  }

  RunResult run(std::uint64_t resume, const std::string& run_id, double time_limit_s) override {
    if (const int status = write_allocation(job_.opt, plan_.subjobs, runs_++ == 0); status != 0) {
      RunResult unwritten;
      unwritten.started = false;
      unwritten.error = "the allocation could not be written";
      return unwritten;
    }
    std::vector<rsl::Subjob> everything = plan_.subjobs;
    everything.insert(everything.end(), plan_.spares.begin(), plan_.spares.end());
    remote_ = remote_job(everything, run_hosts_, job_.ssh_config);
    MonitorOptions watching;
    watching.host_timeout_s = job_.opt.host_timeout_s;
    watching.migrate_load = job_.opt.migrate_load;
    watching.probe = job_.probe;
    watching.checkpoint_dir = dir_;
    watching.run_id = run_id;
    watching.room_elsewhere = [this](const std::string& host) { return room_without(host); };
    MonitorVerdict verdict;
    MpiSettings settings =
        run_settings(job_.settings, dir_, resume, run_id, job_.opt, recoveries_allowed());
    // With spares the library recovers in place from a process that ended: the monitor ends a
    // process of the job it finds stopped for --host-timeout (the MPI then sees it lost), and
    // does not stop the job for a host the library recovered from.
    SpareRun spare_run;
    {
      std::lock_guard<std::mutex> lock(hosts_mutex_);
      recovered_hosts_.clear();
      left_hosts_.clear();
      gone_hosts_.clear();
      named_ranks_.clear();
    }
    end_stopped_.forget();
    // The processes' exit notes on each host say which process was killed where the starter does
    // not (Hydra), or says another process's end first: under Open MPI 5 a peer that loses its
    // connection to the killed process aborts at once (MPI_ERRORS_ARE_FATAL, "Socket closed"),
    // and PRRTE may report that abort rather than the death. Only with restarts to spare, where
    // a lost process matters.
    const bool notes = job_.opt.restarts > 0;
    if (settings.spares > 0) {
      watching.end_stopped = &end_stopped_;
      spare_run.spares = plan_.spares;
      spare_run.recovered = [this](const InPlaceRecovery& r) { end_lost_processes(r); };
      spare_run.dismissed = [this](const std::string& host) { return recovered_from(host); };
      // A silent host's processes: named to the others through the exit notes' directories.
      if (notes) {
        watching.leave_silent = [this](const std::string& host, bool daemon_gone) {
          return leave_silent(host, daemon_gone);
        };
        watching.recovered_from = [this](const std::string& host) { return recovered_from(host); };
        spare_run.gone = [this](const std::string& host) {
          std::lock_guard<std::mutex> lock(hosts_mutex_);
          gone_hosts_.insert(host);
        };
        spare_run.hosts_left = [this] {
          std::lock_guard<std::mutex> lock(hosts_mutex_);
          return std::vector<std::string>(left_hosts_.begin(), left_hosts_.end());
        };
      }
    }
    if (notes)
      settings.exports.push_back("BSPG_EXIT_NOTES=" + exit_notes_directory(remote_.marker));
    RunResult result = run_subjobs(plan_.subjobs, run_hosts_, settings, remote_, watching,
                                   job_.opt.restarts > 0, time_limit_s, &verdict, spare_run);
    finish_ending_lost();
    lost_host_ = verdict.lost_host;
    moving_off_ = verdict.moving_off;
    wrote_stop_ = wrote_stop_ || !moving_off_.empty();
    if (notes) find_killed_process(result, settings);
    return result;
  }

  // A process of the run killed by a signal, from the exit notes on the hosts (which are then
  // removed): the job's loss, unless a process failed by exit (the program's failure) or the run
  // ended otherwise (a crash said so itself, a lost host, a stop).
  void find_killed_process(RunResult& result, const MpiSettings& settings) const {
    ExitNoteSet notes;
    bool complete = true;
    // Not on a host that was lost: it would only wait out the timeout (a frozen host), and a loss
    // of a host ends the run whatever the notes say.
    std::vector<hosts::HostSpec> answering;
    for (const auto& h : run_hosts_)
      if (h.name != lost_host_ && !left(h.name)) answering.push_back(h);
    for (const auto& listed : hosts::run_on_hosts(
             answering,
             hosts::guarded_command(exit_notes_script(remote_.marker), job_.probe.timeout_ms),
             job_.probe))
      complete = listed.ok && read_exit_notes(listed.out, notes) && complete;
    take_killed_process(result, notes, complete, !lost_host_.empty(), host_of_pid_,
                        settings.mpi->name());
  }

  std::string host_calling_itself(const std::string& name) const override {
    if (std::string host = chosen_calling_itself(plan_, name); !host.empty()) return host;
    for (const auto& spare : plan_.spares)
      if (same_host_name(name, spare.contact)) return spare.contact;
    return "";
  }

  // A lost process the library recovered from in place may still live, frozen (the MPI's
  // heartbeat declared it dead): ended on its host over ssh, meanwhile the job runs on, or the
  // starter would wait for it at the end. Only on a host of this run, and only a process of the
  // job (end_process_script).
  void end_lost_processes(const InPlaceRecovery& recovery) {
    for (const LostProcess& lost : recovery.lost) {
      const std::string host = host_calling_itself(lost.host);
      if (host.empty()) {
        say("the library's recovery line names host " + lost.host +
            ", where this run has no process: nothing ended there");
        continue;
      }
      {
        std::lock_guard<std::mutex> lock(hosts_mutex_);
        recovered_hosts_.insert(host);
      }
      if (left(host)) {  // it does not answer: nothing reaches it
        if (job_.opt.verbose)
          say("the lost process " + std::to_string(lost.pid) + " (process id " +
              std::to_string(lost.process_id) + " on " + host +
              ") is left as it is: its host does not answer");
        continue;
      }
      const hosts::HostSpec spec = hosts::host_named(job_.candidates, host);
      const hosts::ProbeOptions probe = job_.probe;
      const std::string script = end_process_script(
          std::string(kJobMarkerVariable) + "=" + remote_.marker, lost.process_id);
      const std::string which = "process " + std::to_string(lost.pid) + " (process id " +
                                std::to_string(lost.process_id) + " on " + host + ")";
      ending_hosts_.push_back(host);
      ending_.push_back(std::async(std::launch::async, [spec, probe, script, which] {
        const auto runs =
            hosts::run_on_hosts({spec}, hosts::guarded_command(script, probe.timeout_ms), probe);
        if (runs.empty() || !runs.front().ok)
          return "could not reach " + spec.name + " to end the lost " + which + ": " +
                 (runs.empty() ? std::string("no answer") : runs.front().error);
        return runs.front().out.find("ended ") != std::string::npos
                   ? "the lost " + which + " was still there: ended"
                   : std::string();
      }));
    }
  }

  // A process of the job stopped for --host-timeout on `host` (the monitor's thread, through
  // end_stopped_): ended over ssh; false where that failed (the job is then stopped and restarted,
  // as without spares).
  bool end_stopped_process(const std::string& host, const JobProcess& process) {
    const std::string script =
        end_process_script(std::string(kJobMarkerVariable) + "=" + remote_.marker, process.pid);
    const auto runs =
        hosts::run_on_hosts({hosts::host_named(job_.candidates, host)},
                            hosts::guarded_command(script, job_.probe.timeout_ms), job_.probe);
    const bool ended = !runs.empty() && runs.front().ok;
    if (job_.opt.verbose)
      say("process " + std::to_string(process.rank) + " (process id " +
          std::to_string(process.pid) + ") on " + host + " stopped for --host-timeout: " +
          (ended ? "ended, for recovery in place" : "could not be ended"));
    return ended;
  }

  bool recovered_from(const std::string& host) const {
    std::lock_guard<std::mutex> lock(hosts_mutex_);
    return recovered_hosts_.count(host) > 0;
  }

  bool left(const std::string& host) const {
    std::lock_guard<std::mutex> lock(hosts_mutex_);
    return left_hosts_.count(host) > 0;
  }

  // A host silent for --host-timeout, or gone with its MPI daemon (daemon_gone; bsprun's relay
  // found its ssh port closed) (the monitor's thread): where it holds a process of the job,
  // every other host of the run is told, in the exit notes' directory, which processes (ranks in
  // MPI_COMM_WORLD) are lost there, and the library cuts its connections to them and recovers in
  // place. false where it holds only spares, or a host could not be told: the job is then
  // stopped and restarted, as without spares.
  bool leave_silent(const std::string& host, bool daemon_gone) {
    const HostRanks ranks = ranks_on_host(plan_, host_of_pid_, host);
    if (ranks.job.empty()) return false;
    std::vector<int> named;
    std::vector<hosts::HostSpec> others;
    {
      std::lock_guard<std::mutex> lock(hosts_mutex_);
      named_ranks_.insert(named_ranks_.end(), ranks.all.begin(), ranks.all.end());
      named = named_ranks_;
      left_hosts_.insert(host);
      for (const auto& h : run_hosts_)
        if (left_hosts_.count(h.name) == 0 && gone_hosts_.count(h.name) == 0) others.push_back(h);
    }
    const auto runs = hosts::run_on_hosts(
        others,
        hosts::guarded_command(lost_ranks_script(remote_.marker, named), job_.probe.timeout_ms),
        job_.probe);
    std::string failed;
    for (const auto& run : runs)
      if (!run.ok || run.out.find("named") == std::string::npos)
        failed +=
            (failed.empty() ? "" : ", ") + run.host.name + " (" +
            (run.ok ? "the job's exit notes' directory there: " +
                          (run.err.empty() ? std::string("missing") : untrusted::printable(run.err))
                    : run.error) +
            ")";
    if (!failed.empty()) {
      std::lock_guard<std::mutex> lock(hosts_mutex_);
      left_hosts_.erase(host);
      say(host + " does not answer, but " + failed +
          " could not be told of its processes' loss: no recovery in place");
      return false;
    }
    say(host +
        (daemon_gone ? " is gone with its MPI daemon" : " does not answer for --host-timeout") +
        ": process" + (ranks.job.size() > 1 ? "es " : " ") + rank_list(ranks.job) +
        " there named lost to the job's other processes, for recovery in place");
    return true;
  }

  // Waits for the ssh commands of end_lost_processes and says what they found.
  // A host found gone with its daemon meanwhile could not be reached, as expected: not said.
  void finish_ending_lost() {
    for (std::size_t k = 0; k < ending_.size(); ++k)
      if (const std::string said = ending_[k].get();
          !said.empty() &&
          (job_.opt.verbose || (said.rfind("could not", 0) == 0 && !left(ending_hosts_[k]))))
        say(said);
    ending_.clear();
    ending_hosts_.clear();
  }

  void lose(const std::string& host) override {
    reachable_.erase(std::remove_if(reachable_.begin(), reachable_.end(),
                                    [&](const hosts::HostSpec& h) { return h.name == host; }),
                     reachable_.end());
  }

  std::string watched_lost_host() const override { return lost_host_; }
  std::string moving_off() const override { return moving_off_; }

  std::vector<std::string> sweep() override {
    RemoteStop stop(remote_, 5);
    stop.start();
    stop.finish();
    if (!stop.unreachable().empty()) say(not_stopped_line(stop.unreachable()));
    return stop.silent();
  }

  void clean_up(bool remove_directory) override {
    if (!remove_directory && !wrote_stop_) return;
    // A job that ended well: the last run's processes removed the directory on their hosts
    // themselves (BSPG_CHECKPOINT_CLEANUP), so only hosts of earlier runs need a login.
    std::set<std::string> done;
    if (remove_directory)
      for (const auto& h : run_hosts_) done.insert(h.name);
    std::vector<hosts::HostSpec> hosts;
    for (const auto& h : job_.candidates)
      if (used_.count(h.name) && !left_out_.count(h.name) && !done.count(h.name))
        hosts.push_back(h);
    if (hosts.empty()) return;
    hosts::run_on_hosts(
        hosts, hosts::guarded_command(remove_script(dir_, remove_directory), job_.probe.timeout_ms),
        job_.probe);
  }

 private:
  // Whether the job could run on the candidates without `host` (asked before moving off it).
  bool room_without(const std::string& host) const {
    std::vector<hosts::HostSpec> others;
    for (const auto& h : job_.candidates)
      if (h.name != host && !left_out_.count(h.name)) others.push_back(h);
    std::vector<hosts::ProbeResult> probes = hosts::probe_hosts(others, job_.probe);
    for (auto& p : probes)  // hosts as busy as the one the job leaves are no better
      if (p.ok && job_.opt.migrate_load > 0 && p.load1 > job_.opt.migrate_load) p.ok = false;
    try {
      allocate(probes, job_.opt.nprocs);
      return true;
    } catch (const AllocationError&) {
      return false;
    }
  }

  const GridJob& job_;
  std::string dir_;
  GridPlan plan_;
  std::vector<hosts::HostSpec> run_hosts_;  // the job's hosts and the spares'
  StoppedProcessEnder end_stopped_{
      [this](const std::string& host, const JobProcess& process) {
        return end_stopped_process(host, process);
      }};
  std::map<std::string, std::string> left_out_;
  std::vector<hosts::HostSpec> reachable_;
  std::vector<std::string> host_of_pid_;
  std::set<std::string> used_;  // hosts that ran the job
  RemoteJob remote_;
  std::string lost_host_, moving_off_;
  int runs_ = 0;
  mutable std::mutex hosts_mutex_;         // the three below: the monitor's thread reads them too
  std::set<std::string> recovered_hosts_;  // hosts the library recovered from in this run
  std::set<std::string> gone_hosts_;       // found gone with their daemon, maybe not yet left
  std::set<std::string> left_hosts_;       // silent hosts whose processes were named lost
  std::vector<int> named_ranks_;           // those processes (ranks in MPI_COMM_WORLD)
  std::vector<std::future<std::string>> ending_;  // end_lost_processes' ssh commands
  std::vector<std::string> ending_hosts_;         // and their hosts
  bool wrote_stop_ = false;  // a stop file of bsprun's may be left on a host
};

}  // namespace

int run_grid_restartable(const GridJob& job) {
  GridPlace place(job);
  return run_restartable(job.opt, place);
}

}  // namespace bspg::launcher
