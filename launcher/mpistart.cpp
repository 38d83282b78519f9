// mpistart.cpp - builds mpirun argument vectors.
#include "mpistart.h"

#include <stdexcept>

#include "remote_stop.h"
#include "untrusted.h"

extern char** environ;

namespace bspg::launcher {
namespace {

// The one-sided transports that work on every host mix: Debian's default (osc rdma only)
// fails with MPI_ERR_WIN over TCP, see design.md.
const char* const kOscComponents = "sm,pt2pt";

// Options common to both paths, before any app context.
void add_common_options(std::vector<std::string>& argv, const MpiSettings& s) {
  argv.push_back(s.mpirun);
  if (s.run_as_root) argv.push_back("--allow-run-as-root");
  bool user_sets_osc = s.environment.count("OMPI_MCA_osc") > 0;
  for (const auto& kv : s.mca)
    if (kv.first == "osc") user_sets_osc = true;
  if (!user_sets_osc) {
    argv.insert(argv.end(), {"--mca", "osc", kOscComponents});
  }
  for (const auto& kv : s.mca) argv.insert(argv.end(), {"--mca", kv.first, kv.second});
}

}  // namespace

std::vector<std::string> local_mpirun_argv(const MpiSettings& settings, int nprocs, bool oversubscribe,
                                           const std::string& executable, const std::vector<std::string>& args) {
  std::vector<std::string> argv;
  add_common_options(argv, settings);
  if (oversubscribe) argv.push_back("--oversubscribe");
  // One subjob holding everything: set explicitly so a stale value in the caller's
  // environment cannot mislead the library.
  argv.insert(argv.end(), {"-x", "BSPG_SUBJOB=0", "-x", "BSPG_NSUBJOBS=1",
                           "-x", "BSPG_SUBJOB_SIZES=" + std::to_string(nprocs)});
  for (const auto& e : settings.exports) argv.insert(argv.end(), {"-x", e});
  argv.insert(argv.end(), {"-np", std::to_string(nprocs), executable});
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

std::string host_list(const rsl::Subjob& subjob) {
  if (subjob.hosts.empty()) return subjob.contact + ":" + std::to_string(subjob.count);
  std::string list;
  for (const auto& h : rsl::host_slots(subjob)) {
    if (!list.empty()) list += ',';
    list += h.host + ":" + std::to_string(h.count);
  }
  return list;
}

namespace {

// The -host value of every subjob. Open MPI counts a host's slots once for the whole job, so a
// host named by several subjobs gets their total in each; that places exactly when each of
// those subjobs has that host alone, and is refused otherwise.
std::vector<std::string> host_lists(const std::vector<rsl::Subjob>& subjobs) {
  std::vector<std::vector<rsl::HostSlots>> placed;
  std::map<std::string, int> total, mentions;
  for (const auto& sj : subjobs) {
    placed.push_back(sj.hosts.empty() ? std::vector<rsl::HostSlots>{{sj.contact, sj.count}} : rsl::host_slots(sj));
    for (const auto& h : placed.back()) {
      total[h.host] += h.count;
      ++mentions[h.host];
    }
  }
  std::vector<std::string> lists;
  for (const auto& hosts : placed) {
    std::string list;
    for (const auto& h : hosts) {
      bool shared = mentions[h.host] > 1;
      if (shared && hosts.size() > 1)
        throw std::invalid_argument("host " + h.host + " is in several subjobs and one of them spans several " +
                                    "hosts; Open MPI cannot place that exactly (give each host one subjob)");
      list += (list.empty() ? "" : ",") + h.host + ":" + std::to_string(shared ? total[h.host] : h.count);
    }
    lists.push_back(list);
  }
  return lists;
}

}  // namespace

std::vector<std::string> grid_mpirun_argv(const MpiSettings& settings, const std::vector<rsl::Subjob>& subjobs,
                                          const std::string& ssh_config) {
  std::vector<std::string> argv;
  add_common_options(argv, settings);
  if (!ssh_config.empty()) argv.insert(argv.end(), {"--mca", "plm_rsh_agent", "ssh -F " + ssh_config});
  // Every ssh starts here: the generated ssh configuration exists only on this machine.
  argv.insert(argv.end(), {"--mca", "plm_rsh_no_tree_spawn", "1"});
  // Host names are the host file's, used as given (no domain stripping).
  argv.insert(argv.end(), {"--mca", "orte_keep_fqdn_hostnames", "1"});

  std::string sizes;
  for (const auto& sj : subjobs) sizes += (sizes.empty() ? "" : ",") + std::to_string(sj.count);
  // mpirun does not pass its environment to remote ranks: name the OMPI_MCA_* ones.
  std::vector<std::string> mca_env;
  for (const auto& kv : settings.environment)
    if (kv.first.rfind("OMPI_MCA_", 0) == 0) mca_env.push_back(kv.first);

  std::vector<std::string> lists = host_lists(subjobs);
  for (size_t k = 0; k < subjobs.size(); ++k) {
    const auto& sj = subjobs[k];
    if (k > 0) argv.push_back(":");
    argv.insert(argv.end(), {"-np", std::to_string(sj.count), "-host", lists[k]});
    if (!sj.directory.empty()) argv.insert(argv.end(), {"-wdir", sj.directory});
    argv.insert(argv.end(), {"-x", "BSPG_SUBJOB=" + std::to_string(k), "-x",
                             "BSPG_NSUBJOBS=" + std::to_string(subjobs.size()), "-x", "BSPG_SUBJOB_SIZES=" + sizes});
    if (!settings.job_marker.empty())
      argv.insert(argv.end(), {"-x", std::string(kJobMarkerVariable) + "=" + settings.job_marker});
    for (const auto& name : mca_env) argv.insert(argv.end(), {"-x", name});
    for (const auto& e : settings.exports) argv.insert(argv.end(), {"-x", e});
    for (const auto& kv : sj.environment) {
      if (kv.first == "BSPG_SUBJOB" || kv.first == "BSPG_NSUBJOBS" ||
          kv.first == "BSPG_SUBJOB_SIZES" || kv.first == kJobMarkerVariable)
        continue;
      argv.insert(argv.end(), {"-x", kv.first + "=" + kv.second});
    }
    argv.push_back(sj.executable);
    argv.insert(argv.end(), sj.arguments.begin(), sj.arguments.end());
  }
  return argv;
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
    bool plain = !a.empty() && a.find_first_not_of(
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=/.,:@%^") == std::string::npos;
    if (plain) { out += a; continue; }
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
      if (c == '\'') out += "'\\''"; else out += c;
    }
    out += '\'';
  }
  return out;
}

}  // namespace bspg::launcher
