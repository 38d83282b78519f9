// local_place.h - the local path's restartable run (-p N without a host file).
#ifndef BSPG_LAUNCHER_LOCAL_PLACE_H
#define BSPG_LAUNCHER_LOCAL_PLACE_H

#include <string>

#include "mpistart.h"
#include "options.h"

namespace bspg::launcher {

// Runs the job on this machine, restarting it from its checkpoints as opt says (restart.h):
// bsprun's exit status.
int run_local_restartable(const Options& opt, const MpiSettings& settings,
                          const std::string& program);

}  // namespace bspg::launcher

#endif
