// mpi_openmpi.cpp - Open MPI's mpirun: ORTE's in Open MPI 4, PRRTE's in Open MPI 5.
#include <cstdio>
#include <memory>
#include <string>

#include "daemon_relay.h"
#include "mpi_kinds.h"
#include "mpistart.h"

namespace bspg::launcher {
namespace {

class OpenMpi : public Mpi {
 public:
  OpenMpi(bool prrte, std::string version, std::string starter, bool ulfm)
      : prrte_(prrte), ulfm_(ulfm), version_(std::move(version)), starter_(std::move(starter)) {}

  MpiFamily family() const override { return prrte_ ? MpiFamily::kOpenMpi5 : MpiFamily::kOpenMpi4; }
  std::string name() const override { return "Open MPI " + version_; }
  std::string starter() const override { return starter_; }

  bool is_parameter(const std::string& variable) const override {
    if (variable.rfind("OMPI_MCA_", 0) == 0) return true;
    // Open MPI 5's run-time (PRRTE) and PMIx read parameters of their own.
    return prrte_ && (variable.rfind("PRTE_MCA_", 0) == 0 || variable.rfind("PMIX_MCA_", 0) == 0);
  }
  std::string parameter_variable(const std::string& key) const override {
    return "OMPI_MCA_" + key;
  }

  void start(Argv& argv, const MpiSettings& s) const override {
    argv.push_back(s.mpirun);
    if (s.run_as_root) argv.push_back("--allow-run-as-root");
    // Debian's Open MPI 4 leaves only osc/rdma, which fails over TCP (design.md); Open MPI 5 has
    // no pt2pt, and the library itself chooses there (bsplib/src/superstep/runtime.cpp).
    if (!prrte_ && !user_sets_mca(s, "osc"))
      argv.insert(argv.end(), {"--mca", "osc", "sm,pt2pt"});
    for (const auto& kv : s.mca) argv.insert(argv.end(), {"--mca", kv.first, kv.second});
    // Each process's output in files of its own, not on mpirun's stdout and stderr (nocopy).
    if (s.output.how == OutputSeparation::kFiles)
      argv.insert(argv.end(), {"--output-filename", s.output.directory + ":nocopy"});
  }

  OutputSeparation output_separation(bool grid) const override {
    // ORTE's --tag-output drops output: a tagged 4 KiB piece must fit 8 KiB, which a piece of
    // lines shorter than the tag (about 15 bytes) does not. Its files lose nothing, but are
    // written on each process's host: this machine's alone are bsprun's to read. PRRTE (5.0.7)
    // is no better: its tags name the wrong process once a line comes in several pieces, it
    // moves stderr pieces to stdout, and its --output dir= writes no files (PMIX_ERR_EXISTS).
    return grid || prrte_ ? OutputSeparation::kNone : OutputSeparation::kFiles;
  }
  // --output-filename holds for mpirun's own job only: a spawned job's output comes through
  // mpirun's stdout and stderr as ever.
  bool separates_spawned_output() const override { return prrte_; }

  void oversubscribe(Argv& argv) const override {
    if (prrte_)
      argv.insert(argv.end(), {"--map-by", ":OVERSUBSCRIBE"});
    else
      argv.push_back("--oversubscribe");
  }

  void master_on_this_machine(MpiSettings& s) const override {
    // Open MPI has no shared memory between a job and the processes it spawns: they talk over
    // TCP, which by default leaves out the loopback interface (a machine whose only network is
    // lo could not start them). All of them are on this machine, so loopback is the way.
    if (!user_sets_mca(s, "btl_tcp_if_include") && !user_sets_mca(s, "btl_tcp_if_exclude"))
      s.mca.emplace_back("btl_tcp_if_include", "lo");
  }

  void over_ssh(Argv& argv, const std::string& ssh_config,
                const std::string& daemon_relay) const override {
    // ORTE's launcher is plm/rsh, PRRTE's plm/ssh; both start every ssh here (the generated ssh
    // configuration exists only on this machine) and keep the host file's names as given.
    // PRRTE ends the job when it loses a daemon: where the job recovers in place, its daemons
    // start through bsprun, which holds a lost one's connection (daemon_relay.h). ORTE (Open
    // MPI 4.1) has no fault tolerance to go on with.
    const std::string plm = prrte_ ? "plm_ssh_" : "plm_rsh_";
    const std::string option = prrte_ ? "--prtemca" : "--mca";
    const std::string relay =
        prrte_ && !daemon_relay.empty() ? daemon_relay_agent(daemon_relay, ssh_config) : "";
    if (!relay.empty())
      argv.insert(argv.end(), {option, plm + "agent", relay});
    else if (!ssh_config.empty())
      argv.insert(argv.end(), {option, plm + "agent", "ssh -F " + ssh_config});
    argv.insert(argv.end(), {option, plm + "no_tree_spawn", "1"});
    argv.insert(argv.end(),
                {option, prrte_ ? "prte_keep_fqdn_hostnames" : "orte_keep_fqdn_hostnames", "1"});
    // PRRTE binds each process to a core and refuses a host given more processes than cores (a
    // host file's slots may say so); Open MPI 4 stops binding there instead. The hosts are shared
    // machines chosen for their load: the kernel places the processes.
    if (prrte_) argv.insert(argv.end(), {"--bind-to", "none"});
  }

  void through_slurm(Argv& argv, const std::string& nodes, const std::string&) const override {
    // ORTE's and PRRTE's plm/slurm start one daemon per node with srun (one step), inside the
    // allocation Slurm's variables describe; named here so that no other launcher (ssh) is tried.
    // Where the job uses every node of that allocation they leave srun's --nodelist out, and srun
    // then places the daemons on any nodes of the whole allocation: named here always. --overlap:
    // a step of an earlier run that lost a node stays listed (holding its CPUs) until Slurm gives
    // that node up, and the restarted run's daemons must not wait for it. (Their daemons report
    // every address of their host back, so no launch address is needed.)
    const std::string option = prrte_ ? "--prtemca" : "--mca";
    argv.insert(argv.end(), {option, "plm", "slurm"});
    if (!nodes.empty())
      argv.insert(argv.end(), {option, "plm_slurm_args", "--overlap --nodelist=" + nodes});
    argv.insert(argv.end(),
                {option, prrte_ ? "prte_keep_fqdn_hostnames" : "orte_keep_fqdn_hostnames", "1"});
    if (prrte_) argv.insert(argv.end(), {"--bind-to", "none"});
  }

  std::string host_name_refused(const std::string& name) const override {
    // ORTE (Open MPI 4.1) builds a pattern of the job's node names that allows only letters,
    // digits, '-' and '.': a name with '_' makes mpirun print "illegal character in node name"
    // and wait for ever (a Slurm node's, end with a 23-line error). PRRTE takes such names.
    if (prrte_ || name.find('_') == std::string::npos) return "";
    return "Open MPI " + version_ +
           "'s mpirun cannot start processes on a host whose name has '_' (it stops with "
           "\"illegal character in node name\")";
  }

  std::string grid_master_unavailable(const std::string& where) const override {
    // Open MPI 5.0.7's daemons crash here: a prted whose host runs processes of a spawned job
    // dies of a segmentation fault in libpmix 5.0.7 as the job ends (after "PMIX ERROR ...
    // pmix_server_dyn.c at line 1048", the failed fence of a disconnect), and PRRTE ends the
    // job with "lost communication with a remote daemon". A 30-line MPI program without bspg
    // (MPI_Comm_spawn_multiple from a process on one host onto two hosts, merge, disconnect or
    // free, finalize) does the same in 1 to 4 runs of 10 on emulated hosts with networks of
    // their own, with one app context or several, with or without the disconnect, and whichever
    // side ends first; in bsprun's own master mode it failed for P = 3 and 5 of 2..8. Open MPI 4.1
    // is not affected.
    if (!prrte_) return "";
    return "master mode " + where + " is not available with " + name() +
           " yet (its daemons on other hosts crash as a spawned job ends there, a fault of its "
           "PMIx): give the number of processes with -p, or build bspg with Open MPI 4.1";
  }

  void several_app_contexts(Argv& argv) const override {
    // Open MPI 5.0.7 with PMIx 5.0.7 (Debian 13) crashes every daemon that starts processes of a
    // job of several app contexts ("mpirun -n 1 a : -n 1 b"): PMIx's Open MPI personality (its
    // pmdl/ompi component) passes a null string to printf as it sets the environment of
    // the processes (open-mpi/ompi#13303). Without that component the job runs; its processes
    // then lack Open MPI's OMPI_COMM_WORLD_* variables (PMIX_RANK stays) and take what the MPI
    // library needs from PMIx.
    if (prrte_) argv.insert(argv.end(), {"--pmixmca", "pmdl", "^ompi"});
  }

  void processes(Argv& argv, int n, const std::string& hosts,
                 const std::string& directory) const override {
    argv.insert(argv.end(), {prrte_ ? "-n" : "-np", std::to_string(n)});
    if (!hosts.empty()) argv.insert(argv.end(), {prrte_ ? "--host" : "-host", hosts});
    if (!directory.empty()) argv.insert(argv.end(), {prrte_ ? "--wdir" : "-wdir", directory});
  }

  bool processes_in_order(Argv& argv, int n, const std::vector<rsl::HostSlots>& hosts,
                          const std::string& directory) const override {
    // PRRTE's mappers other than seq put mpirun's own host first wherever the list has it; seq
    // takes one entry of --host per rank, in order.
    if (!prrte_) return false;
    std::string list;
    for (const auto& h : hosts)
      for (int k = 0; k < h.count; ++k) list += (list.empty() ? "" : ",") + h.host;
    argv.insert(argv.end(), {"-n", std::to_string(n), "--map-by", "seq", "--host", list});
    if (!directory.empty()) argv.insert(argv.end(), {"--wdir", directory});
    return true;
  }

  void set_variable(Argv& argv, const std::string& name, const std::string& value) const override {
    argv.insert(argv.end(), {"-x", name + "=" + value});
  }
  void pass_variable(Argv& argv, const std::string& name, const std::string*) const override {
    argv.insert(argv.end(), {"-x", name});
  }

  std::string in_place_unavailable() const override {
    if (ulfm_) return "";
    if (!prrte_)
      return name() + " has no fault tolerance (ULFM came with Open MPI 5): a lost process ends " +
             "the job, and --restarts starts it again from its newest checkpoint";
    return name() + " here was built without fault tolerance (ompi_info: \"FT MPI support: no\")" +
           ": a lost process ends the job, and --restarts starts it again from its newest checkpoint";
  }

  void fault_tolerance(Argv& argv) const override {
    if (!ulfm_) return;
    // Not the heartbeat detector (mpi_ft_detector): with it in its own thread every
    // MPI_Finalize waited 5 s across hosts, and runs through bsprun crashed inside UCX at a loss
    // (tests/recovery/FINDINGS.md); in the progress engine it is late (4.5 s for a 1 s timeout),
    // and a process it declares dead while stopped keeps the survivors' shrink waiting.
    argv.insert(argv.end(), {"--with-ft", "ulfm"});
  }

 private:
  bool prrte_;
  bool ulfm_;
  std::string version_;
  std::string starter_;
};

}  // namespace

std::unique_ptr<Mpi> make_open_mpi(bool prrte, std::string version, std::string starter,
                                   bool ulfm) {
  return std::make_unique<OpenMpi>(prrte, std::move(version), std::move(starter), ulfm);
}

}  // namespace bspg::launcher
