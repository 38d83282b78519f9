// options.h - bsprun's command line.
#ifndef BSPG_LAUNCHER_OPTIONS_H
#define BSPG_LAUNCHER_OPTIONS_H

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace bspg::launcher {

// Exit statuses of bsprun itself; any other status is the program's own (through mpirun).
enum ExitStatus {
  kExitUsage = 2,           // bad command line
  kExitResumable = 75,      // the job stopped before its end but can be continued (--resume)
  kExitTimeLimit = 124,     // --time-limit expired, the job was stopped
  kExitLaunchFailed = 125,  // host file, probing, allocation, RSL or mpirun problem
  kExitNotExecutable = 126,
  kExitNotFound = 127,
};

struct Options {
  int nprocs = 0;        // -p (-n, -np, -npes); 0 = not given: master mode, unless --rsl
  int max_procs = 0;     // --max-procs: processes available in master mode; 0 = default
  std::string hostfile;  // --hostfile, else $BSPG_HOSTFILE
  std::string rsl_in;    // --rsl: run this allocation as is
  std::string rsl_out;   // --rsl-out: where to write the allocation
  bool dry_run = false;
  bool show = false;  // --show: the starter's command lines, nothing started
  double probe_timeout_s = 5.0;
  int fanout = 0;  // --fanout: most hosts probed at once; 0 = the probe's default
  bool accept_unknown_host_keys = false;
  bool stage = false;
  double time_limit_s = 0;  // 0 = none
  bool verbose = false;
  bool quiet = false;  // no notice of more processes than cores
  bool tag_output = false;
  std::string profile_dir;  // --profile DIR: superstep profile of the job (bspprof)  // --tag-output: each process's lines start with "[pid] "
  bool help = false;
  std::string help_topic;  // --help TOPIC ("": the one-screen summary)
  bool version = false;
  // Checkpoints and restarts (see restart.h).
  int restarts = 0;                  // --restarts N: restarts after a lost process or host
  double host_timeout_s = 30;        // --host-timeout: a host silent this long is lost
  bool host_timeout_given = false;   // --host-timeout was given
  std::string checkpoint_dir;        // --checkpoint-dir; empty: default_checkpoint_dir(job_id)
  std::string slurm_checkpoint_dir;  // the Slurm path's default (node-local storage); empty: none
  std::string job_id;                // --job-id; empty: a new one
  bool job_id_given = false;         // job_id came from --job-id (not made up by bsprun)
  bool resume = false;               // --resume: continue from the last whole checkpoint
  bool allow_new_args = false;       // --allow-new-args: --resume with other program arguments
  bool clean_up = false;             // --clean-up: end what a job (--job-id) left behind
  double migrate_load = 0;           // --migrate-load X; 0: off
  int copies = 1;                    // --copies K: copies of each checkpoint, on other hosts
  bool copies_given = false;         // (then BSPG_COPIES=K for every process)
  // Recovery in place: spares started with the job take a lost process's place.
  int spares = 0;  // --spares K
  enum class Recovery { Automatic, InPlace, Restart };
  Recovery recovery = Recovery::Automatic;  // --recovery in-place|restart
  std::vector<std::string> exports;  // -x NAME[=VALUE]
  std::vector<std::string> starter_args;  // --mpirun-arg ARG, for the MPI's starter
  std::vector<std::pair<std::string, std::string>> mca;  // --mca KEY VALUE
  std::string program;                                   // first non-option
  std::vector<std::string> program_args;                 // everything after it, untouched
  // bsprun's own arguments as given, before the program (to repeat them: the --resume command).
  std::vector<std::string> given;
};

// A command-line mistake: bsprun prints it with a hint and exits kExitUsage.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Whether the user asked for anything about checkpoints (bsprun then says the job id and where
// its checkpoints are, and how to continue a job that stopped).
bool uses_checkpoints(const Options& opt);

// Parses argv. Options end at the first non-option (the program) or at "--".
// Throws UsageError on unknown options, missing or malformed values.
Options parse_options(int argc, char** argv);

// The short usage lines printed with a usage error.
std::string usage_text();
// The full manual printed by --help.
std::string help_text();

}  // namespace bspg::launcher

#endif
