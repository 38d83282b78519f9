#include "cores.h"

#include <thread>

namespace bspg::hosts {

int cores_of(hwloc_topology_t topology) {
  int cores = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_CORE);
  if (cores <= 0) cores = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_PU);  // no core level
  return cores > 0 ? cores : 0;
}

int this_host_cores() {
  int cores = 0;
  hwloc_topology_t topology;
  if (hwloc_topology_init(&topology) == 0) {
    if (hwloc_topology_load(topology) == 0) cores = cores_of(topology);
    hwloc_topology_destroy(topology);
  }
  if (cores <= 0) cores = static_cast<int>(std::thread::hardware_concurrency());
  return cores > 0 ? cores : 1;
}

}  // namespace bspg::hosts
