// localhost.h - facts about this machine that bsprun needs: cores, programs, mpirun.
#ifndef BSPG_LAUNCHER_LOCALHOST_H
#define BSPG_LAUNCHER_LOCALHOST_H

#include <string>

namespace bspg::launcher {

// This machine's cores, counted as bspg-hostinfo counts them on remote hosts (hosts/cores.h).
int local_core_count();

// Where a program name leads: a name with a '/' is taken as is, any other is looked up
// on PATH and then in the current directory (as mpirun does). The result is absolute.
struct ResolvedProgram {
  enum Problem { kNone, kNotFound, kNotExecutable } problem = kNone;
  std::string path;     // absolute path when problem == kNone
  std::string message;  // otherwise: why, naming the program
};
ResolvedProgram resolve_program(const std::string& name);

// Whether the program at `path` (a regular file) is linked with bspg's library (libbspg.so among
// what it needs): such a program says when each of its processes has started (runner.h's
// JobOutput::processes_to_start). Reads at most the file's first 16 MiB.
bool links_bspg(const std::string& path);

// The first executable called `name` in the directories of PATH (absolute), or "".
std::string search_path(const std::string& name);

// The working directory ("" when it cannot be told, e.g. removed).
std::string current_directory();

// Runs a sh script on this machine (stdin and stderr /dev/null, the stop signals unblocked): its
// standard output, or "" with `error` set. Killed after timeout_s; or, with wind_down_s > 0,
// asked to end (SIGTERM) after timeout_s and returned from with what it printed so far, while a
// thread of its own waits wind_down_s for it to end and then kills it.
std::string run_sh_here(const std::string& script, double timeout_s, std::string& error,
                        double wind_down_s = 0);

// The starter to use: $BSPG_MPIRUN, else the starter of the MPI bspg was built with (mpi.h).
// Empty when none exists.
std::string find_mpirun();

}  // namespace bspg::launcher

#endif
