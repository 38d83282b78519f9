// grid.cpp - the grid path: host file -> probe -> allocate -> RSL -> one mpirun over ssh.
#include "grid.h"

#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <future>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "allocate.h"
#include "hosts.h"
#include "localhost.h"
#include "place_support.h"
#include "profile_run.h"
#include "remote_stop.h"
#include "restart.h"
#include "rsl.h"
#include "safe_paths.h"
#include "say.h"
#include "subjob_checks.h"
#include "write_all.h"

namespace bspg::launcher {
namespace {

// Messages may quote host files, RSL files and hosts' answers: printed escaped.
int fail(int status, const std::string& message) {
  say(message);
  return status;
}

std::string temp_dir() {
  const char* t = std::getenv("TMPDIR");
  return (t && *t) ? t : "/tmp";
}

// Writes all of text to fd, then closes it; false (errno set) when a write fails.
bool write_and_close(int fd, const std::string& text) {
  if (!write_all(fd, text)) {
    const int saved = errno;
    close(fd);
    errno = saved;
    return false;
  }
  return close(fd) == 0;
}

// A private file (mode 0600) holding text, removed when the object goes away; with a program of
// its own beside it (add_program), removed with it.
class TempFile {
 public:
  TempFile(const std::string& pattern_prefix, const std::string& text) {
    std::string pattern = temp_dir() + "/" + pattern_prefix + "XXXXXX";
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    int fd = mkstemp(buf.data());
    if (fd < 0)
      throw std::runtime_error("cannot create a file in " + temp_dir() + ": " +
                               std::strerror(errno));
    path_ = buf.data();
    if (!write_and_close(fd, text)) {
      const std::string why = std::strerror(errno);
      unlink(path_.c_str());
      throw std::runtime_error("cannot write " + path_ + ": " + why);
    }
  }
  ~TempFile() {
    unlink(path_.c_str());
    if (!program_.empty()) unlink(program_.c_str());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }

  // A new executable file (mode 0700) at path, never one that was there (O_EXCL, no symlink).
  void add_program(const std::string& path, const std::string& text) {
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0700);
    if (fd < 0) throw std::runtime_error("cannot create " + path + ": " + std::strerror(errno));
    program_ = path;
    if (!write_and_close(fd, text))
      throw std::runtime_error("cannot write " + path + ": " + std::strerror(errno));
  }

 private:
  std::string path_;
  std::string program_;
};

// --rsl-out FILE: never written through a symbolic link, nor into another user's file.
void write_file(const std::string& path, const std::string& text) {
  std::string why;
  const int fd = safe_paths::create_named_file(path, why, 0644);
  if (fd < 0) throw std::runtime_error("cannot write the allocation: " + why);
  if (!write_and_close(fd, text))
    throw std::runtime_error("cannot write the allocation to " + path + ": " +
                             std::strerror(errno));
}

// The ssh configuration for hosts, and beside it the program through which the MPI's starter
// runs ssh where it needs one (Mpi::ssh_launcher_script).
std::unique_ptr<TempFile> write_ssh_config(const std::vector<hosts::HostSpec>& hosts,
                                           const MpiSettings& settings) {
  const std::string text = hosts::ssh_config_for(hosts);
  auto file = std::make_unique<TempFile>("bspg-ssh-config-", text);
  if (settings.verbose) std::cerr << "bsprun: ssh configuration " << file->path() << ":\n" << text;
  if (const std::string script = settings.mpi->ssh_launcher_script(file->path()); !script.empty())
    file->add_program(ssh_launcher_path(file->path()), script);
  return file;
}

hosts::ProbeOptions probe_options(const Options& opt) {
  hosts::ProbeOptions probe;
  probe.timeout_ms = static_cast<int>(opt.probe_timeout_s * 1000 + 0.5);
  probe.accept_unknown_host_keys = opt.accept_unknown_host_keys;
  if (opt.fanout > 0) probe.fanout = opt.fanout;
  return probe;
}

// Every host the subjobs place processes on (in master mode also where bsp_begin places the
// others), each once, in order.
std::vector<std::string> placed_hosts(const std::vector<rsl::Subjob>& subjobs) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (const auto& sj : subjobs) {
    for (const auto& h : rsl::placement(sj))
      if (seen.insert(h.host).second) names.push_back(h.host);
    for (const auto& h : master_slot_hosts(sj))
      if (seen.insert(h.host).second) names.push_back(h.host);
  }
  return names;
}

// The hosts of the subjobs for the monitor, with the job's processes on each; a host missing
// from `hosts` is reached as the user's ssh configuration says.
std::vector<WatchedHost> watched_hosts(const std::vector<rsl::Subjob>& subjobs,
                                       const std::vector<hosts::HostSpec>& hosts) {
  std::map<std::string, int> processes;
  for (const auto& sj : subjobs)
    for (const auto& h : rsl::placement(sj)) processes[h.host] += h.count;
  std::vector<WatchedHost> watched;
  for (const auto& name : placed_hosts(subjobs)) {
    WatchedHost w;
    w.host = hosts::host_named(hosts, name);
    w.job_processes = processes[name];
    watched.push_back(w);
  }
  return watched;
}

}  // namespace

RemoteJob remote_job(const std::vector<rsl::Subjob>& subjobs,
                     const std::vector<hosts::HostSpec>& hosts, const std::string& ssh_config) {
  RemoteJob remote{placed_hosts(subjobs), ssh_config, new_job_marker(), {}};
  for (const auto& name : remote.hosts) remote.address_names[name] = name;
  for (const auto& h : hosts) remote.address_names[h.address] = h.name;
  return remote;
}

std::vector<rsl::Subjob> spare_subjobs(const Allocation& allocation, int spares,
                                       const std::string& executable,
                                       const std::vector<std::string>& arguments,
                                       const std::string& directory,
                                       const std::map<std::string, std::string>* staged_path) {
  std::vector<rsl::Subjob> contexts;
  if (spares <= 0) return contexts;
  for (const PlacedHost& h : place_spares(allocation, spares, staged_path != nullptr)) {
    rsl::Subjob spare;
    spare.contact = h.name;
    spare.count = h.count;
    spare.label = "spares";
    spare.executable = executable;
    if (staged_path)
      if (const auto it = staged_path->find(h.name); it != staged_path->end())
        spare.executable = it->second;
    spare.arguments = arguments;
    spare.directory = directory;
    contexts.push_back(spare);
  }
  return contexts;
}

RunResult run_subjobs(const std::vector<rsl::Subjob>& subjobs,
                      const std::vector<hosts::HostSpec>& hosts, const MpiSettings& settings,
                      const RemoteJob& remote, const MonitorOptions& watching, bool quiet_losses,
                      double time_limit_s, MonitorVerdict* verdict, const SpareRun& spare_run) {
  MpiSettings job = settings;
  job.job_marker = remote.marker;
  // Where the job recovers in place from a silent host, one whose daemon dies with it (killed,
  // rebooted) is held silent to a starter that would end the job for it (daemon_relay.h).
  if (watching.leave_silent && !remote.ssh_config.empty()) job.daemon_relay = this_bsprun();
  std::vector<std::string> argv;
  if (const std::string why = settings.mpi->grid_master_unavailable("on the grid path");
      is_master(subjobs) && !why.empty()) {
    RunResult refused;  // an RSL that holds a master's allocation
    refused.started = false;
    refused.error = why;
    return refused;
  }
  try {
    argv = is_master(subjobs) ? master_grid_mpirun_argv(job, subjobs[0], remote.ssh_config)
                              : grid_mpirun_argv(job, subjobs, remote.ssh_config, spare_run.spares);
  } catch (const std::invalid_argument& e) {
    RunResult bad;
    bad.started = false;
    bad.error = std::string("bad allocation: ") + e.what();
    return bad;
  }
  MonitorOptions monitoring = watching;
  monitoring.job_marker_line = std::string(kJobMarkerVariable) + "=" + remote.marker;
  std::vector<rsl::Subjob> watched = subjobs;
  watched.insert(watched.end(), spare_run.spares.begin(), spare_run.spares.end());
  HostMonitor monitor(watched_hosts(watched, hosts), monitoring);
  monitor.start();
  JobWatch watch;
  // A host the library recovered from in place is no reason to stop the job.
  watch.lost = [&monitor, &spare_run] {
    std::string why = monitor.lost();
    if (!why.empty() && spare_run.dismissed && spare_run.dismissed(monitor.lost_host()))
      why.clear();
    return why;
  };
  watch.recovered = spare_run.recovered;
  watch.hosts_left = spare_run.hosts_left;
  if (watching.leave_silent) {
    watch.daemon_gone = [&monitor, &spare_run](const std::string& host) {
      if (spare_run.gone) spare_run.gone(host);
      monitor.host_gone(host);
    };
    watch.not_recovered = [&monitor] { monitor.recovery_refused(); };
  }
  // Only a silent host is not waited for: one with a stopped process still answers ssh.
  watch.lost_host = [&monitor] { return monitor.silent_host(); };
  watch.quiet_losses = quiet_losses;
  watch.starter_may_wait_for_ever = !settings.mpi->ends_on_start_failure();
  RunResult result = run_mpirun(argv, settings.verbose, time_limit_s, remote, watch);
  if (profiling()) {
    std::vector<std::string> silent;
    if (const std::string host = monitor.silent_host(); !host.empty()) silent.push_back(host);
    if (spare_run.hosts_left)  // silent hosts the job recovered from in place
      for (const std::string& host : spare_run.hosts_left()) silent.push_back(host);
    gather_profile(
        remote.hosts, silent,
        {[&](const std::string& host) { return ssh_script_argv(remote.ssh_config, host, "10"); },
         "ssh"});
  }
  if (verdict) *verdict = {monitor.lost_host(), monitor.moving_off()};
  return result;
}

namespace {

// Writes an ssh configuration for `hosts` (kept while the object lives) and runs the subjobs as
// one mpirun, once, watching their hosts; bsprun's exit status.
int start_job(const Options& opt, const std::vector<rsl::Subjob>& subjobs,
              const std::vector<hosts::HostSpec>& hosts, const MpiSettings& settings) {
  std::unique_ptr<TempFile> ssh_config;
  if (!hosts.empty()) ssh_config = write_ssh_config(hosts, settings);
  const RemoteJob remote = remote_job(subjobs, hosts, ssh_config ? ssh_config->path() : "");
  MonitorOptions watching;
  watching.host_timeout_s = opt.host_timeout_s;
  watching.probe = probe_options(opt);
  return exit_status_of(
      run_subjobs(subjobs, hosts, settings, remote, watching, false, opt.time_limit_s),
      opt.time_limit_s);
}

// --rsl FILE: run the allocation as written, once it passed check_subjobs.
int replay(const Options& opt, const MpiSettings& settings) {
  std::vector<rsl::Subjob> subjobs;
  HostFileLimits hostfile{opt.hostfile, {}};
  try {
    subjobs = rsl::read_allocation_file(opt.rsl_in);
    if (!opt.hostfile.empty()) hostfile.hosts = hosts::read_hostfile(opt.hostfile);
    check_subjobs(subjobs, opt.rsl_in, opt.hostfile.empty() ? nullptr : &hostfile);
  } catch (const std::exception& e) {
    return fail(kExitLaunchFailed, e.what());
  }
  for (const auto& name : placed_hosts(subjobs))
    if (const std::string why = settings.mpi->host_name_refused(name); !why.empty())
      return fail(kExitLaunchFailed, opt.rsl_in + ": host " + name + ": " + why +
                                         "; name it without '_' (its address can stay as it is)");
  // The host file's entries for the hosts the allocation uses, for the ssh configuration.
  std::vector<hosts::HostSpec> used;
  for (const auto& name : placed_hosts(subjobs))
    if (const hosts::HostSpec* h = hosts::find_host(hostfile.hosts, name)) used.push_back(*h);
  if (opt.dry_run) {
    std::cout << rsl::write_allocation(subjobs);
    return 0;
  }
  long long total = 0;
  for (const auto& sj : subjobs) total += sj.count;
  if (is_master(subjobs))
    say("running " + opt.rsl_in + ": the master, in master mode");
  else
    say("running " + opt.rsl_in + ": " + std::to_string(total) + " processes in " +
        std::to_string(subjobs.size()) + " subjob" + (subjobs.size() == 1 ? "" : "s"));
  try {
    return start_job(opt, subjobs, used, settings);
  } catch (const std::exception& e) {
    return fail(kExitLaunchFailed, e.what());
  }
}

// --stage: copies the program to every chosen host at once; fills staged_path per host name.
bool stage_everywhere(const Allocation& allocation, const std::string& program,
                      const hosts::ProbeOptions& probe_opt,
                      std::map<std::string, std::string>& staged_path) {
  std::vector<std::pair<std::string, std::future<hosts::StageResult>>> jobs;
  for (const auto& c : allocation.candidates) {
    if (c.count == 0) continue;
    hosts::HostSpec host = c.probe.host;
    jobs.emplace_back(host.name, std::async(std::launch::async, [host, program, probe_opt] {
                        return hosts::stage_executable(host, program, probe_opt);
                      }));
  }
  bool all_ok = true;
  for (auto& [name, job] : jobs) {
    hosts::StageResult r = job.get();
    if (!r.ok) {
      say("staging " + program + " to " + name + " failed: " + r.error);
      all_ok = false;
      continue;
    }
    say(name + ": " + r.remote_path + (r.copied ? " (copied)" : " (already there)"));
    staged_path[name] = r.remote_path;
  }
  return all_ok;
}

// Where the hosts lie on several sites, each probed host times a connect to the first host of
// every site: the round trips between sites, for the probe table. Only for a pool of at most 64
// hosts, where the connects cost little (a representative gets one from every host).
std::vector<hosts::RoundTripTarget> round_trip_targets(const std::vector<hosts::HostSpec>& asked) {
  std::vector<hosts::RoundTripTarget> targets;
  if (asked.size() > 64) return targets;
  for (const auto& h : asked) {
    if (h.site.empty()) continue;
    if (std::none_of(targets.begin(), targets.end(),
                     [&](const auto& t) { return t.site == h.site; }))
      targets.push_back({h.site, h.address.empty() ? h.name : h.address, h.port});
  }
  if (targets.size() < 2) targets.clear();
  return targets;
}

}  // namespace

bool is_master(const std::vector<rsl::Subjob>& subjobs) {
  return subjobs.size() == 1 && !master_slot_hosts(subjobs[0]).empty();
}

rsl::Subjob master_subjob(const Allocation& allocation, const std::vector<rsl::Subjob>& subjobs,
                          const MpiSettings& settings) {
  std::map<std::string, int> subjob_of;
  for (size_t k = 0; k < allocation.subjobs.size(); ++k)
    for (const auto& h : allocation.subjobs[k].hosts) subjob_of[h.name] = static_cast<int>(k);
  std::vector<MasterSlot> slots;
  for (int c : allocation.placement) {
    const std::string& name = allocation.candidates[static_cast<size_t>(c)].probe.host.name;
    slots.push_back({name, subjob_of[name]});
  }
  std::string order;
  for (const auto& slot : slots) order += " " + slot.host;
  say("master mode: the master starts on " + slots.front().host +
      "; bsp_begin(P) places the processes on the first P of these " +
      std::to_string(slots.size()) + " slots:" + order);
  rsl::Subjob master = subjobs.front();
  master.contact = slots.front().host;
  master.count = 1;
  master.hosts.clear();
  master.label = "master";
  for (auto& variable : master_environment(settings, allocation.nprocs, slots))
    master.environment.push_back(variable);
  return master;
}

int plan_grid(const GridJob& job, const std::map<std::string, std::string>& left_out,
              bool show_table, GridPlan& plan,
              const std::vector<std::string>& previous_host_of_pid) {
  const Options& opt = job.opt;
  std::vector<hosts::HostSpec> asked;
  for (const auto& h : job.candidates)
    if (!left_out.count(h.name)) asked.push_back(h);
  if (show_table)
    std::cerr << "bsprun: probing " << asked.size() << " candidate host"
              << (asked.size() == 1 ? "" : "s") << " from " << opt.hostfile << " (timeout "
              << opt.probe_timeout_s << " s)\n";
  // The probe that chooses hosts also checks that the program is there (--stage copies it
  // where it is missing).
  hosts::ProbeOptions probe = job.probe;
  if (!opt.stage) probe.program = job.program;
  probe.round_trip_targets = round_trip_targets(asked);
  auto probe_start = std::chrono::steady_clock::now();
  std::vector<hosts::ProbeResult> asked_probes = hosts::probe_hosts(asked, probe);
  double probe_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - probe_start).count();
  // In host file order, those left out with their reason.
  std::vector<hosts::ProbeResult> probes;
  for (std::size_t i = 0, next = 0; i < job.candidates.size(); ++i) {
    if (auto it = left_out.find(job.candidates[i].name); it != left_out.end()) {
      hosts::ProbeResult out;
      out.host = job.candidates[i];
      out.error = it->second;
      probes.push_back(out);
    } else {
      probes.push_back(asked_probes[next++]);
    }
  }

  Allocation& allocation = plan.allocation;
  if (const int status =
          allocate_processes(opt, probes, show_table, allocation, previous_host_of_pid);
      status != 0)
    return status;
  if (opt.verbose) {
    double slowest = 0, sum = 0;
    for (const auto& p : probes) {
      slowest = std::max(slowest, p.elapsed_s);
      sum += p.elapsed_s;
    }
    char buf[160];
    std::snprintf(buf, sizeof buf,
                  "probing took %.2f s (slowest host %.2f s, all probes together %.2f s)", probe_s,
                  slowest, sum);
    say(buf);
  }

  if (!opt.stage) {
    if (const ProgramProblem problem = program_problem(allocation, job.program);
        problem.exit_status != 0)
      return fail(problem.exit_status, problem.message + "; nothing was started");
  }

  // Staged copies replace the local path; the working directory may not exist there.
  std::string directory = current_directory();
  std::map<std::string, std::string> staged_path;
  if (opt.stage) {
    if (!stage_everywhere(allocation, job.program, job.probe, staged_path))
      return fail(kExitLaunchFailed, "staging failed; nothing was started");
    directory.clear();
  }
  plan.subjobs = subjobs_for(allocation, job.program, opt.program_args, directory);
  std::vector<rsl::Subjob>& subjobs = plan.subjobs;
  if (opt.stage) {
    for (size_t k = 0; k < subjobs.size(); ++k) {
      std::set<std::string> paths;
      for (const auto& h : allocation.subjobs[k].hosts) paths.insert(staged_path[h.name]);
      if (paths.size() != 1)
        return fail(kExitLaunchFailed,
                    "the hosts of site " + allocation.subjobs[k].site +
                        " staged the program at different paths; run without --stage");
      subjobs[k].executable = *paths.begin();
    }
  }
  plan.spares = spare_subjobs(allocation, opt.nprocs > 0 ? job.settings.spares : 0, job.program,
                              opt.program_args, directory, opt.stage ? &staged_path : nullptr);
  if (!plan.spares.empty() && show_table) {
    std::string where;
    for (const auto& spare : plan.spares)
      where += (where.empty() ? "" : ", ") + spare.contact +
               (spare.count > 1 ? " (" + std::to_string(spare.count) + ")" : "");
    say(std::to_string(job.settings.spares) + " spare process" +
        (job.settings.spares == 1 ? "" : "es") + " for recovery in place on " + where);
  }
  if (opt.nprocs == 0) {
    // Spawned processes run the master's executable path, wherever they are.
    for (const auto& sj : subjobs)
      if (sj.executable != subjobs.front().executable)
        return fail(kExitLaunchFailed,
                    "the chosen hosts staged the program at different paths, but in master mode "
                    "every process runs the master's; run without --stage");
    subjobs = {master_subjob(allocation, subjobs, job.settings)};
  }
  plan.chosen = chosen_hosts(allocation);
  return 0;
}

int allocate_processes(const Options& opt, const std::vector<hosts::ProbeResult>& probes,
                       bool show_table, Allocation& allocation,
                       const std::vector<std::string>& previous_host_of_pid) {
  // Master mode: every slot (or --max-procs of them) is available to the master's bsp_begin.
  int wanted = opt.nprocs;
  if (wanted == 0)
    wanted = opt.max_procs > 0 ? opt.max_procs : std::max(1, usable_slot_total(probes));
  try {
    allocation = allocate(probes, wanted);
  } catch (const AllocationError& e) {
    std::cerr << format_probe_table(probes);
    return fail(kExitLaunchFailed, std::string(e.what()) + "; nothing was started");
  }
  keep_previous_hosts(allocation, previous_host_of_pid);
  if (show_table) std::cerr << format_probe_table(allocation);
  if (const std::string beyond = hosts_beyond_their_cores(allocation);
      !beyond.empty() && !opt.quiet)
    say_beyond_the_cores("more processes than cores on " + beyond);
  return 0;
}

std::vector<hosts::HostSpec> chosen_hosts(const Allocation& allocation) {
  std::vector<hosts::HostSpec> chosen;
  for (const auto& c : allocation.candidates)
    if (c.count > 0) chosen.push_back(c.probe.host);
  return chosen;
}

int write_allocation(const Options& opt, const std::vector<rsl::Subjob>& subjobs, bool announce) {
  // What bsprun writes it must be able to run again with --rsl: the same checks.
  std::string rsl_text;
  try {
    check_subjobs(subjobs, "", nullptr);
    rsl_text = rsl::write_allocation(subjobs);
  } catch (const std::exception& e) {
    return fail(kExitLaunchFailed, std::string("cannot write the allocation as RSL: ") + e.what());
  }
  try {
    if (opt.dry_run) {
      if (!opt.rsl_out.empty()) {
        write_file(opt.rsl_out, rsl_text);
        say("allocation written to " + opt.rsl_out);
      }
      std::cout << rsl_text;
      return 0;
    }
    // Without --rsl-out nothing is written: a file in TMPDIR would outlive bsprun.
    if (opt.rsl_out.empty()) return 0;
    write_file(opt.rsl_out, rsl_text);
    if (announce)
      say("allocation written to " + opt.rsl_out + " (run it again: bsprun --rsl " + opt.rsl_out +
          (opt.hostfile.empty() ? "" : " --hostfile " + opt.hostfile) + ")");
  } catch (const std::exception& e) {
    return fail(kExitLaunchFailed, e.what());
  }
  return 0;
}

int run_grid(const Options& opt, const MpiSettings& settings) {
  if (!opt.rsl_in.empty()) return replay(opt, settings);

  ResolvedProgram prog = resolve_program(opt.program);
  if (prog.problem == ResolvedProgram::kNotFound) return fail(kExitNotFound, prog.message);
  if (prog.problem != ResolvedProgram::kNone) return fail(kExitNotExecutable, prog.message);

  GridJob job{opt, settings, prog.path, {}, probe_options(opt), ""};
  try {
    job.candidates = hosts::read_hostfile(opt.hostfile);
  } catch (const std::exception& e) {
    return fail(kExitLaunchFailed, e.what());
  }
  for (const hosts::HostSpec& host : job.candidates)
    if (const std::string why = settings.mpi->host_name_refused(host.name); !why.empty())
      return fail(kExitLaunchFailed, opt.hostfile + ":" + std::to_string(host.line) + ": host " +
                                         host.name + ": " + why +
                                         "; name it without '_' (its address can stay as it is)");

  // -p N: the job may be restarted elsewhere (grid_place.cpp).
  if (opt.nprocs > 0 && !opt.dry_run) {
    try {
      const auto ssh_config = write_ssh_config(job.candidates, settings);
      job.ssh_config = ssh_config->path();
      return run_grid_restartable(job);
    } catch (const std::exception& e) {
      return fail(kExitLaunchFailed, e.what());
    }
  }
  GridPlan plan;
  if (int status = plan_grid(job, {}, true, plan); status != 0) return status;
  if (int status = write_allocation(opt, plan.subjobs, true); status != 0 || opt.dry_run)
    return status;
  try {
    return start_job(opt, plan.subjobs, plan.chosen, settings);
  } catch (const std::exception& e) {
    return fail(kExitLaunchFailed, e.what());
  }
}

}  // namespace bspg::launcher
