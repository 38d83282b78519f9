// mpi.h - "an MPI": how bsprun speaks to the MPI bspg was built with.
//
// Everything of bsprun that depends on the MPI is here: the starter and how its command line
// spells processes, hosts, variables and settings on the local and the grid path, the
// environment variables that are the MPI's own parameters, and how its starter's messages read.
// One implementation per MPI (mpi_openmpi.cpp: Open MPI 4's ORTE mpirun and Open MPI 5's PRRTE
// mpirun; mpi_mpich.cpp: MPICH's Hydra mpiexec), the one bspg was configured with chosen by
// configured_mpi(). mpistart.cpp builds whole command lines from these pieces.
#ifndef BSPG_LAUNCHER_MPI_H
#define BSPG_LAUNCHER_MPI_H

#include <string>
#include <utility>
#include <vector>

#include "rsl.h"

namespace bspg::launcher {

struct MpiSettings;
using Argv = std::vector<std::string>;

enum class MpiFamily { kOpenMpi4, kOpenMpi5, kMpich };

// How the starter keeps each process's output apart, so that bsprun can pass it on in whole
// lines (output_lines.h) instead of in the pieces the starter forwards.
enum class OutputSeparation {
  kNone,   // the starter's output is passed on as it comes
  kFiles,  // the starter writes each process's stdout and stderr to files of their own in
           // directory (Open MPI: <job>/rank.<r>/stdout; MPICH: stdout.<r>) instead of its own
};
struct ProcessOutput {
  OutputSeparation how = OutputSeparation::kNone;
  std::string directory;  // kFiles: an empty directory of bsprun's, without ':' in its path
};

class Mpi {
 public:
  virtual ~Mpi() = default;
  virtual MpiFamily family() const = 0;
  // For messages: "Open MPI 4.1.4", "MPICH 4.0.2".
  virtual std::string name() const = 0;
  // The starter's full path, as configured (the user's BSPG_MPIRUN overrides it: localhost.h).
  virtual std::string starter() const = 0;

  // Whether an environment variable is one of this MPI's own parameters (OMPI_MCA_*, ...): bsprun
  // passes those on to the processes on other hosts, and names them to master mode's spawns.
  virtual bool is_parameter(const std::string& variable) const = 0;
  // The variable that sets the MPI parameter `key` ("OMPI_MCA_osc"), "" where the MPI has none.
  virtual std::string parameter_variable(const std::string& key) const = 0;

  // The starter and its options before any app context: running as root, one-sided settings,
  // the user's --mca, how the processes' output is kept apart (settings.output). Throws
  // std::invalid_argument for what this MPI cannot take (--mca on MPICH).
  virtual void start(Argv& argv, const MpiSettings& settings) const = 0;
  // Local path: more processes than this machine's cores.
  virtual void oversubscribe(Argv& argv) const = 0;
  // Master mode on this machine: the settings that let the master's spawned processes reach it.
  virtual void master_on_this_machine(MpiSettings& settings) const = 0;
  // How this MPI's starter can keep each process's output apart (settings.output.how), on the
  // grid path (processes on other hosts) or on this machine alone.
  virtual OutputSeparation output_separation(bool grid) const = 0;
  // Whether that holds for the processes master mode's bsp_begin spawns too.
  virtual bool separates_spawned_output() const { return true; }
  // Whether the starter's exit status is non-zero whenever a process was killed; where not, bsprun
  // finds such processes itself on the local path (exit_notes.h).
  virtual bool reports_every_death() const { return true; }
  // Why master mode cannot run on the grid path (or inside a Slurm allocation: `where` says which)
  // with this MPI, in one line; "" where it can.
  virtual std::string grid_master_unavailable(const std::string& /*where*/) const { return ""; }
  // Why this MPI's starter cannot start processes on a host of this name, in words that follow
  // "host NAME: "; "" where it can.
  virtual std::string host_name_refused(const std::string& /*name*/) const { return ""; }
  // Grid path: start every remote process from this machine over ssh -F ssh_config ("": the
  // user's own ssh configuration), with host names used as given. daemon_relay: bsprun's own
  // path where the job recovers in place ("" otherwise): a starter whose run-time ends the job
  // when it loses a daemon starts its daemons through it (daemon_relay.h).
  virtual void over_ssh(Argv& argv, const std::string& ssh_config,
                        const std::string& daemon_relay) const = 0;
  // Inside a Slurm allocation (slurm.h): start every remote process as one Slurm job step (the
  // starter's own Slurm launcher runs srun for its daemons) on `nodes` ("a,b,c": every node the
  // job uses, no other), with host names used as given. launch_address: this machine's address
  // as srun's tasks saw it (SLURM_LAUNCH_NODE_IPADDR; "" when unknown), where the starter's
  // daemons connect back to it.
  virtual void through_slurm(Argv& argv, const std::string& nodes,
                             const std::string& launch_address) const = 0;
  // Where the starter runs ssh through a program of bsprun's instead of a command line (Hydra's
  // -launcher-exec takes a program and no arguments): that program's text, a shell script that
  // bsprun writes executable at ssh_launcher_path(ssh_config) beside the configuration. "" where
  // the MPI needs none.
  virtual std::string ssh_launcher_script(const std::string&) const { return ""; }
  // Whether app contexts may each name their own hosts; where not (Hydra), the hosts of every
  // subjob go in one list, in subjob order, which the starter fills in order (all_hosts).
  virtual bool hosts_per_app_context() const { return true; }
  virtual void all_hosts(Argv&, const std::string&) const {}
  // One app context of n processes placed on the hosts in rank order ({a,2},{b,1}: ranks 0 and
  // 1 on a, 2 on b; a host may come back), in `directory` ("": bsprun's). false, with nothing
  // added, where the starter cannot place one context so exactly (the job then has an app
  // context per subjob).
  virtual bool processes_in_order(Argv&, int /*n*/, const std::vector<rsl::HostSlots>& /*hosts*/,
                                  const std::string& /*directory*/) const {
    return false;
  }
  // Before the first of several app contexts (a job of several subjobs, or a master that spawns
  // one per subjob): what the starter needs to start more than one.
  virtual void several_app_contexts(Argv&) const {}
  // Whether the starter ends by itself when a process cannot be started on a host (a program or
  // host that is missing); where not (Hydra waits for ever), bsprun stops it once its message
  // was recognised (mpirun_messages.h).
  virtual bool ends_on_start_failure() const { return true; }
  // Recovery in place (bsprun --spares): why this MPI cannot keep the other processes alive when
  // one is lost, in one line; "" where it can (ULFM).
  virtual std::string in_place_unavailable() const = 0;
  // Where it can: the starter's options that switch fault tolerance on. The MPI then finds a
  // process that ended; bsprun's own watch ends one stopped for --host-timeout (grid_place.cpp,
  // local_place.cpp), so that the MPI sees that loss too.
  virtual void fault_tolerance(Argv&) const {}

  // One app context: n processes, on hosts ("h1:2,h2:1"; "" anywhere), in directory ("" as is).
  virtual void processes(Argv& argv, int n, const std::string& hosts,
                         const std::string& directory) const = 0;
  // In the current app context, before its program: a variable with a value, and one passed on
  // from bsprun's own environment.
  virtual void set_variable(Argv& argv, const std::string& name,
                            const std::string& value) const = 0;
  // (value: what bsprun's environment holds, nullptr where it does not hold the variable).
  virtual void pass_variable(Argv& argv, const std::string& name,
                             const std::string* value) const = 0;
};

// Where bsprun writes the ssh launcher beside the ssh configuration ssh_config.
inline std::string ssh_launcher_path(const std::string& ssh_config) { return ssh_config + ".ssh"; }

// The MPI bspg was configured with (cmake/BspgMpi.cmake).
const Mpi& configured_mpi();
// Each MPI bsprun knows, for tests of their command lines.
const Mpi& mpi_of(MpiFamily family);

}  // namespace bspg::launcher

#endif
