// subjob_checks.cpp - the checks listed in subjob_checks.h, each reported at its value.
#include "subjob_checks.h"

#include <map>
#include <set>
#include <stdexcept>

#include "untrusted.h"

namespace bspg::launcher {
namespace {

using untrusted::excerpt;

class SubjobChecker {
 public:
  SubjobChecker(const std::string& origin, const HostFileLimits* hostfile)
      : origin_(origin), hostfile_(hostfile) {}

  void check(const std::vector<rsl::Subjob>& subjobs) {
    long long total = 0;
    for (std::size_t k = 0; k < subjobs.size(); ++k) {
      index_ = k;
      const rsl::Subjob& sj = subjobs[k];
      const auto& at = sj.positions;
      check_name("resourceManagerContact", sj.contact, at.contact);
      check_command(sj);
      total += sj.count;
      if (total > kMaxProcesses) {
        fail(at.count, "the subjobs ask for " + std::to_string(total) +
                           " processes up to here, more than the " + std::to_string(kMaxProcesses) +
                           " a job may have");
      }
      place(sj);
    }
  }

 private:
  [[noreturn]] void fail(const rsl::Position& where, const std::string& message) const {
    if (where.line > 0) throw rsl::ParseError(origin_, where.line, where.column, message);
    throw std::invalid_argument("subjob " + std::to_string(index_) + ": " + message);
  }

  void check_name(const std::string& what, const std::string& name,
                  const rsl::Position& where) const {
    if (std::string problem = untrusted::host_name_problem(name); !problem.empty())
      fail(where, what + " '" + excerpt(name) + "' is not a host or site name: " + problem);
  }

  void check_text(const std::string& what, const std::string& text,
                  const rsl::Position& where) const {
    if (std::string problem = untrusted::control_character_problem(text); !problem.empty())
      fail(where, what + " '" + excerpt(text) + "': " + problem);
  }

  // What reaches the processes: executable, arguments, directory, label, environment.
  void check_command(const rsl::Subjob& sj) const {
    const auto& at = sj.positions;
    check_text("executable", sj.executable, at.executable);
    const bool relative = sj.executable.rfind("./", 0) == 0 || sj.executable.rfind("../", 0) == 0;
    if (sj.executable.rfind('/', 0) != 0 && !relative) {
      fail(at.executable,
           "executable '" + excerpt(sj.executable) +
               "' must be an absolute path or start with ./ or ../ (relative to the directory)");
    }
    for (std::size_t i = 0; i < sj.arguments.size(); ++i) {
      const rsl::Position where = i < at.arguments.size() ? at.arguments[i] : rsl::Position{};
      check_text("argument " + std::to_string(i + 1), sj.arguments[i], where);
      if (sj.arguments[i] == ":")
        fail(where, "an argument ':' cannot be passed on (mpirun reads it as the end of a subjob)");
    }
    if (!sj.directory.empty()) {
      if (std::string problem = untrusted::absolute_path_problem(sj.directory); !problem.empty())
        fail(at.directory, "directory '" + excerpt(sj.directory) + "': " + problem);
    }
    check_text("label", sj.label, at.label);
    for (std::size_t i = 0; i < sj.environment.size(); ++i) {
      const rsl::Position where = i < at.environment.size() ? at.environment[i] : rsl::Position{};
      const auto& [name, value] = sj.environment[i];
      if (!untrusted::is_environment_name(name)) {
        fail(where, "environment name '" + excerpt(name) +
                        "' is not a variable name (a letter or '_', then letters, digits or '_')");
      }
      check_text("environment value of " + name, value, where);
    }
  }

  // The hosts of a subjob: names, membership in the host file, slots used so far.
  void place(const rsl::Subjob& sj) {
    const auto& at = sj.positions;
    if (sj.hosts.empty()) {
      use(sj.contact, sj.count, sj, at.count);
      return;
    }
    std::set<std::string> seen;
    const std::vector<rsl::HostSlots> slots =
        rsl::host_slots(sj);  // read_allocation checked the form
    for (std::size_t i = 0; i < slots.size(); ++i) {
      const rsl::Position where = i < at.hosts.size() ? at.hosts[i] : at.clause;
      check_name("host", slots[i].host, where);
      if (!seen.insert(slots[i].host).second)
        fail(where, "host '" + slots[i].host + "' is named twice in this subjob's hosts");
      use(slots[i].host, slots[i].count, sj, where);
    }
  }

  void use(const std::string& host, int count, const rsl::Subjob& sj, const rsl::Position& where) {
    if (!hostfile_) return;
    const hosts::HostSpec* spec = hosts::find_host(hostfile_->hosts, host);
    if (!spec) {
      fail(where, "host '" + host + "' (" + (sj.label.empty() ? "a subjob" : excerpt(sj.label)) +
                      ") is not " +
                      (hostfile_->slurm_allocation ? "a node of " : "in the host file ") +
                      hostfile_->path);
    }
    long long& placed = placed_[host];
    placed += count;
    if (spec->slots > 0 && placed > spec->slots) {  // a Slurm node has at least one CPU
      const std::string slots = std::to_string(spec->slots) +
                                (hostfile_->slurm_allocation ? " CPU" : " slot") +
                                (spec->slots == 1 ? "" : "s");
      fail(where, std::to_string(placed) + " processes on " + host + ", but " +
                      (hostfile_->slurm_allocation
                           ? hostfile_->path + " has " + slots + " there"
                           : "the host file " + hostfile_->path + " gives it " + slots + " (line " +
                                 std::to_string(spec->line) + ")"));
    }
  }

  const std::string& origin_;
  const HostFileLimits* hostfile_;
  std::size_t index_ = 0;
  std::map<std::string, long long> placed_;
};

}  // namespace

void check_subjobs(const std::vector<rsl::Subjob>& subjobs, const std::string& origin,
                   const HostFileLimits* hostfile) {
  SubjobChecker(origin, hostfile).check(subjobs);
}

}  // namespace bspg::launcher
