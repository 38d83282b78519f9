// mpi_mpich.cpp - MPICH's Hydra mpiexec (and that of MPICH's derivatives).
#include <memory>
#include <stdexcept>
#include <string>

#include "mpi_kinds.h"
#include "mpistart.h"

namespace bspg::launcher {
namespace {

class Mpich : public Mpi {
 public:
  Mpich(std::string version, std::string starter)
      : version_(std::move(version)), starter_(std::move(starter)) {}

  MpiFamily family() const override { return MpiFamily::kMpich; }
  std::string name() const override { return "MPICH " + version_; }
  std::string starter() const override { return starter_; }

  bool is_parameter(const std::string& variable) const override {
    for (const char* prefix : {"MPIR_CVAR_", "MPICH_", "HYDRA_", "UCX_", "FI_"})
      if (variable.rfind(prefix, 0) == 0) return true;
    return false;
  }
  std::string parameter_variable(const std::string&) const override { return ""; }

  void start(Argv& argv, const MpiSettings& s) const override {
    // Hydra runs as root and beyond the cores as it is, and its RMA needs no choice of
    // components. MCA parameters are Open MPI's: MPICH reads MPIR_CVAR_* variables instead.
    if (!s.mca.empty())
      throw std::invalid_argument("--mca " + s.mca.front().first +
                                  ": MCA parameters are Open MPI's, and bspg was built with " +
                                  name() + " (set its MPIR_CVAR_* variables instead)");
    argv.push_back(s.mpirun);
    // mpiexec itself writes each process's output to these files, as its proxies forward it.
    if (s.output.how == OutputSeparation::kFiles)
      argv.insert(argv.end(), {"-outfile-pattern", s.output.directory + "/stdout.%r",
                               "-errfile-pattern", s.output.directory + "/stderr.%r"});
  }

  // Hydra's -prepend-pattern tags would do too, but cost three writes a line (a 100 MB output
  // of short lines took four times as long).
  OutputSeparation output_separation(bool) const override { return OutputSeparation::kFiles; }

  void oversubscribe(Argv&) const override {}  // Hydra places any number of processes
  void master_on_this_machine(MpiSettings&) const override {}

  // Hydra reports 0 in most runs where a process was killed (MPICH 4.2; 4.0's status is racy),
  // and says which process only on its standard output: on this machine bsprun finds it from
  // the library's exit notes (exit_notes.h), also for --restarts.
  bool reports_every_death() const override { return false; }
  // Hydra's ssh launcher runs one ssh per host from here, with a program and no arguments of
  // ours: a script that adds the generated configuration. Without one, the user's own ssh.
  void over_ssh(Argv& argv, const std::string& ssh_config,
                const std::string& /*daemon_relay*/) const override {
    // Processes on other hosts get their own login environment and what bsprun names (-x, the
    // MPI's parameters, bspg's own), as Open MPI's do: not all of mpiexec's (Hydra's default).
    argv.insert(argv.end(), {"-genvnone", "-launcher", "ssh"});
    if (!ssh_config.empty())
      argv.insert(argv.end(), {"-launcher-exec", ssh_launcher_path(ssh_config)});
  }
  // Hydra's Slurm launcher starts its proxies with one srun on the hosts bsprun names (-hosts).
  // The proxies connect back to mpiexec at the one name it gives them, by default its host name:
  // that may not resolve on the nodes, or resolve to a loopback address (Debian's /etc/hosts
  // maps it to 127.0.1.1). -localhost gives them the address srun's tasks saw this machine at.
  void through_slurm(Argv& argv, const std::string&,
                     const std::string& launch_address) const override {
    argv.insert(argv.end(), {"-genvnone", "-launcher", "slurm"});
    if (!launch_address.empty()) argv.insert(argv.end(), {"-localhost", launch_address});
  }
  std::string ssh_launcher_script(const std::string& ssh_config) const override {
    return "#!/bin/sh\n# bsprun: MPICH's mpiexec reaches the hosts through this\nexec ssh -F " +
           shell_quote_command({ssh_config}) + " \"$@\"\n";
  }
  bool hosts_per_app_context() const override { return false; }
  void all_hosts(Argv& argv, const std::string& hosts) const override {
    if (!hosts.empty()) argv.insert(argv.end(), {"-hosts", hosts});
  }
  // A program that cannot be executed on a host, or a host ssh cannot reach, leaves Hydra
  // waiting for a proxy that never reports.
  bool ends_on_start_failure() const override { return false; }

  void processes(Argv& argv, int n, const std::string& hosts,
                 const std::string& directory) const override {
    argv.insert(argv.end(), {"-n", std::to_string(n)});
    if (!hosts.empty()) argv.insert(argv.end(), {"-hosts", hosts});
    if (!directory.empty()) argv.insert(argv.end(), {"-wdir", directory});
  }

  void set_variable(Argv& argv, const std::string& name, const std::string& value) const override {
    argv.insert(argv.end(), {"-env", name, value});
  }
  // Hydra passes mpiexec's whole environment to every process on the local path (its default,
  // -genvall), but on the grid path (-genvnone) only what is named: the value bsprun has. (Its
  // -envlist would make that app context pass nothing else, on the local path too.)
  void pass_variable(Argv& argv, const std::string& name, const std::string* value) const override {
    if (value) argv.insert(argv.end(), {"-env", name, *value});
  }

  std::string in_place_unavailable() const override {
    // MPICH declares ULFM's calls, but Debian's 4.2.1 fails every MPI_Init with its fault
    // tolerance on (MPIR_CVAR_ENABLE_FT=1), and without it a lost process ends the job
    // (tests/recovery/FINDINGS.md).
    return name() + " cannot keep the other processes alive when one is lost (its fault " +
           "tolerance fails at MPI_Init): the job ends, and --restarts starts it again from its " +
           "newest checkpoint";
  }

 private:
  std::string version_;
  std::string starter_;
};

}  // namespace

std::unique_ptr<Mpi> make_mpich(std::string version, std::string starter) {
  return std::make_unique<Mpich>(std::move(version), std::move(starter));
}

}  // namespace bspg::launcher
