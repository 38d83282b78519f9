// cut_links.hpp - a lost process the MPI cannot see: one on a host that stopped answering (frozen,
// cut off), whose connections stay open as far as this host's kernel knows. bsprun, which noticed
// it, names it; shutting down this process's TCP connections to that host makes the MPI's
// transport fail them now, and the MPI's fault tolerance (ULFM) then reports the process lost, as
// it reports a killed one. Linux only (/proc/self/fd); a no-op elsewhere.
#pragma once

#include <string>
#include <vector>

namespace bspg::cut_links {

// This host's network addresses, numeric (IPv4 and IPv6), loopback ones left out, separated by
// spaces: what a peer sees as this process's end of a connection.
std::string local_addresses();

// Shuts down the receiving side of every TCP connection of this process whose far end has one
// of `addresses` (as local_addresses gives them); how many. Costs one look at each open file.
int cut_connections_to(const std::vector<std::string>& addresses);

}  // namespace bspg::cut_links
