// profile_run.h - bsprun --profile DIR: where the job's processes write their superstep records,
// and the profile bspprof makes of them when the job ends (profiler/bspprof.h).
//
// One bsprun at a time profiles into DIR (a lock, DIR/.bsprun.lock; a second is refused before
// its job starts). A fresh job starts with no records in DIR/raw: an earlier job's are set aside
// (DIR/raw.previous) and removed once this job has written records, or put back, with the profile
// made of them untouched, when it wrote none (it never started). --resume of the job whose id
// DIR/raw/job names adds to its records as later attempts; any other job's are set aside as for a
// fresh job. Each run of a job (the first, each restart, each --resume) is one attempt: the
// processes learn its number from BSPG_PROFILE_ATTEMPT, and bspprof marks where each began.
#ifndef BSPG_LAUNCHER_PROFILE_RUN_H
#define BSPG_LAUNCHER_PROFILE_RUN_H

#include <functional>
#include <string>
#include <vector>

#include "options.h"

namespace bspg::launcher {

// Makes DIR and DIR/raw (refusing a DIR that is not this user's own, or DIR/raw a symlink), locks
// DIR, sets earlier records aside as above, and adds BSPG_PROFILE=<DIR made absolute> to exports.
// Returns "" or what is wrong.
std::string prepare_profile(const Options& opt, std::vector<std::string>& exports);

// For --show: the variables prepare_profile would add (the job's token as 1), touching nothing.
void show_profile(const Options& opt, std::vector<std::string>& exports);

// Whether --profile is on for this bsprun.
bool profiling();

// "BSPG_PROFILE_ATTEMPT=N" for the next run of the job (N = 0, 1, ...); "" when not profiling.
std::string next_profile_attempt();

// The profiled job's directory (absolute); "" when not profiling.
const std::string& profile_directory();

// The command that runs, on a host, the sh script it reads on its standard input (an ssh or
// srun command line), and the name of that way in (for messages).
struct ScriptCommand {
  std::function<std::vector<std::string>(const std::string& host)> argv;
  std::string through;  // "ssh", "srun"
};

// Grid path and Slurm path, after each run: brings the record files of this job that the
// processes wrote on other hosts (the same DIR there) into DIR/raw here; they stay there too
// (files of other jobs there are told apart by the job token in their headers). A host whose DIR
// is this one (a shared file system) has nothing to bring. The hosts in `silent` (they stopped
// answering) are not asked, so that no wait for a connect timeout holds up a restart; bsprun
// says that their records stay there. Says on stderr what could not be brought.
void gather_profile(const std::vector<std::string>& hosts, const std::vector<std::string>& silent,
                    const ScriptCommand& command);

// After the job: bspprof's merge into DIR, its summary on stderr; or, when the job wrote no
// records, the earlier records put back (and a line saying so). Returns bspprof's status (0:
// written); bsprun's own status stays the job's.
int finish_profile();

}  // namespace bspg::launcher

#endif
