// slurm.cpp - bsprun's Slurm path: the allocation's nodes -> probe through srun -> allocate ->
// RSL -> one starter whose Slurm launcher makes one job step.
#include "slurm.h"

#include <limits.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <set>
#include <sstream>
#include <string_view>
#include <stdexcept>

#include "allocate.h"
#include "grid.h"
#include "localhost.h"
#include "remote_stop.h"
#include "runner.h"
#include "say.h"

namespace bspg::launcher {
namespace {

int fail(int status, const std::string& message) {
  say(message);
  return status;
}

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(text);
  while (std::getline(in, part, separator)) parts.push_back(part);
  if (!text.empty() && text.back() == separator) parts.emplace_back();
  return parts;
}

bool is_host_name(const std::string& name) {
  if (name.empty() || name.size() > 64 || name[0] == '-') return false;
  return std::all_of(name.begin(), name.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '.' || c == '_' || c == '-';
  });
}

// A Slurm host list expression ("emu[1-3,5],gpu01") as Slurm's own tools accept it.
bool is_host_list(const std::string& list) {
  if (list.empty() || list.size() > 65536 || list[0] == '-') return false;
  return std::all_of(list.begin(), list.end(), [](unsigned char c) {
    return std::isalnum(c) || std::string_view(".,_-[]").find(static_cast<char>(c)) !=
                                   std::string_view::npos;
  });
}

// Runs one of Slurm's client commands (argv, quoted for sh) here: its output and, with `error`,
// why it failed (its own message when it printed one).
std::string slurm_command(const std::vector<std::string>& argv, double timeout_s,
                          std::string& error) {
  const std::string text =
      run_sh_here("exec " + shell_quote_command(argv) + " 2>&1; ", timeout_s, error);
  return text;
}

// The first line of a command's output, for a message.
std::string first_line(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  if (line.size() > 300) line = line.substr(0, 300) + "...";
  return line;
}

}  // namespace

std::string slurm_job_id() { return env("SLURM_JOB_ID"); }

bool uses_slurm(const Options& opt) { return opt.hostfile.empty() && !slurm_job_id().empty(); }

std::vector<int> expand_cpus_per_node(const std::string& text) {
  // Slurm writes "N" or "N(xK)" per run of nodes, runs separated by commas.
  std::vector<int> counts;
  for (const std::string& run : split(text, ',')) {
    size_t digits = 0;
    while (digits < run.size() && std::isdigit(static_cast<unsigned char>(run[digits]))) ++digits;
    if (digits == 0 || digits > 6)
      throw std::invalid_argument("'" + text + "' is not a list of CPU counts per node");
    const int cpus = std::stoi(run.substr(0, digits));
    long repeat = 1;
    if (digits < run.size()) {
      const std::string rest = run.substr(digits);
      if (rest.size() < 4 || rest.compare(0, 2, "(x") != 0 || rest.back() != ')' ||
          rest.size() > 10 ||
          !std::all_of(rest.begin() + 2, rest.end() - 1,
                       [](unsigned char c) { return std::isdigit(c); }))
        throw std::invalid_argument("'" + text + "' is not a list of CPU counts per node");
      repeat = std::stol(rest.substr(2, rest.size() - 3));
    }
    if (cpus == 0 || repeat == 0 || counts.size() + static_cast<size_t>(repeat) > 1000000)
      throw std::invalid_argument("'" + text + "' is not a list of CPU counts per node");
    counts.insert(counts.end(), static_cast<size_t>(repeat), cpus);
  }
  if (counts.empty()) throw std::invalid_argument("no CPU counts per node");
  return counts;
}

std::map<std::string, SlurmNode> read_sinfo_nodes(const std::string& text) {
  std::map<std::string, SlurmNode> nodes;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    const std::vector<std::string> fields = split(line, '|');
    if (fields.size() != 4 || !is_host_name(fields[0]))
      throw std::invalid_argument("unexpected line from sinfo: '" + first_line(line) + "'");
    SlurmNode& node = nodes[fields[0]];
    node.name = fields[0];
    if (fields[1] != "(null)" && node.features.empty())
      for (const auto& f : split(fields[1], ','))
        if (!f.empty()) node.features.push_back(f);
    std::string partition = fields[2];
    if (!partition.empty() && partition.back() == '*') partition.pop_back();  // the default
    if (!partition.empty() && std::find(node.partitions.begin(), node.partitions.end(),
                                        partition) == node.partitions.end())
      node.partitions.push_back(partition);
    node.state = fields[3];
  }
  return nodes;
}

std::string site_of(const SlurmNode& node, const std::string& partition) {
  for (const auto& feature : node.features)
    if (feature.compare(0, 4, "site") == 0 && is_host_name(feature)) return feature;
  if (is_host_name(partition)) return partition;
  return "slurm";
}

std::string unusable_state(const std::string& state) {
  std::string s = state;
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* word : {"down", "drain", "fail", "power", "maint", "reboot", "future"})
    if (s.find(word) != std::string::npos) return "Slurm reports it " + state;
  if (!s.empty() && (s.back() == '*' || s.back() == '~' || s.back() == '#' || s.back() == '!'))
    return "Slurm reports it " + state + " (not responding)";
  return "";
}

std::map<std::string, std::string> split_probe_output(const std::string& text,
                                                      std::string& other) {
  std::map<long, std::string> by_task;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    size_t i = 0;
    while (i < line.size() && line[i] == ' ') ++i;
    const size_t digits_start = i;
    while (i < line.size() && std::isdigit(static_cast<unsigned char>(line[i]))) ++i;
    if (i == digits_start || i - digits_start > 9 || i + 1 >= line.size() + 1 ||
        line.compare(i, 2, ": ") != 0) {
      other += line + "\n";
      continue;
    }
    by_task[std::stol(line.substr(digits_start, i - digits_start))] += line.substr(i + 2) + "\n";
  }
  std::map<std::string, std::string> by_node;
  for (const auto& [task, output] : by_task) {
    const std::string first = output.substr(0, output.find('\n'));
    if (first.compare(0, 5, "node ") != 0 || !is_host_name(first.substr(5))) {
      other += output;
      continue;
    }
    by_node[first.substr(5)] = output.substr(first.size() + 1);
  }
  return by_node;
}

namespace {

// What bsprun learns of the allocation before it probes.
struct SlurmCandidates {
  std::vector<hosts::HostSpec> nodes;        // in Slurm's order, slots = the job's CPUs there
  std::map<std::string, std::string> out;    // nodes that cannot take processes, and why
};

// The allocation's nodes, their CPUs for this job, their sites and states. "" or why not.
std::string read_allocation(SlurmCandidates& c) {
  const std::string list = env("SLURM_JOB_NODELIST").empty() ? env("SLURM_NODELIST")
                                                             : env("SLURM_JOB_NODELIST");
  if (!is_host_list(list))
    return "SLURM_JOB_NODELIST='" + list + "' is not a Slurm host list (is this an allocation?)";
  std::string error;
  const std::string names_text =
      slurm_command({"scontrol", "show", "hostnames", list}, 30, error);
  std::vector<std::string> names;
  std::istringstream in(names_text);
  for (std::string name; std::getline(in, name);)
    if (!name.empty()) names.push_back(name);
  if (!error.empty() || names.empty() ||
      !std::all_of(names.begin(), names.end(), is_host_name))
    return "scontrol show hostnames could not expand the allocation's nodes" +
           (error.empty() ? ": " + first_line(names_text) : " (" + error + ")");
  std::vector<int> cpus;
  try {
    cpus = expand_cpus_per_node(env("SLURM_JOB_CPUS_PER_NODE"));
  } catch (const std::invalid_argument& e) {
    return std::string("SLURM_JOB_CPUS_PER_NODE: ") + e.what();
  }
  if (cpus.size() != names.size())
    return "SLURM_JOB_CPUS_PER_NODE gives " + std::to_string(cpus.size()) + " nodes, " +
           "SLURM_JOB_NODELIST " + std::to_string(names.size());

  const std::string sinfo_text = slurm_command(
      {"sinfo", "--noheader", "--Node", "--nodes=" + list, "--format=%N|%f|%P|%T"}, 30, error);
  std::map<std::string, SlurmNode> described;
  if (!error.empty()) return "sinfo failed (" + error + ")";
  try {
    described = read_sinfo_nodes(sinfo_text);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  const std::string partition = env("SLURM_JOB_PARTITION");
  for (size_t i = 0; i < names.size(); ++i) {
    hosts::HostSpec node;
    node.name = node.address = names[i];
    node.slots = cpus[i];
    auto it = described.find(names[i]);
    if (it == described.end()) {
      node.site = is_host_name(partition) ? partition : "slurm";
      c.out[node.name] = "sinfo does not list it";
    } else {
      node.site = site_of(it->second, partition);
      if (const std::string why = unusable_state(it->second.state); !why.empty())
        c.out[node.name] = why;
    }
    c.nodes.push_back(node);
  }
  return "";
}

// Probes the nodes through one srun step, one task per node, bounded by the probe timeout.
std::vector<hosts::ProbeResult> probe_through_srun(const std::vector<hosts::HostSpec>& nodes,
                                                   const hosts::ProbeOptions& probe,
                                                   double timeout_s) {
  std::vector<hosts::ProbeResult> results(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) results[i].host = nodes[i];
  if (nodes.empty()) return results;
  std::string list;
  for (const auto& n : nodes) list += (list.empty() ? "" : ",") + n.name;
  const std::string script = "echo node \"$SLURMD_NODENAME\"; " + hosts::probe_script(probe);
  const std::string n = std::to_string(nodes.size());
  // --overlap: the probe may share the CPUs of steps already running (an sbatch script's);
  // timeout ends the step (srun cancels it on SIGTERM) when a node does not answer in time.
  const long long bound = static_cast<long long>(timeout_s + 0.999);
  const std::vector<std::string> argv = {
      "timeout",      "-s",          "TERM",    "-k",           "3",
      std::to_string(bound),         "srun",    "--nodes=" + n, "--ntasks=" + n,
      "--ntasks-per-node=1",         "--nodelist=" + list,      "--overlap",
      "--label",      "--input=none", "--kill-on-bad-exit=0",   "--job-name=bsprun-probe",
      "/bin/sh",      "-c",          script};
  const auto start = std::chrono::steady_clock::now();
  std::string error;
  const std::string text =
      run_sh_here("exec " + shell_quote_command(argv) + " 2>&1", timeout_s + 10, error);
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::string other;
  const std::map<std::string, std::string> answers = split_probe_output(text, other);
  for (auto& r : results) {
    r.elapsed_s = elapsed;
    auto it = answers.find(r.host.name);
    if (it == answers.end()) {
      const std::string said = first_line(other);
      r.error = "no answer through srun" +
                (elapsed >= timeout_s ? " within " + std::to_string(bound) + " s" : "") +
                (said.empty() ? "" : " (" + said + ")");
      continue;
    }
    if (std::string problem = hosts::read_probe_script_output(it->second, !probe.program.empty(), r);
        !problem.empty()) {
      r.error = problem;
      continue;
    }
    r.ok = true;
  }
  return results;
}

std::string current_directory() {
  char buf[PATH_MAX];
  return getcwd(buf, sizeof buf) ? buf : "";
}

// The ids of the job's steps that Slurm lists now ("123.0", ...); empty when squeue fails.
std::set<std::string> job_steps(const std::string& job) {
  std::string error;
  const std::string text = slurm_command(
      {"squeue", "--noheader", "--steps", "--jobs=" + job, "--format=%i"}, 15, error);
  std::set<std::string> steps;
  if (!error.empty()) return steps;
  std::istringstream in(text);
  for (std::string id; in >> id;)
    if (id.compare(0, job.size() + 1, job + ".") == 0) steps.insert(id);
  return steps;
}

// Ends the job's steps this run started that are still there (a starter that was killed cannot
// end its own step). Says which.
void end_left_steps(const std::string& job, const std::set<std::string>& before) {
  for (const auto& step : job_steps(job)) {
    if (before.count(step)) continue;
    std::string error;
    slurm_command({"scancel", "--quiet", step}, 15, error);
    say("Slurm step " + step + " of the job was still running: cancelled it (scancel " + step +
        ")");
  }
}

}  // namespace

int run_slurm(const Options& opt, const MpiSettings& base_settings) {
  const std::string job = slurm_job_id();
  if (!std::all_of(job.begin(), job.end(), [](unsigned char c) { return std::isdigit(c); }) ||
      job.size() > 20)
    return fail(kExitLaunchFailed, "SLURM_JOB_ID='" + job + "' is not a Slurm job id");
  if (opt.stage)
    return fail(kExitUsage,
                "--stage is not available inside a Slurm allocation: copy the program to the "
                "nodes with Slurm's sbcast, or run it from a shared file system");
  if (opt.restarts > 0 || opt.resume || opt.migrate_load > 0)
    return fail(kExitUsage,
                "--restarts, --resume and --migrate-load are not available inside a Slurm "
                "allocation yet (the Slurm path starts the job once); run without them, or with "
                "--hostfile for the SSH path");
  if (!opt.rsl_in.empty())
    return fail(kExitUsage,
                "--rsl inside a Slurm allocation is not available yet: run with -p N, or give "
                "--hostfile for the SSH path");

  ResolvedProgram prog = resolve_program(opt.program);
  if (prog.problem == ResolvedProgram::kNotFound) return fail(kExitNotFound, prog.message);
  if (prog.problem != ResolvedProgram::kNone) return fail(kExitNotExecutable, prog.message);

  SlurmCandidates candidates;
  if (const std::string why = read_allocation(candidates); !why.empty())
    return fail(kExitLaunchFailed, "inside Slurm job " + job + ": " + why);
  std::vector<hosts::HostSpec> asked;
  for (const auto& n : candidates.nodes)
    if (!candidates.out.count(n.name)) asked.push_back(n);
  std::cerr << "bsprun: inside Slurm job " << job << ": probing its " << asked.size() << " node"
            << (asked.size() == 1 ? "" : "s") << " through srun (timeout " << opt.probe_timeout_s
            << " s; no ssh)\n";

  hosts::ProbeOptions probe;
  probe.program = prog.path;
  const auto probe_start = std::chrono::steady_clock::now();
  std::vector<hosts::ProbeResult> asked_probes =
      probe_through_srun(asked, probe, opt.probe_timeout_s);
  const double probe_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - probe_start).count();
  std::vector<hosts::ProbeResult> probes;
  for (size_t i = 0, next = 0; i < candidates.nodes.size(); ++i) {
    if (auto it = candidates.out.find(candidates.nodes[i].name); it != candidates.out.end()) {
      hosts::ProbeResult left;
      left.host = candidates.nodes[i];
      left.error = it->second;
      probes.push_back(left);
    } else {
      probes.push_back(asked_probes[next++]);
    }
  }

  int wanted = opt.nprocs;
  if (wanted == 0)
    wanted = opt.max_procs > 0 ? opt.max_procs : std::max(1, usable_slot_total(probes));
  Allocation allocation;
  try {
    allocation = allocate(probes, wanted);
  } catch (const AllocationError& e) {
    std::cerr << format_probe_table(probes);
    return fail(kExitLaunchFailed, std::string(e.what()) + "; nothing was started");
  }
  std::cerr << format_probe_table(allocation);
  if (opt.verbose) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "probing through srun took %.2f s", probe_s);
    say(buf);
  }
  if (const ProgramProblem problem = program_problem(allocation, prog.path);
      problem.exit_status != 0)
    return fail(problem.exit_status, problem.message + "; nothing was started");

  std::vector<rsl::Subjob> subjobs =
      subjobs_for(allocation, prog.path, opt.program_args, current_directory());
  MpiSettings settings = base_settings;
  settings.through_slurm = true;
  if (opt.nprocs == 0) subjobs = {master_subjob(allocation, subjobs, settings)};
  if (int status = write_allocation(opt, subjobs, true); status != 0 || opt.dry_run)
    return status;

  settings.job_marker = new_job_marker();
  std::vector<std::string> argv;
  try {
    argv = is_master(subjobs) ? master_grid_mpirun_argv(settings, subjobs[0], "")
                              : grid_mpirun_argv(settings, subjobs, "");
  } catch (const std::invalid_argument& e) {
    return fail(kExitLaunchFailed, std::string("bad allocation: ") + e.what());
  }
  const std::set<std::string> steps_before = job_steps(job);
  JobWatch watch;
  watch.starter_may_wait_for_ever = !settings.mpi->ends_on_start_failure();
  const RunResult result = run_mpirun(argv, opt.verbose, opt.time_limit_s, {}, watch);
  if (result.exit_status != 0 || result.forwarded_signal != 0 || result.timed_out)
    end_left_steps(job, steps_before);
  return exit_status_of(result, opt.time_limit_s);
}

}  // namespace bspg::launcher
