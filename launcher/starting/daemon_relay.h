// daemon_relay.h - bsprun as Open MPI 5's ssh agent where a grid job recovers in place (--spares).
//
// Open MPI 5.0's run-time (PRRTE 3.0) ends the whole job the moment it loses the connection of
// one of its daemons (open-mpi/ompi#12227). So a host whose processes all end at once (killed,
// rebooted: its kernel closes their connections) would take the job with it, where the MPI's
// fault tolerance could go on without them. bsprun therefore starts each daemon through itself:
//   mpirun --prtemca plm_ssh_agent "BSPRUN --as-daemon-relay SSH_CONFIG" ...
// runs `ssh -F SSH_CONFIG HOST COMMAND` as asked, with the daemon's way back to mpirun (the port
// in prte_hnp_uri) pointed at a port of its own, and relays that connection from a process that
// stays behind. When the daemon's side closes while its host no longer answers on its ssh port,
// the relay keeps mpirun's side open and says so in one line (daemon_gone_line): to mpirun the
// host is then silent, as a frozen one, and bsprun's recovery in place from a silent host takes
// over (grid_place.cpp, leave_silent). A daemon that ends while its host answers (every job's
// normal end, or the daemon alone failing) closes mpirun's side as it would have.
//
// Cost: the daemons' control messages (start, output, the MPI's start-up exchange) take one more
// hop through a process on this machine; the MPI's own traffic between processes does not.
#ifndef BSPG_LAUNCHER_DAEMON_RELAY_H
#define BSPG_LAUNCHER_DAEMON_RELAY_H

#include <sys/socket.h>

#include <string>
#include <vector>

namespace bspg::launcher {

// bsprun's first argument when it runs as the agent.
constexpr const char* kDaemonRelayOption = "--as-daemon-relay";

// The agent: argv = {bsprun, kDaemonRelayOption, SSH_CONFIG, HOST, COMMAND...}. Runs ssh (it
// becomes ssh, so that mpirun sees ssh's status) after leaving the relay behind; the relay ends
// when mpirun closes its side of every connection, or mpirun ends.
int run_daemon_relay(int argc, char** argv);

// The agent's value for plm_ssh_agent: "" where the relay cannot be used (a path with a space,
// which PRRTE would split).
std::string daemon_relay_agent(const std::string& bsprun_path, const std::string& ssh_config);

// The words of a daemon's command with the port of every address list in prte_hnp_uri's value
// replaced by `port` ("prterun-h-1@0.0;tcp://10.0.0.1,10.0.0.2:48613:24,24" -> "...:PORT:24,24";
// tcp6 lists, "[fe80::1]:48613:64", too). The port replaced goes to *hnp_port; false (words
// unchanged) where no such value is found or the ports differ.
bool point_hnp_uri_at(std::vector<std::string>& words, int port, int* hnp_port);

// The relay's line when a daemon's host is gone (`asked`: what it does not answer, "ssh" or, for
// the relay inside Slurm, "Slurm's slurmd"), and the host such a line names ("" for any other
// line, or a name that is not plain).
std::string daemon_gone_line(const std::string& host, const std::string& asked = "ssh");
std::string daemon_gone_host(const std::string& line);

// For the relay inside Slurm (srun_relay.h): a listening socket on every address, its port in
// *port (-1 where none could be made); and mpirun's side of a daemon's connection `daemon`: a
// connection to port hnp_port at the address the daemon reached (-1 where refused), both sides
// sending each message at once.
int relay_listener(int* port);
// A connection (non-blocking) to `address` (its port replaced by `port`) made within `ms`; -1
// where refused, or not made in time.
int connect_within(const sockaddr_storage& address, int port, int ms);
int relay_to_starter(int daemon, int hnp_port);

}  // namespace bspg::launcher

#endif
