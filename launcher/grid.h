// grid.h - bsprun's grid path: host file, probe, allocate, RSL, one mpirun over ssh.
#ifndef BSPG_LAUNCHER_GRID_H
#define BSPG_LAUNCHER_GRID_H

#include <functional>
#include <string>
#include <vector>

#include "mpistart.h"
#include "options.h"
#include "remote_stop.h"

namespace bspg::launcher {

// Runs a finished mpirun command line; `remote` says how to reach the job's processes on the
// other hosts should the job have to be stopped. Returns bsprun's exit status.
using RunMpirun = std::function<int(const std::vector<std::string>& argv, const RemoteJob& remote)>;

// Runs the grid path for opt (hostfile and/or rsl_in set). run executes the final mpirun
// command and returns bsprun's exit status. Returns bsprun's exit status.
int run_grid(const Options& opt, const MpiSettings& settings, const RunMpirun& run);

}  // namespace bspg::launcher

#endif
