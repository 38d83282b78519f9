// cores.h - what bspg counts as a host's cores: physical cores as hwloc sees them (what mpirun
// counts as slots), or hardware threads on machines that expose no core level. Used by
// bspg-hostinfo (which the probe runs on remote hosts) and by bsprun on this machine, so both
// count alike.
#pragma once

#include <hwloc.h>

namespace bspg::hosts {

// Cores of a loaded topology; 0 if it has neither cores nor hardware threads.
int cores_of(hwloc_topology_t topology);

// Cores of this machine; never less than 1 (std::thread's count when hwloc cannot tell).
int this_host_cores();

}  // namespace bspg::hosts
