// srun_relay.h - bsprun as the srun that Open MPI 5 starts its daemons with inside a Slurm
// allocation, where the job recovers in place (--spares).
//
// As on the grid path (daemon_relay.h): Open MPI 5.0's run-time ends the whole job the moment it
// loses the connection of one of its daemons, so a node whose processes all end at once (killed,
// rebooted) would take the job with it. Inside Slurm the run-time starts every daemon with one
// `srun ... prted ... prte_hnp_uri ...`, found on PATH; bsprun puts first on mpirun's PATH a
// directory whose `srun` runs
//   BSPRUN --as-srun-relay REAL_SRUN SLURMD_PORT ARGS...
// which points the daemons' way back to mpirun at a port of its own, runs the real srun as its
// child, and relays each daemon's connection. When a daemon's side closes while Slurm's slurmd on
// its node no longer takes a connection, the relay keeps mpirun's side open and says so in one
// line (daemon_gone_line, naming the node): bsprun then names the node's processes lost to the
// others, and the job recovers in place (slurm_watch.cpp, SlurmPlace::leave_silent). A daemon that
// ends while its node answers closes mpirun's side as it would have. An srun that does not start
// prted (bsprun's own steps, another MPI's) is the real srun, unchanged.
//
// The relay ends with mpirun (ending its srun), or when its srun ended and no connection is held;
// with srun's status.
#ifndef BSPG_LAUNCHER_SRUN_RELAY_H
#define BSPG_LAUNCHER_SRUN_RELAY_H

#include <string>

namespace bspg::launcher {

// bsprun's first argument when it runs as srun.
constexpr const char* kSrunRelayOption = "--as-srun-relay";

// argv = {bsprun, kSrunRelayOption, REAL_SRUN, SLURMD_PORT, ARGS...}.
int run_srun_relay(int argc, char** argv);

// The text of the `srun` script that runs the relay: "" where a path cannot be written in it.
std::string srun_relay_script(const std::string& bsprun_path, const std::string& real_srun,
                              int slurmd_port);

}  // namespace bspg::launcher

#endif
