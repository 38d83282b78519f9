// mpistart.h - the starter command lines bsprun runs (pure functions, unit-tested). What is the
// same for every MPI (subjobs, hosts, the variables every process gets) is here; how each MPI's
// starter spells it is in mpi.h.
#ifndef BSPG_LAUNCHER_MPISTART_H
#define BSPG_LAUNCHER_MPISTART_H

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "mpi.h"
#include "rsl.h"

namespace bspg::launcher {

// What does not depend on the allocation.
struct MpiSettings {
  const Mpi* mpi = &configured_mpi();  // the MPI and how its starter is spoken to (mpi.h)
  std::string mpirun = mpi->starter();  // the starter's path (BSPG_MPIRUN may choose another)
  bool run_as_root = false;                              // adds --allow-run-as-root
  std::map<std::string, std::string> environment;        // bsprun's environment (MPI parameters)
  std::vector<std::pair<std::string, std::string>> mca;  // user's --mca KEY VALUE
  std::vector<std::string> exports;                      // user's -x NAME[=VALUE]
  std::vector<std::string> starter_args;  // user's --mpirun-arg ARGs, after bsprun's options
  bool verbose = false;
  // Grid path: exported to every process as BSPG_JOB_MARKER (remote_stop.h).
  std::string job_marker;
  // Grid path inside a Slurm allocation: the starter reaches the hosts through Slurm, not ssh.
  bool through_slurm = false;
  // There: this machine's address as the nodes' srun tasks saw it ("" when unknown).
  std::string slurm_launch_address;
  // How the starter keeps each process's output apart (runner.h's JobOutput says the same).
  ProcessOutput output;
  // Recovery in place (bsprun --spares K, where the MPI can): K spare processes start with the
  // job, as its last K ranks, and the starter's fault tolerance is on (Mpi::fault_tolerance).
  // 0: no spares.
  int spares = 0;
  // There, on the grid path over ssh: bsprun's own path, through which a starter that would end
  // the job on a lost daemon starts its daemons (daemon_relay.h); "" for plain ssh.
  std::string daemon_relay;
};

// Whether the user set the MPI's parameter `key` (for Open MPI: OMPI_MCA_key in the environment,
// or --mca key): bsprun's own choice of it then stays out.
bool user_sets_mca(const MpiSettings& s, const std::string& key);

// Local path: N processes of prog on this machine (Open MPI 4: mpirun -np N prog args).
// oversubscribe when N exceeds the cores. With settings.spares K: -np N+K and the MPI's fault
// tolerance; BSPG_SUBJOB_SIZES stays N (the spares are ranks N .. N+K-1, outside the job until
// one takes a lost process's place).
std::vector<std::string> local_mpirun_argv(const MpiSettings& settings, int nprocs,
                                           bool oversubscribe, const std::string& executable,
                                           const std::vector<std::string>& args);

// Grid path: one starter for every subjob, one app context per subjob; with Open MPI 4:
//   mpirun [common options] --mca plm_rsh_agent "ssh -F CONFIG" ...
//     -np c0 -host h0:c0 [-wdir D] -x BSPG_SUBJOB=0 -x BSPG_NSUBJOBS=K -x
//     BSPG_SUBJOB_SIZES=c0,c1,..
//     [-x BSPG_JOB_MARKER=M] [-x the caller's MPI parameters (OMPI_MCA_*)] [-x user exports]
//     [-x RSL environment]
//     exe args : -np c1 ...
// A site subjob's hosts become "-host a:2,b:2". A host named by several single-host subjobs
// gets their total as its slots in each (Open MPI counts slots per host, not per app context);
// a host shared by a multi-host subjob and another one is refused (std::invalid_argument).
// BSPG_SUBJOB* always come from the subjob's position, whatever the RSL environment says.
// ssh_config empty: Open MPI's default ssh.
//
// spares (recovery in place, settings.spares > 0): app contexts after the subjobs' (so that the
// spares are the last ranks), one per spare host, each with its count, executable, arguments and
// directory; they get the job's BSPG_NSUBJOBS and BSPG_SUBJOB_SIZES (which count the job's
// processes only) and BSPG_SUBJOB=<the number of subjobs> (no subjob of the job's), and the MPI's
// fault tolerance is switched on.
std::vector<std::string> grid_mpirun_argv(const MpiSettings& settings,
                                          const std::vector<rsl::Subjob>& subjobs,
                                          const std::string& ssh_config,
                                          const std::vector<rsl::Subjob>& spares = {});

// An -host value: "h1:c1,h2:c2" (e.g. of rsl::placement(subjob)).
std::string host_list(const std::vector<rsl::HostSlots>& hosts);

// ---- Master mode (BSP-G's nonpure SPMD; bsplib/src/sections/master.hpp reads what is set here)
// ----

// A slot bsp_begin may place a process on: its host and its subjob (the hosts of a site share
// one subjob, any other host has its own).
struct MasterSlot {
  std::string host;
  int subjob = 0;
};

// What tells the master process it is one: BSPG_MASTER_PROCS (the processes available),
// BSPG_MASTER_SLOTS ("host/subjob,..." in the order processes take them, the master's first;
// only when `slots` is not empty) and BSPG_MASTER_ENV (the variables the spawned processes get
// too: the names of the -x exports and the caller's MPI parameters, e.g. OMPI_MCA_*).
std::vector<std::pair<std::string, std::string>> master_environment(
    const MpiSettings& settings, int available, const std::vector<MasterSlot>& slots);

// The hosts named by a subjob's BSPG_MASTER_SLOTS, each with its number of slots, in the order
// of their first slot; empty when the subjob has no such variable. Throws std::invalid_argument
// when the list is malformed, disagrees with BSPG_MASTER_PROCS, or does not start on the
// subjob's own host, or when the subjob is not a single process.
std::vector<rsl::HostSlots> master_slot_hosts(const rsl::Subjob& subjob);

// The master's mpirun: grid_mpirun_argv for that one subjob (-np 1 on its host), with -host
// naming every slot, so that MPI_Comm_spawn may place processes there.
std::vector<std::string> master_grid_mpirun_argv(const MpiSettings& settings,
                                                 const rsl::Subjob& master,
                                                 const std::string& ssh_config);

// The environment as a map (from environ).
std::map<std::string, std::string> current_environment();

// Renders argv for a person to read or paste into a shell (quotes where needed; control
// characters as $'\n' escapes, so that the line shows as it is and pastes back unchanged).
std::string shell_quote_command(const std::vector<std::string>& argv);

}  // namespace bspg::launcher

#endif
