// bspg-hostinfo: what hwloc says about this host's processors. The probe runs `bspg-hostinfo
// --cores` where it is on the host's PATH (and falls back to nproc where it is not). bsprun also
// runs `bspg-hostinfo --check-shard FILE` on a host to learn whether a checkpoint shard there is
// whole, without copying it anywhere.
#include <hwloc.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "cores.h"
#include "shard.hpp"

namespace {

int count(hwloc_topology_t topology, hwloc_obj_type_t type) {
  const int n = hwloc_get_nbobjs_by_type(topology, type);
  return n < 0 ? 0 : n;
}

void usage(FILE* out) {
  std::fprintf(out,
               "usage: bspg-hostinfo [--cores]\n"
               "       bspg-hostinfo --check-shard FILE\n"
               "  prints this host's cores, hardware threads, packages and NUMA nodes (hwloc);\n"
               "  --cores prints the core count only;\n"
               "  --check-shard reads a bspg checkpoint shard (or copy) whole and prints\n"
               "  \"ok PID N RUN\" (process PID's shard of checkpoint N of run RUN; exit 0)\n"
               "  or what is wrong with it (exit 1)\n");
}

// One line for bsprun: "ok <pid> <checkpoint> <run>" or the problem (no newline in either).
int check_shard(const char* path) {
  bspg::ShardHeader header{};
  const std::string problem = bspg::check_shard_file(path, header);
  if (!problem.empty()) {
    std::printf("%s\n", problem.c_str());
    return 1;
  }
  std::printf("ok %u %llu %.16s\n", header.pid, static_cast<unsigned long long>(header.checkpoint),
              header.run);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  bool cores_only = false;
  if (argc >= 2 && std::strcmp(argv[1], "--check-shard") == 0) {
    if (argc != 3) {
      std::fprintf(stderr, "bspg-hostinfo: --check-shard takes one FILE\n");
      usage(stderr);
      return 2;
    }
    return check_shard(argv[2]);
  }
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--cores") == 0) {
      cores_only = true;
    } else if (std::strcmp(argv[i], "-h") == 0 || std::strcmp(argv[i], "--help") == 0) {
      usage(stdout);
      return 0;
    } else {
      std::fprintf(stderr, "bspg-hostinfo: unknown option '%s'\n", argv[i]);
      usage(stderr);
      return 2;
    }
  }
  hwloc_topology_t topology;
  if (hwloc_topology_init(&topology) != 0 || hwloc_topology_load(topology) != 0) {
    std::fprintf(stderr, "bspg-hostinfo: hwloc cannot read this host's topology\n");
    return 1;
  }
  const int pus = count(topology, HWLOC_OBJ_PU);
  const int cores = bspg::hosts::cores_of(topology);
  if (cores_only) {
    std::printf("%d\n", cores);
  } else {
    char name[256] = "";
    gethostname(name, sizeof name - 1);
    std::printf("hostname %s\ncores %d\nhardware_threads %d\npackages %d\nnuma_nodes %d\n", name,
                cores, pus, count(topology, HWLOC_OBJ_PACKAGE),
                count(topology, HWLOC_OBJ_NUMANODE));
  }
  hwloc_topology_destroy(topology);
  return cores > 0 ? 0 : 1;
}
