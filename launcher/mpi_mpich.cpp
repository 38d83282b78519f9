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

  std::string grid_unavailable() const override {
    return "the grid path (--hostfile, --rsl) is not available with " + name() +
           " yet: build bspg with Open MPI for grid runs";
  }
  // Hydra reports 0 in most runs where a process was killed (MPICH 4.2; 4.0's status is racy).
  bool reports_every_death() const override { return false; }
  std::string restarts_unavailable() const override {
    return "--restarts is not available with " + name() +
           " yet (its mpiexec reports which process died on standard output only): build bspg "
           "with Open MPI for restartable jobs";
  }
  void over_ssh(Argv&, const std::string&) const override {
    throw std::invalid_argument(grid_unavailable());
  }

  void processes(Argv& argv, int n, const std::string& hosts,
                 const std::string& directory) const override {
    argv.insert(argv.end(), {"-n", std::to_string(n)});
    if (!hosts.empty()) argv.insert(argv.end(), {"-hosts", hosts});
    if (!directory.empty()) argv.insert(argv.end(), {"-wdir", directory});
  }

  void set_variable(Argv& argv, const std::string& name, const std::string& value) const override {
    argv.insert(argv.end(), {"-env", name, value});
  }
  // Hydra passes mpiexec's whole environment to every process (its default, -genvall).
  void pass_variable(Argv&, const std::string&) const override {}

 private:
  std::string version_;
  std::string starter_;
};

}  // namespace

std::unique_ptr<Mpi> make_mpich(std::string version, std::string starter) {
  return std::make_unique<Mpich>(std::move(version), std::move(starter));
}

}  // namespace bspg::launcher
