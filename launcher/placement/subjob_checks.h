// subjob_checks.h - what bsprun agrees to run from an allocation. An RSL file is untrusted (it may
// be written by hand, or by someone else), and its values reach mpirun's command line, so they
// are checked before anything starts:
//   * resourceManagerContact and the hosts in hosts=(...) are host (or site) names, never
//     anything that starts with '-'; with a host file, every host is in it and gets at most its
//     slots (summed over the subjobs that name it);
//   * the counts add up to at most kMaxProcesses;
//   * the executable is an absolute path or a path starting with ./ or ../ (so it is never read
//     as an mpirun option); the directory is an absolute path;
//   * arguments, directory, label and environment hold no control characters; no argument is
//     ":" (mpirun's app context separator); environment names are variable names.
#ifndef BSPG_LAUNCHER_SUBJOB_CHECKS_H
#define BSPG_LAUNCHER_SUBJOB_CHECKS_H

#include <string>
#include <vector>

#include "hosts.h"
#include "rsl.h"

namespace bspg::launcher {

// The most processes one job may have (as for -p).
constexpr long long kMaxProcesses = 1000000;

// Where the hosts come from when a host file is given (slots and membership are checked).
struct HostFileLimits {
  std::string path;                    // for messages
  std::vector<hosts::HostSpec> hosts;  // as read_hostfile gives them
  // The hosts are a Slurm allocation's nodes, their slots the job's CPUs there; path names the
  // job ("Slurm job 42").
  bool slurm_allocation = false;
};

// Checks the subjobs; throws rsl::ParseError ("origin:line:column: ...") at the value when its
// position is known (rsl::Subjob::positions), else std::invalid_argument ("subjob K: ...").
// hostfile may be nullptr (no host file: membership and slots are not checked).
void check_subjobs(const std::vector<rsl::Subjob>& subjobs, const std::string& origin,
                   const HostFileLimits* hostfile);

}  // namespace bspg::launcher

#endif
