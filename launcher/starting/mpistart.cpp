// mpistart.cpp - builds mpirun argument vectors.
#include "mpistart.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include "remote_stop.h"
#include "untrusted.h"

extern char** environ;

namespace bspg::launcher {

bool user_sets_mca(const MpiSettings& s, const std::string& key) {
  const std::string variable = s.mpi->parameter_variable(key);
  if (!variable.empty() && s.environment.count(variable)) return true;
  for (const auto& kv : s.mca)
    if (kv.first == key) return true;
  return false;
}

namespace {

// NAME's value in bsprun's environment as the settings hold it, nullptr where it is not set.
const std::string* environment_value(const MpiSettings& s, const std::string& name) {
  const auto it = s.environment.find(name);
  return it == s.environment.end() ? nullptr : &it->second;
}

// The sanitizers' run-time options (a program or bspg built with -fsanitize): a user who set them
// for a run means every process of it.
bool is_sanitizer_option(const std::string& name) {
  return name == "ASAN_OPTIONS" || name == "UBSAN_OPTIONS" || name == "LSAN_OPTIONS" ||
         name == "TSAN_OPTIONS" || name == "MSAN_OPTIONS";
}

// Every export of -x NAME[=VALUE], in the current app context.
void add_exports(Argv& argv, const MpiSettings& s) {
  for (const auto& e : s.exports) {
    const auto eq = e.find('=');
    if (eq == std::string::npos)
      s.mpi->pass_variable(argv, e, environment_value(s, e));
    else
      s.mpi->set_variable(argv, e.substr(0, eq), e.substr(eq + 1));
  }
}

}  // namespace

std::vector<std::string> local_mpirun_argv(const MpiSettings& settings, int nprocs,
                                           bool oversubscribe, const std::string& executable,
                                           const std::vector<std::string>& args) {
  const Mpi& mpi = *settings.mpi;
  std::vector<std::string> argv;
  mpi.start(argv, settings);
  if (oversubscribe) mpi.oversubscribe(argv);
  if (settings.spares > 0) mpi.fault_tolerance(argv);
  argv.insert(argv.end(), settings.starter_args.begin(), settings.starter_args.end());
  // One subjob holding everything: set explicitly so a stale value in the caller's
  // environment cannot mislead the library.
  mpi.set_variable(argv, "BSPG_SUBJOB", "0");
  mpi.set_variable(argv, "BSPG_NSUBJOBS", "1");
  mpi.set_variable(argv, "BSPG_SUBJOB_SIZES", std::to_string(nprocs));
  add_exports(argv, settings);
  mpi.processes(argv, nprocs + std::max(settings.spares, 0), "", "");
  argv.push_back(executable);
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

std::string host_list(const std::vector<rsl::HostSlots>& hosts) {
  std::string list;
  for (const auto& h : hosts) list += (list.empty() ? "" : ",") + rsl::hosts_entry(h.host, h.count);
  return list;
}

namespace {

// The -host value of every subjob. Open MPI counts a host's slots once for the whole job, so a
// host named by several subjobs gets their total in each; that places exactly when each of
// those subjobs has that host alone. Otherwise `problem` says why (the lists then name the right
// hosts, for the Slurm path, but cannot place): one app context in rank order may still start
// them (subjobs_argv), as with a spare on a host of the job after hosts were lost.
std::vector<std::string> host_lists(const std::vector<rsl::Subjob>& subjobs,
                                    std::string& problem) {
  std::vector<std::vector<rsl::HostSlots>> placed;
  std::map<std::string, int> total, mentions;
  for (const auto& sj : subjobs) {
    placed.push_back(rsl::placement(sj));
    for (const auto& h : placed.back()) {
      total[h.host] += h.count;
      ++mentions[h.host];
    }
  }
  std::vector<std::string> lists;
  for (auto& hosts : placed) {
    for (auto& h : hosts) {
      if (mentions[h.host] == 1) continue;
      if (hosts.size() > 1) {
        if (problem.empty())
          problem = "host " + h.host + " is in several subjobs and one of them spans several " +
                    "hosts; Open MPI cannot place that exactly (give each host one subjob)";
        continue;
      }
      h.count = total[h.host];
    }
    lists.push_back(host_list(hosts));
  }
  return lists;
}

// The host names of an -host value ("a:2,b:1" -> a, b).
std::vector<std::string> split_host_list(const std::string& list) {
  std::vector<std::string> names;
  size_t start = 0;
  while (start < list.size()) {
    size_t end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    const std::string entry = list.substr(start, end - start);
    if (!entry.empty()) names.push_back(entry.substr(0, entry.rfind(':')));
    start = end + 1;
  }
  return names;
}

// With spares: the hosts of every subjob and spare in rank order, where one app context can
// start them all: each runs the same program, arguments, directory and environment (but for
// BSPG_SUBJOB, which the processes then find from BSPG_SUBJOB_SIZES and their rank). Empty where
// not.
std::vector<rsl::HostSlots> one_context_hosts(const std::vector<rsl::Subjob>& contexts) {
  const auto same_run = [](const rsl::Subjob& a, const rsl::Subjob& b) {
    const auto without_subjob = [](const rsl::Subjob& sj) {
      auto env = sj.environment;
      env.erase(std::remove_if(env.begin(), env.end(),
                               [](const auto& kv) { return kv.first == "BSPG_SUBJOB"; }),
                env.end());
      return env;
    };
    return a.executable == b.executable && a.arguments == b.arguments &&
           a.directory == b.directory && without_subjob(a) == without_subjob(b);
  };
  std::vector<rsl::HostSlots> order;
  for (const auto& sj : contexts) {
    if (!same_run(sj, contexts.front())) return {};
    for (const auto& h : rsl::placement(sj)) order.push_back(h);
  }
  return order;
}

// The mpirun command line of the subjobs, the k-th placed by host_lists[k] (an -host value).
// spawns_contexts: the job's processes start more app contexts themselves (master mode's
// MPI_Comm_spawn_multiple, one per subjob).
// spares: app contexts of spare processes after the subjobs' (grid_mpirun_argv), placed by the
// lists after the subjobs'.
// lists_problem: why the lists cannot place the processes exactly (host_lists); refused unless
// one app context in rank order starts them all.
std::vector<std::string> subjobs_argv(const MpiSettings& settings,
                                      const std::vector<rsl::Subjob>& subjobs,
                                      const std::vector<std::string>& lists,
                                      const std::string& ssh_config, bool spawns_contexts = false,
                                      const std::vector<rsl::Subjob>& spares = {},
                                      const std::string& lists_problem = "") {
  const Mpi& mpi = *settings.mpi;
  std::vector<std::string> argv;
  mpi.start(argv, settings);
  if (settings.through_slurm) {
    std::vector<std::string> nodes;
    for (const auto& list : lists)
      for (const auto& entry : split_host_list(list))
        if (std::find(nodes.begin(), nodes.end(), entry) == nodes.end()) nodes.push_back(entry);
    std::string joined;
    for (const auto& n : nodes) joined += (joined.empty() ? "" : ",") + n;
    mpi.through_slurm(argv, joined, settings.slurm_launch_address);
  }
  else
    mpi.over_ssh(argv, ssh_config, spares.empty() ? std::string() : settings.daemon_relay);
  if (!spares.empty()) mpi.fault_tolerance(argv);
  argv.insert(argv.end(), settings.starter_args.begin(), settings.starter_args.end());

  std::string sizes;
  for (const auto& sj : subjobs) sizes += (sizes.empty() ? "" : ",") + std::to_string(sj.count);
  // The starter does not pass its environment to remote processes: name the MPI's parameters
  // and the sanitizers' options.
  std::vector<const std::pair<const std::string, std::string>*> parameters;
  for (const auto& kv : settings.environment)
    if (mpi.is_parameter(kv.first) || is_sanitizer_option(kv.first)) parameters.push_back(&kv);

  // An app context after its placement: the subjob variables, the MPI's parameters, exports and
  // the context's own environment, then its program and arguments.
  const auto context_rest = [&](const rsl::Subjob& sj, const std::string& subjob) {
    mpi.set_variable(argv, "BSPG_SUBJOB", subjob);
    mpi.set_variable(argv, "BSPG_NSUBJOBS", std::to_string(subjobs.size()));
    mpi.set_variable(argv, "BSPG_SUBJOB_SIZES", sizes);
    if (!settings.job_marker.empty())
      mpi.set_variable(argv, kJobMarkerVariable, settings.job_marker);
    for (const auto* parameter : parameters)
      mpi.pass_variable(argv, parameter->first, &parameter->second);
    add_exports(argv, settings);
    for (const auto& kv : sj.environment) {
      if (kv.first == "BSPG_SUBJOB" || kv.first == "BSPG_NSUBJOBS" ||
          kv.first == "BSPG_SUBJOB_SIZES" || kv.first == kJobMarkerVariable)
        continue;
      mpi.set_variable(argv, kv.first, kv.second);
    }
    argv.push_back(sj.executable);
    argv.insert(argv.end(), sj.arguments.begin(), sj.arguments.end());
  };
  // With spares, one app context where it can be: Open MPI 5 starts several only with PMIx's
  // Open MPI personality left out (several_app_contexts), and its processes then run without the
  // fault tolerance asked for on the command line (a lost process ends the job).
  if (!spares.empty() && !spawns_contexts) {
    std::vector<rsl::Subjob> all = subjobs;
    all.insert(all.end(), spares.begin(), spares.end());
    const std::vector<rsl::HostSlots> in_order = one_context_hosts(all);
    int total = 0;
    for (const auto& sj : all) total += sj.count;
    if (!in_order.empty() && mpi.processes_in_order(argv, total, in_order, all[0].directory)) {
      context_rest(all[0], "");  // the subjob found from the sizes and the rank
      return argv;
    }
  }
  if (!lists_problem.empty()) throw std::invalid_argument(lists_problem);
  // A starter that takes one host list fills it in order: each subjob's hosts in turn.
  if (subjobs.size() + spares.size() > 1 || spawns_contexts) mpi.several_app_contexts(argv);
  const bool per_context = mpi.hosts_per_app_context();
  if (!per_context) {
    std::string all;
    for (const auto& list : lists) all += (all.empty() || list.empty() ? "" : ",") + list;
    mpi.all_hosts(argv, all);
  }
  for (size_t k = 0; k < subjobs.size() + spares.size(); ++k) {
    const bool spare = k >= subjobs.size();
    const auto& sj = spare ? spares[k - subjobs.size()] : subjobs[k];
    if (k > 0) argv.push_back(":");
    mpi.processes(argv, sj.count, per_context ? lists[k] : "", sj.directory);
    context_rest(sj, std::to_string(spare ? subjobs.size() : k));
  }
  return argv;
}

}  // namespace

std::vector<std::string> grid_mpirun_argv(const MpiSettings& settings,
                                          const std::vector<rsl::Subjob>& subjobs,
                                          const std::string& ssh_config,
                                          const std::vector<rsl::Subjob>& spares) {
  std::vector<rsl::Subjob> all = subjobs;
  all.insert(all.end(), spares.begin(), spares.end());
  if (settings.mpi->hosts_per_app_context()) {
    std::string problem;
    const std::vector<std::string> lists = host_lists(all, problem);
    return subjobs_argv(settings, subjobs, lists, ssh_config, false, spares, problem);
  }
  // One list filled in order: each subjob's own placement, a host named again where it is.
  std::vector<std::string> lists;
  for (const auto& sj : all) lists.push_back(host_list(rsl::placement(sj)));
  return subjobs_argv(settings, subjobs, lists, ssh_config, false, spares);
}

std::vector<std::pair<std::string, std::string>> master_environment(
    const MpiSettings& settings, int available, const std::vector<MasterSlot>& slots) {
  std::vector<std::pair<std::string, std::string>> env = {
      {"BSPG_MASTER_PROCS", std::to_string(available)}};
  std::string list;
  for (const auto& slot : slots)
    list += (list.empty() ? "" : ",") + slot.host + "/" + std::to_string(slot.subjob);
  if (!list.empty()) env.emplace_back("BSPG_MASTER_SLOTS", list);
  std::string names;
  for (const auto& e : settings.exports)
    names += (names.empty() ? "" : ",") + e.substr(0, e.find('='));
  for (const auto& kv : settings.environment)
    if (settings.mpi->is_parameter(kv.first)) names += (names.empty() ? "" : ",") + kv.first;
  if (!names.empty()) env.emplace_back("BSPG_MASTER_ENV", names);
  return env;
}

namespace {

const std::string* environment_value(const rsl::Subjob& subjob, const std::string& name) {
  for (const auto& kv : subjob.environment)
    if (kv.first == name) return &kv.second;
  return nullptr;
}

bool plain_host_name(const std::string& name) {
  if (name.empty() || name[0] == '-') return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_'))
      return false;
  return true;
}

}  // namespace

std::vector<rsl::HostSlots> master_slot_hosts(const rsl::Subjob& subjob) {
  const std::string* list = environment_value(subjob, "BSPG_MASTER_SLOTS");
  if (!list) return {};
  const std::string* procs = environment_value(subjob, "BSPG_MASTER_PROCS");
  if (subjob.count != 1)
    throw std::invalid_argument("a master subjob (with BSPG_MASTER_SLOTS) has count 1");
  std::vector<rsl::HostSlots> hosts;
  std::map<std::string, size_t> index;
  size_t slots = 0, begin = 0;
  while (begin <= list->size()) {
    size_t end = std::min(list->find(',', begin), list->size());
    std::string entry = list->substr(begin, end - begin);
    size_t slash = entry.rfind('/');
    std::string host = entry.substr(0, slash == std::string::npos ? entry.size() : slash);
    std::string subjob_text = slash == std::string::npos ? "" : entry.substr(slash + 1);
    if (!plain_host_name(host) || subjob_text.empty() || subjob_text.size() > 7 ||
        subjob_text.find_first_not_of("0123456789") != std::string::npos)
      throw std::invalid_argument("BSPG_MASTER_SLOTS entry '" + entry + "' is not HOST/SUBJOB");
    if (slots == 0 && host != subjob.contact)
      throw std::invalid_argument("the first of BSPG_MASTER_SLOTS is the master's own, on " +
                                  subjob.contact + ", not on " + host);
    auto [it, added] = index.emplace(host, hosts.size());
    if (added) hosts.push_back({host, 0});
    ++hosts[it->second].count;
    ++slots;
    begin = end + 1;
  }
  if (!procs || *procs != std::to_string(slots))
    throw std::invalid_argument("BSPG_MASTER_SLOTS names " + std::to_string(slots) +
                                " slots, but BSPG_MASTER_PROCS is " +
                                (procs ? "'" + *procs + "'" : "not set"));
  return hosts;
}

std::vector<std::string> master_grid_mpirun_argv(const MpiSettings& settings,
                                                 const rsl::Subjob& master,
                                                 const std::string& ssh_config) {
  // The master's -host names every slot, so that MPI_Comm_spawn may place processes there.
  const std::vector<rsl::HostSlots> hosts = master_slot_hosts(master);
  if (hosts.empty()) return grid_mpirun_argv(settings, {master}, ssh_config);
  return subjobs_argv(settings, {master}, {host_list(hosts)}, ssh_config, true);
}

std::map<std::string, std::string> current_environment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string entry = *e;
    auto eq = entry.find('=');
    if (eq != std::string::npos) env[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  return env;
}

std::string shell_quote_command(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty()) out += ' ';
    bool plain = !a.empty() &&
                 a.find_first_not_of(
                     "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=/.,:@%^") ==
                     std::string::npos;
    if (plain) {
      out += a;
      continue;
    }
    if (!untrusted::control_character_problem(a).empty()) {
      // $'...' (bash, zsh, ksh) reads back printable()'s escapes; '\' and '\'' are escaped too.
      std::string escaped;
      for (char c : a) {
        if (c == '\'' || c == '\\') escaped += '\\';
        escaped += c;
      }
      out += "$'" + untrusted::printable(escaped) + "'";
      continue;
    }
    out += '\'';
    for (char c : a) {
      if (c == '\'')
        out += "'\\''";
      else
        out += c;
    }
    out += '\'';
  }
  return out;
}

}  // namespace bspg::launcher
