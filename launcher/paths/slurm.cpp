// slurm.cpp - bsprun's Slurm path: the allocation's nodes -> probe through srun -> allocate ->
// RSL -> one starter whose Slurm launcher makes one job step.
#include "slurm.h"

#include <arpa/inet.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include "allocate.h"
#include "checkpoints.h"
#include "grid.h"
#include "localhost.h"
#include "place_support.h"
#include "profile_run.h"
#include "remote_stop.h"
#include "runner.h"
#include "say.h"
#include "srun_relay.h"
#include "subjob_checks.h"

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

// A name that reaches the starter's command line or a message: the rule every host name of
// bsprun's follows (untrusted.h).
bool is_host_name(const std::string& name) { return untrusted::host_name_problem(name).empty(); }

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

// The address srun's tasks last saw this machine at (run_on_nodes), "" before any answered.
std::string& seen_launch_address() {
  static std::string address;
  return address;
}

bool is_ip_address(const std::string& text) {
  unsigned char buf[sizeof(struct in6_addr)];
  return inet_pton(AF_INET, text.c_str(), buf) == 1 || inet_pton(AF_INET6, text.c_str(), buf) == 1;
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
  std::vector<hosts::HostSpec> nodes;      // in Slurm's order, slots = the job's CPUs there
  std::map<std::string, std::string> out;  // nodes that cannot take processes, and why
};

// "" or, in one line, why the MPI cannot start processes on one of the allocation's nodes.
std::string refused_node(const SlurmCandidates& c, const Mpi& mpi) {
  for (const hosts::HostSpec& node : c.nodes)
    if (const std::string why = mpi.host_name_refused(node.name); !why.empty())
      return "node " + node.name + ": " + why + "; use a bspg built with Open MPI 5 or MPICH";
  return "";
}

// The allocation's nodes, their CPUs for this job, their sites and states. "" or why not.
std::string read_allocation(SlurmCandidates& c) {
  const std::string list = env("SLURM_JOB_NODELIST").empty() ? env("SLURM_NODELIST")
                                                             : env("SLURM_JOB_NODELIST");
  if (!is_host_list(list))
    return "SLURM_JOB_NODELIST='" + list + "' is not a Slurm host list (is this an allocation?)";
  std::string error;
  const std::string names_text = slurm_command({"scontrol", "show", "hostnames", list}, 30, error);
  std::vector<std::string> names;
  std::istringstream in(names_text);
  for (std::string name; std::getline(in, name);)
    if (!name.empty()) names.push_back(name);
  if (!error.empty() || names.empty() || !std::all_of(names.begin(), names.end(), is_host_name))
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

// The user's name, for the node-local checkpoint directory.
std::string user_name() {
  const std::string user = env("USER").empty() ? env("LOGNAME") : env("USER");
  if (is_host_name(user)) return user;
  return std::to_string(getuid());
}

// Slurm's node-local storage (its TmpFS setting, /tmp by default).
std::string node_local_storage() {
  std::string error;
  const std::string text = slurm_command({"scontrol", "show", "config"}, 15, error);
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.compare(0, 5, "TmpFS") != 0) continue;
    const size_t eq = line.find('=');
    if (eq == std::string::npos) break;
    std::string value = line.substr(eq + 1);
    value.erase(0, value.find_first_not_of(' '));
    if (!value.empty() && value[0] == '/' &&
        untrusted::checkpoint_dir_problem(value + "/x").empty())
      return value;
    break;
  }
  return "/tmp";
}

// Environment variables set while the object lives, each put back as it was (or unset) after.
class ScopedVariables {
 public:
  ScopedVariables() = default;
  ~ScopedVariables() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
      if (it->second)
        setenv(it->first.c_str(), it->second->c_str(), 1);
      else
        unsetenv(it->first.c_str());
    }
  }
  ScopedVariables(const ScopedVariables&) = delete;
  ScopedVariables& operator=(const ScopedVariables&) = delete;

  void set(const std::string& name, const std::string& value) {
    const char* old = std::getenv(name.c_str());
    saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
    setenv(name.c_str(), value.c_str(), 1);
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

// While it lives, Slurm's variables that describe the allocation name only the nodes the
// subjobs use (with the job's CPUs on each, as the allocation gave them), and every srun the
// starter runs shares CPUs with other steps (SLURM_OVERLAP, srun's --overlap): a step of an
// earlier run that lost a node stays listed, holding its CPUs, until Slurm gives that node up,
// and the restarted run's daemons must not wait for it. (Open MPI's plm/slurm is also given
// --overlap in plm_slurm_args; MPICH's Hydra has no option that every version reads.)
class ScopedSlurmNodes {
 public:
  // nodes: the run's, in the allocation's order (which is the order of srun's tasks, the
  // daemons' ranks), each with the job's CPUs there as its slots (plan_slurm's chosen hosts).
  explicit ScopedSlurmNodes(const std::vector<hosts::HostSpec>& nodes) {
    variables_.set("SLURM_OVERLAP", "1");
    std::string list, counts;
    for (const auto& node : nodes) {
      list += (list.empty() ? "" : ",") + node.name;
      counts += (counts.empty() ? "" : ",") + std::to_string(node.slots);
    }
    const std::string n = std::to_string(nodes.size());
    for (const auto& [name, value] :
         std::vector<std::pair<const char*, std::string>>{{"SLURM_JOB_NODELIST", list},
                                                          {"SLURM_NODELIST", list},
                                                          {"SLURM_JOB_CPUS_PER_NODE", counts},
                                                          {"SLURM_TASKS_PER_NODE", counts},
                                                          {"SLURM_JOB_NUM_NODES", n},
                                                          {"SLURM_NNODES", n}})
      variables_.set(name, value);
  }

 private:
  ScopedVariables variables_;
};

// Where the job recovers in place, Open MPI 5's daemons start through bsprun's srun relay
// (srun_relay.h): a private directory holding `srun`, first on PATH while the object lives (the
// starter reads PATH; bsprun's own steps pass through the relay to the real srun unchanged).
class SrunRelayOnPath {
 public:
  SrunRelayOnPath(const std::string& bsprun, bool verbose) {
    const std::string real = search_path("srun");
    std::string error;
    const std::string config = slurm_command({"scontrol", "show", "config"}, 10, error);
    int port = 6818;  // Slurm's default SlurmdPort
    if (const std::size_t at = config.find("\nSlurmdPort "); at != std::string::npos) {
      const std::size_t value = config.find_first_of("0123456789", at);
      if (value != std::string::npos) port = std::atoi(config.c_str() + value);
    }
    const std::string script = srun_relay_script(bsprun, real, port);
    const char* tmp = std::getenv("TMPDIR");
    std::string dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/bspg-srun-XXXXXX";
    if (script.empty() || port <= 0 || port > 65535 || mkdtemp(dir.data()) == nullptr) {
      if (verbose) say("the MPI's daemons start through srun itself: a lost node ends the job");
      return;
    }
    dir_ = dir;
    const std::string path = dir_ + "/srun";
    std::ofstream file(path);
    file << script;
    file.close();
    if (!file || chmod(path.c_str(), 0700) != 0) {
      remove();
      return;
    }
    const char* old = std::getenv("PATH");
    path_.set("PATH", dir_ + (old ? ":" + std::string(old) : ""));
  }
  ~SrunRelayOnPath() {
    if (!dir_.empty()) remove();
  }
  SrunRelayOnPath(const SrunRelayOnPath&) = delete;
  SrunRelayOnPath& operator=(const SrunRelayOnPath&) = delete;

 private:
  void remove() {
    unlink((dir_ + "/srun").c_str());
    rmdir(dir_.c_str());
    dir_.clear();
  }

  std::string dir_;
  ScopedVariables path_;  // PATH with dir_ first
};

}  // namespace

NodeOutputs run_on_nodes(const std::vector<std::string>& nodes, const std::string& script,
                         double timeout_s, const std::string& step_name) {
  NodeOutputs outputs;
  if (nodes.empty()) return outputs;
  std::string list;
  for (const auto& n : nodes) list += (list.empty() ? "" : ",") + n;
  const std::string n = std::to_string(nodes.size());
  // --overlap: the step may share the CPUs of steps already running (an sbatch script's);
  // timeout ends the step (srun cancels it on SIGTERM) when a node does not answer in time.
  const double bound = std::max(1.0, timeout_s);
  char bound_text[32];
  std::snprintf(bound_text, sizeof bound_text, "%.2f", bound);
  const std::vector<std::string> argv = {"timeout",
                                         "-s",
                                         "TERM",
                                         "-k",
                                         "3",
                                         bound_text,
                                         "srun",
                                         "--nodes=" + n,
                                         "--ntasks=" + n,
                                         "--ntasks-per-node=1",
                                         "--nodelist=" + list,
                                         "--overlap",
                                         "--label",
                                         "--input=none",
                                         "--kill-on-bad-exit=0",
                                         "--job-name=" + step_name,
                                         "/bin/sh",
                                         "-c",
                                         "echo node \"$SLURMD_NODENAME\"; echo launcher "
                                         "\"$SLURM_LAUNCH_NODE_IPADDR\"; " +
                                             script};
  const auto start = std::chrono::steady_clock::now();
  std::string error;
  // The nodes that answer have printed by the bound: srun's own end, which waits for a node that
  // does not answer (frozen) up to timeout's -k, is not waited for.
  const std::string text =
      run_sh_here("exec " + shell_quote_command(argv) + " 2>&1", bound + 0.3, error, 5);
  outputs.elapsed_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  outputs.timed_out = outputs.elapsed_s >= bound;
  outputs.by_node = split_probe_output(text, outputs.srun_said);
  // Each node's second line names the address srun connected from: taken out of its output.
  for (auto& [node, output] : outputs.by_node) {
    if (output.compare(0, 9, "launcher ") != 0) continue;
    const size_t end = output.find('\n');
    const std::string address = output.substr(9, end == std::string::npos ? end : end - 9);
    output.erase(0, end == std::string::npos ? output.size() : end + 1);
    if (outputs.launch_address.empty() && is_ip_address(address)) outputs.launch_address = address;
  }
  if (!outputs.launch_address.empty()) seen_launch_address() = outputs.launch_address;
  return outputs;
}

std::vector<std::string> silent_nodes(const std::vector<std::string>& nodes, double timeout_s,
                                      std::string* srun_said) {
  const NodeOutputs answers = run_on_nodes(nodes, "true", timeout_s, "bsprun-check");
  if (srun_said) *srun_said = first_line(answers.srun_said);
  std::vector<std::string> silent;
  for (const auto& node : nodes)
    if (!answers.by_node.count(node)) silent.push_back(node);
  return silent;
}

std::vector<std::string> one_task_step(const std::string& node, double timeout_s,
                                       const std::string& job_name) {
  const std::string bound = std::to_string(std::max(1LL, static_cast<long long>(timeout_s)));
  return {"timeout",    "-s",
          "TERM",       "-k",
          "3",          bound,
          "srun",       "--nodes=1",
          "--ntasks=1", "--nodelist=" + node,
          "--overlap",  "--job-name=" + job_name};
}

std::string copy_between_nodes(const std::string& from, const std::string& from_path,
                               const std::string& to, const std::string& to_path,
                               double timeout_s) {
  char local[] = "/tmp/bsprun-copy-XXXXXX";
  const int fd = mkstemp(local);
  if (fd < 0) return std::string("cannot make a file in /tmp: ") + std::strerror(errno);
  close(fd);
  const auto one_task = [&](const std::string& node) {
    std::vector<std::string> argv = one_task_step(node, timeout_s + 1, "bsprun-copy");
    argv.push_back("--kill-on-bad-exit=1");
    return argv;
  };
  std::vector<std::string> read_argv = one_task(from);
  read_argv.insert(read_argv.end(), {"cat", "--", from_path});
  std::vector<std::string> write_argv = one_task(to);
  write_argv.insert(write_argv.end(),
                    {"/bin/sh", "-c",
                     "umask 077 && mkdir -p \"${1%/*}\" && cat > \"$1.part\" && "
                     "mv -f \"$1.part\" \"$1\"",
                     "sh", to_path});
  std::string error;
  const std::string said = run_sh_here(
      shell_quote_command(read_argv) + " > " + shell_quote_command({local}) +
          " 2>/dev/null </dev/null && " + shell_quote_command(write_argv) + " < " +
          shell_quote_command({local}) + " 2>&1 || echo failed",
      2 * timeout_s + 20, error);
  unlink(local);
  if (!error.empty()) return "copying " + from + ":" + from_path + " to " + to + " " + error;
  if (said.find("failed") != std::string::npos)
    return "copying " + from + ":" + from_path + " to " + to + ":" + to_path + " failed: " +
           first_line(said);
  return "";
}

namespace {

// Where host (or a "host:N" entry) stands among the allocation's nodes; nodes.size() if nowhere.
size_t node_position(const std::vector<hosts::HostSpec>& nodes, const std::string& entry) {
  const std::string host = entry.substr(0, entry.rfind(':'));
  for (size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].name == host) return i;
  return nodes.size();
}

// The starters' Slurm support numbers the processes of a subjob in the allocation's order of the
// nodes, whatever order the hosts are named in: names them in that order, so that the plan says
// where each process runs (the restart loop brings each its checkpoint there).
void name_hosts_in_node_order(std::vector<rsl::Subjob>& subjobs,
                              const std::vector<hosts::HostSpec>& nodes) {
  for (auto& sj : subjobs)
    std::stable_sort(sj.hosts.begin(), sj.hosts.end(),
                     [&](const std::string& a, const std::string& b) {
                       return node_position(nodes, a) < node_position(nodes, b);
                     });
}

}  // namespace

int plan_slurm(const SlurmJob& job, const std::map<std::string, std::string>& left_out,
               bool show_table, GridPlan& plan) {
  const Options& opt = job.opt;
  SlurmCandidates candidates;
  if (const std::string why = read_allocation(candidates); !why.empty())
    return fail(kExitLaunchFailed, "inside Slurm job " + job.job_id + ": " + why);
  if (const std::string why = refused_node(candidates, *job.settings.mpi); !why.empty())
    return fail(kExitLaunchFailed, "inside Slurm job " + job.job_id + ": " + why);
  // A restart shows no table: name the nodes Slurm now keeps from it (drained since, down).
  if (!show_table)
    for (const auto& [name, why] : candidates.out)
      if (!left_out.count(name)) say("leaving out " + name + " (" + why + ")");
  for (const auto& [name, why] : left_out) candidates.out.emplace(name, why);
  std::vector<std::string> asked;
  for (const auto& n : candidates.nodes)
    if (!candidates.out.count(n.name)) asked.push_back(n.name);
  if (show_table)
    std::cerr << "bsprun: inside Slurm job " << job.job_id << ": probing its " << asked.size()
              << " node" << (asked.size() == 1 ? "" : "s") << " through srun (timeout "
              << opt.probe_timeout_s << " s; no ssh)\n";

  hosts::ProbeOptions probe;
  probe.program = job.program;
  const NodeOutputs answers =
      run_on_nodes(asked, hosts::probe_script(probe), opt.probe_timeout_s, "bsprun-probe");
  std::vector<hosts::ProbeResult> probes;
  for (const auto& node : candidates.nodes) {
    hosts::ProbeResult r;
    r.host = node;
    r.elapsed_s = answers.elapsed_s;
    if (auto out = candidates.out.find(node.name); out != candidates.out.end()) {
      r.error = out->second;
    } else if (auto it = answers.by_node.find(node.name); it == answers.by_node.end()) {
      const std::string said = first_line(answers.srun_said);
      r.error = std::string("no answer through srun") +
                (answers.timed_out ? " in time" : "") + (said.empty() ? "" : " (" + said + ")");
    } else if (std::string problem = hosts::read_probe_script_output(it->second, true, r);
               !problem.empty()) {
      r.error = problem;
    } else {
      r.ok = true;
    }
    probes.push_back(r);
  }

  Allocation& allocation = plan.allocation;
  if (const int status = allocate_processes(opt, probes, show_table, allocation); status != 0)
    return status;
  if (opt.verbose) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "probing through srun took %.2f s", answers.elapsed_s);
    say(buf);
  }
  if (const ProgramProblem problem = program_problem(allocation, job.program);
      problem.exit_status != 0)
    return fail(problem.exit_status, problem.message + "; nothing was started");

  plan.subjobs = subjobs_for(allocation, job.program, opt.program_args, current_directory());
  plan.spares = spare_subjobs(allocation, opt.nprocs > 0 ? job.settings.spares : 0, job.program,
                              opt.program_args, current_directory(), nullptr);
  name_hosts_in_node_order(plan.subjobs, candidates.nodes);
  if (opt.nprocs == 0) {
    // The starter puts the one process it starts, the master, on the first of the run's nodes
    // in the allocation's order, whatever the slots say: that node's first slot becomes the
    // master's, so that bsp_begin's spawn finds room where the others were planned.
    Allocation master_first = allocation;
    std::vector<int>& slots = master_first.placement;
    const auto position = [&](int candidate) {
      return node_position(candidates.nodes,
                           allocation.candidates[static_cast<size_t>(candidate)].probe.host.name);
    };
    const auto first = std::min_element(slots.begin(), slots.end(),
                                        [&](int a, int b) { return position(a) < position(b); });
    std::rotate(slots.begin(), first, first + 1);
    plan.subjobs = {master_subjob(master_first, plan.subjobs, job.settings)};
  }
  plan.chosen = chosen_hosts(allocation);
  return 0;
}

RunResult run_slurm_subjobs(const SlurmJob& job, const GridPlan& plan, const MpiSettings& base,
                            bool quiet_losses, double time_limit_s, const SlurmInPlace& in_place,
                            std::string* lost_node) {
  const std::vector<rsl::Subjob>& subjobs = plan.subjobs;
  MpiSettings settings = base;
  settings.through_slurm = true;
  settings.slurm_launch_address = seen_launch_address();
  if (settings.job_marker.empty()) settings.job_marker = new_job_marker();
  std::vector<std::string> argv;
  try {
    argv = is_master(subjobs) ? master_grid_mpirun_argv(settings, subjobs[0], "")
                              : grid_mpirun_argv(settings, subjobs, "", plan.spares);
  } catch (const std::invalid_argument& e) {
    RunResult bad;
    bad.started = false;
    bad.error = std::string("bad allocation: ") + e.what();
    return bad;
  }
  const std::set<std::string> steps_before = job_steps(job.job_id);
  // The starter's Slurm support reads the allocation from these variables and starts a daemon
  // on every node they name: they name the nodes of this run alone, so that a node lost earlier
  // (still in the allocation with --no-kill) is not waited for.
  // With spares, their nodes too, in the allocation's order.
  std::vector<hosts::HostSpec> run_nodes = plan.chosen;
  if (!plan.spares.empty()) {
    run_nodes.clear();
    for (const auto& c : plan.allocation.candidates)
      if (c.count > 0 ||
          std::any_of(plan.spares.begin(), plan.spares.end(),
                      [&](const rsl::Subjob& spare) { return spare.contact == c.probe.host.name; }))
        run_nodes.push_back(c.probe.host);
  }
  ScopedSlurmNodes nodes(run_nodes);
  JobWatch watch;
  watch.quiet_losses = quiet_losses;
  // A process of the job stopped, or a node silent, for --host-timeout, where spares or the
  // timeout are asked for (each round is a step Slurm records; with --restarts alone Slurm's own
  // watch of its nodes is left to do). Made after the nodes' variables are set and gone before
  // they are put back: its srun steps read them.
  // A node killed with its daemon (the job's processes' connections closed with it) is held
  // silent to a starter that would end the job for it (srun_relay.h). Before the watch's thread
  // starts: PATH changes here.
  std::optional<SrunRelayOnPath> relay;
  if (settings.spares > 0 && in_place.leave_silent) relay.emplace(this_bsprun(), settings.verbose);
  std::optional<SlurmNodeWatch> watched_nodes;
  if (job.opt.host_timeout_given || settings.spares > 0) {
    std::vector<std::string> watched;
    for (const auto& node : run_nodes) watched.push_back(node.name);
    watched_nodes.emplace(watched, settings.job_marker, job.opt.host_timeout_s,
                          job.opt.probe_timeout_s, settings.spares > 0, settings.verbose,
                          settings.spares > 0 ? in_place : SlurmInPlace{});
    watch.lost = [&watched_nodes] { return watched_nodes->lost(); };
    watch.lost_host = [&watched_nodes] { return watched_nodes->lost_host(); };
    if (settings.spares > 0 && in_place.leave_silent) {
      watch.recovered = in_place.recovered;
      watch.hosts_left = in_place.nodes_left;
      watch.not_recovered = [&watched_nodes] { watched_nodes->recovery_refused(); };
      watch.daemon_gone = [&watched_nodes](const std::string& node) {
        watched_nodes->node_gone(node);
      };
    }
  }
  watch.starter_may_wait_for_ever = !settings.mpi->ends_on_start_failure();
  watch.unreachable = [&] {
    std::vector<std::string> nodes;
    for (const auto& h : plan.chosen) nodes.push_back(h.name);
    std::vector<std::string> silent = silent_nodes(nodes, job.opt.probe_timeout_s);
    for (auto& node : silent) node += " (no answer through srun)";
    return silent;
  };
  RunResult result = run_mpirun(argv, settings.verbose, time_limit_s, {}, watch);
  if (lost_node) *lost_node = watched_nodes ? watched_nodes->lost_host() : "";
  // PRRTE's 20 lines when srun no longer runs for it, after which it may exit 0: one line, and
  // none when the allocation has ended (bsprun says that).
  if (!result.slurm_starter_refused.empty() && result.exit_status == 0) result.exit_status = 1;
  const bool ended_badly =
      result.exit_status != 0 || result.forwarded_signal != 0 || result.timed_out;
  const bool allocation_lives =
      ended_badly && allocation_end(job.job_id).kind == AllocationEnd::kRunning;
  if (!result.slurm_starter_refused.empty() && allocation_lives)
    std::cerr << "bsprun: inside Slurm job " << job.job_id
              << ": Open MPI's starter (PRRTE) cannot start through Slurm: it reads no Slurm "
                 "version it supports from srun --version\n";
  if (allocation_lives) end_left_steps(job.job_id, steps_before);
  // The records each node's processes wrote into DIR there (node-local storage), brought here;
  // a node whose DIR is this one (a shared file system) has nothing to bring.
  if (profiling()) {
    std::vector<std::string> nodes, silent;
    for (const auto& h : plan.chosen) nodes.push_back(h.name);
    if (result.exit_status != 0 || result.timed_out)
      for (const std::string& node : watch.unreachable())  // "node (why)"
        silent.push_back(node.substr(0, node.find(' ')));
    gather_profile(nodes, silent,
                   {[](const std::string& node) {
                      std::vector<std::string> argv = one_task_step(node, 60, "bsprun-profile");
                      argv.insert(argv.end(), {"--quiet", "/bin/sh", "-s"});
                      return argv;
                    },
                    "srun"});
  }
  return result;
}

AllocationEnd read_allocation_end(const std::string& text) {
  AllocationEnd end;
  // A job Slurm no longer knows (purged after MinJobAge) has ended, for whatever reason.
  if (text.find("Invalid job id") != std::string::npos) {
    end.kind = AllocationEnd::kOther;
    end.why = "has ended (Slurm no longer lists it)";
    return end;
  }
  // The fields after UserId: JobName, before it, is the user's and may hold any text.
  const std::size_t user = text.find(" UserId=");
  const auto field = [&](const std::string& name) {
    const std::string key = " " + name + "=";
    std::size_t at = text.find(key, user == std::string::npos ? 0 : user);
    if (at == std::string::npos) return std::string();
    at = text.find('=', at) + 1;
    return text.substr(at, text.find_first_of(" \n", at) - at);
  };
  const std::string state = field("JobState"), reason = field("Reason");
  if (state.empty()) return end;  // scontrol said nothing usable: assume it lives
  if (state == "TIMEOUT" || state == "DEADLINE" || reason == "TimeLimit") {
    end.kind = AllocationEnd::kTimeLimit;
    end.why = state == "DEADLINE" ? "reached its deadline" : "reached its time limit";
  } else if (state == "CANCELLED" ||
             (state == "COMPLETING" && (reason.empty() || reason == "None"))) {
    // A job completing while bsprun (its command, or part of its batch script) still runs, with
    // no reason given, was cancelled: Slurm says CANCELLED once its processes are gone.
    end.kind = AllocationEnd::kCancelled;
    end.why = "was cancelled";
  } else if (state == "PREEMPTED") {
    end.kind = AllocationEnd::kCancelled;
    end.why = "was preempted";
  } else if (state == "RUNNING" || state == "SUSPENDED" || state == "CONFIGURING" ||
             state == "RESIZING" || state == "PENDING" || state == "REQUEUED") {
    return end;
  } else {
    // NODE_FAIL, FAILED, COMPLETED, BOOT_FAIL, OUT_OF_MEMORY, COMPLETING for another reason...
    end.kind = AllocationEnd::kOther;
    std::string said = state;
    std::transform(said.begin(), said.end(), said.begin(),
                   [](unsigned char c) { return c == '_' ? ' ' : std::tolower(c); });
    end.why = "has ended (Slurm says: " + untrusted::excerpt(said, 40) +
              (reason.empty() || reason == "None" ? "" : ", " + untrusted::excerpt(reason, 40)) +
              ")";
  }
  return end;
}

AllocationEnd allocation_end(const std::string& job_id) {
  std::string error;
  const std::string text = slurm_command({"scontrol", "show", "job", "-o", job_id}, 5, error);
  return read_allocation_end(text + error);
}

namespace {

// --rsl FILE inside an allocation: the allocation as written (by bsprun's --rsl-out, here or in an
// earlier allocation of the same nodes), checked against this allocation's nodes and the CPUs
// Slurm gives the job on each, started through Slurm.
int replay_in_allocation(const Options& opt, const MpiSettings& settings,
                         const std::string& job_id) {
  SlurmCandidates candidates;
  if (const std::string why = read_allocation(candidates); !why.empty())
    return fail(kExitLaunchFailed, "inside Slurm job " + job_id + ": " + why);
  if (const std::string why = refused_node(candidates, *settings.mpi); !why.empty())
    return fail(kExitLaunchFailed, "inside Slurm job " + job_id + ": " + why);
  std::vector<rsl::Subjob> subjobs;
  HostFileLimits nodes{"Slurm job " + job_id, candidates.nodes, true};
  try {
    subjobs = rsl::read_allocation_file(opt.rsl_in);
    check_subjobs(subjobs, opt.rsl_in, &nodes);
    for (const auto& sj : subjobs)
      for (const auto& h : master_slot_hosts(sj))
        if (!hosts::find_host(candidates.nodes, h.host))
          throw std::invalid_argument("the master's slots (BSPG_MASTER_SLOTS) name " + h.host +
                                      ", which is not a node of Slurm job " + job_id);
  } catch (const std::exception& e) {
    return fail(kExitLaunchFailed, e.what());
  }
  const bool master = is_master(subjobs);
  if (const std::string why = settings.mpi->grid_master_unavailable("inside a Slurm allocation");
      master && !why.empty() && !opt.dry_run)
    return fail(kExitLaunchFailed, why);

  // The nodes the allocation uses, in Slurm's order (the starters number processes in it), each
  // with the job's CPUs there; none that Slurm now keeps from jobs.
  std::set<std::string> used;
  for (const auto& sj : subjobs) {
    for (const auto& h : rsl::placement(sj)) used.insert(h.host);
    for (const auto& h : master_slot_hosts(sj)) used.insert(h.host);
  }
  GridPlan plan;
  for (const auto& node : candidates.nodes) {
    if (!used.count(node.name)) continue;
    if (auto out = candidates.out.find(node.name); out != candidates.out.end())
      return fail(kExitLaunchFailed, opt.rsl_in + ": node " + node.name + " cannot take the " +
                                         "job's processes (" + out->second + ")");
    plan.chosen.push_back(node);
  }
  name_hosts_in_node_order(subjobs, candidates.nodes);
  plan.subjobs = subjobs;
  if (opt.dry_run) {
    std::cout << rsl::write_allocation(subjobs);
    return 0;
  }
  // One step on the nodes, in place of the probe: each must answer, and the address they see
  // this machine at is the one MPICH's proxies are to connect back to (run_slurm_subjobs).
  std::vector<std::string> names;
  for (const auto& node : plan.chosen) names.push_back(node.name);
  std::string srun_said;
  if (const auto silent = silent_nodes(names, opt.probe_timeout_s, &srun_said); !silent.empty())
    return fail(kExitLaunchFailed,
                opt.rsl_in + ": node " + silent.front() + " gives no answer through srun" +
                    (srun_said.empty() ? "" : " (" + srun_said + ")") + "; nothing was started");
  long long total = 0;
  for (const auto& sj : subjobs) total += sj.count;
  say("inside Slurm job " + job_id + ": running " + opt.rsl_in +
      (master ? ": the master, in master mode"
              : ": " + std::to_string(total) + " processes in " + std::to_string(subjobs.size()) +
                    " subjob" + (subjobs.size() == 1 ? "" : "s")) +
      " (no probe; no ssh)");
  SlurmJob job{opt, settings, "", job_id};
  return exit_status_of(run_slurm_subjobs(job, plan, settings, false, opt.time_limit_s),
                        opt.time_limit_s);
}

}  // namespace

int run_slurm(const Options& given, const MpiSettings& settings) {
  const std::string job_id = slurm_job_id();
  if (job_id.empty() || job_id.size() > 20 ||
      !std::all_of(job_id.begin(), job_id.end(), [](unsigned char c) { return std::isdigit(c); }))
    return fail(kExitLaunchFailed, "SLURM_JOB_ID='" + job_id + "' is not a Slurm job id");
  if (given.stage)
    return fail(kExitUsage,
                "--stage is not available inside a Slurm allocation: copy the program to the "
                "nodes with Slurm's sbcast, or run it from a shared file system");
  if (given.migrate_load > 0)
    return fail(kExitUsage,
                "--migrate-load is not available inside a Slurm allocation: Slurm gives the job "
                "its CPUs, so no owner comes back to them");
  if (!given.rsl_in.empty()) return replay_in_allocation(given, settings, job_id);
  if (const std::string why = settings.mpi->grid_master_unavailable("inside a Slurm allocation");
      given.nprocs == 0 && !why.empty() && !given.dry_run)
    return fail(kExitLaunchFailed, why);

  ResolvedProgram prog = resolve_program(given.program);
  if (prog.problem == ResolvedProgram::kNotFound) return fail(kExitNotFound, prog.message);
  if (prog.problem != ResolvedProgram::kNone) return fail(kExitNotExecutable, prog.message);

  // Checkpoints go to each node's own storage (its copies on a buddy node), not to a home
  // directory that the nodes share.
  Options opt = given;
  opt.slurm_checkpoint_dir =
      node_local_storage() + "/bspg-" + user_name() + "/checkpoints/" + opt.job_id;
  SlurmJob job{opt, settings, prog.path, job_id};
  if (opt.nprocs > 0 && !opt.dry_run) return run_slurm_restartable(job);

  GridPlan plan;
  if (int status = plan_slurm(job, {}, true, plan); status != 0) return status;
  if (int status = write_allocation(opt, plan.subjobs, true); status != 0 || opt.dry_run)
    return status;
  return exit_status_of(run_slurm_subjobs(job, plan, settings, false, opt.time_limit_s),
                        opt.time_limit_s);
}

}  // namespace bspg::launcher
