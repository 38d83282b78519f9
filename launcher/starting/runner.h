// runner.h - run mpirun as a child, forward signals to it, wait for its status.
#ifndef BSPG_LAUNCHER_RUNNER_H
#define BSPG_LAUNCHER_RUNNER_H

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "mpi.h"
#include "mpirun_messages.h"
#include "recovery_lines.h"
#include "remote_stop.h"

namespace bspg::launcher {

struct RunResult {
  int exit_status = 0;        // child's exit code, or 128+signal if it was killed; or the
                              // start_failure's status (125, 126, 127)
  bool timed_out = false;     // the time limit expired and the job was stopped
  int forwarded_signal = 0;   // first signal bsprun received and passed on, 0 if none
  int leftovers_stopped = 0;  // processes of the job still alive after mpirun exited, then stopped
  int leftovers_unkillable = 0;  // of those, how many did not end even after SIGKILL
  bool started = true;           // false: the command could not be executed (error says why)
  std::string error;
  StartFailure start_failure;  // what mpirun reported, when the job could not start
  std::vector<std::string>
      not_stopped;  // "host (why)": hosts that could not be reached to stop the job
  std::vector<std::string> silent_hosts;  // of those, the ones ssh could not connect to in time
  std::string lost;                       // the watch's word when it stopped the job (a host lost)
  ProcessDeath death;  // a process of the job that died of a signal, as mpirun said
  int crash_pid = -1;  // the process that said it crashed (the library's line), -1: none
  unsigned long long stopped_after_checkpoint = 0;  // the library stopped the job (a stop file)
  unsigned long long checkpoint_not_written = 0;    // the library could not write this checkpoint
  std::string checkpoint_not_written_on;            // on this host (as it calls itself)
  unsigned long long whole_checkpoint = 0;          // the newest the library said is whole
  std::string slurm_starter_refused;  // PRRTE's block: it cannot start through Slurm (held)
  std::string held_consequences;      // the others' words on a loss nothing explained (held)
  int mpirun_signal = 0;                            // mpirun itself ended by this signal
  // The job ended well after recovering in place from a host that does not answer, and bsprun
  // ended mpirun, which waited for that host (the library's kEndedWithoutFinalizing line).
  bool ended_leaving_lost = false;
  bool remote_stop_ran = false;  // bsprun went to the hosts to stop the job there
  double stopping_s = 0;         // from a stop request (signal, time limit, watch) to the end
  // The starter printed text and did not start every process within the bound (JobOutput): the
  // run was stopped, and bsprun said so with that text (exit_status 125).
  bool start_overdue = false;
  // Recovery in place (bsprun --spares): the library's recoveries, and its word that a lost
  // process could not be recovered in place (the job then ended with kExitNoRecoveryInPlace).
  std::vector<InPlaceRecovery> recoveries;
  std::optional<NoRecoveryInPlace> no_recovery;
};

// What else may end a run.
struct JobWatch {
  // Polled about every 200 ms while the job runs: "" or what was lost and how it was noticed
  // (e.g. a host that stopped answering); run_job says so ("bsprun: lost ...") and stops the
  // job at once, with a short grace.
  std::function<std::string()> lost;
  // The host lost, when lost() said one: not waited for when the job's processes are stopped.
  std::function<std::string()> lost_host;
  // The job may be restarted: Open MPI's messages about a lost host or a killed process are
  // recorded in the result instead of shown (MpirunStderr::quiet_losses).
  bool quiet_losses = false;
  // The starter may wait for ever after a failure (Mpi::ends_on_start_failure; MPICH's Hydra):
  // when a process cannot start on a host, run_job stops the job once the starter's message is
  // recognised, and it ends with that failure's status; when a process said it crashed, run_job
  // stops the job 5 s later if the starter has not ended it by then.
  bool starter_may_wait_for_ever = false;
  // Where the starter said only that a proxy ended (MPICH's Hydra) and no ssh was there to say
  // which host went (the Slurm path): asked after the job, the hosts that no longer answer, as
  // "host (why)"; the first is then the cause, a host lost while the job ran.
  std::function<std::vector<std::string>()> unreachable;
  // Called as soon as the library said it recovered in place (its line is read), while the job
  // runs on: a lost process that may still live (frozen) is to be ended.
  std::function<void(const InPlaceRecovery&)> recovered;
  // The hosts that stopped answering whose processes bsprun named lost (the library then ends
  // the job without finalizing MPI, and says so: only then is that line taken). They are not
  // waited for when the job's processes are stopped at its end.
  std::function<std::vector<std::string>()> hosts_left;
  // Called as soon as bsprun's relay said that a host's MPI daemon is gone with its host
  // (daemon_relay.h): mpirun was not told, and the job may recover in place.
  std::function<void(const std::string& host)> daemon_gone;
  // Called once the library said that it cannot recover in place (its line is read).
  std::function<void()> not_recovered;
};

// How run_job passes the job's output on. With a separation (the starter's argv asks for it:
// MpiSettings::output; run_job reads the files and empties the directory after the run), each
// process's output goes out in whole lines (output_lines.h): a line is held until its newline,
// or until no byte of it came for a second (a prompt), or it holds 4 MiB, or the job ended; a
// process's stdout stays bsprun's stdout, its stderr bsprun's stderr.
struct JobOutput {
  ProcessOutput separation;
  // --tag-output: every line (of a separated process) starts with "[pid] ", its BSP pid: the
  // rank, and in master mode the master 0 and the spawned process of rank k k+1.
  bool tag_with_pid = false;
  // The processes the starter is to start, of a program linked with bspg, which says when each
  // has started (BSPG_SAY_STARTED); 0: not watched. Until every one has, what the starter itself
  // prints is held: text from it followed by no start within start_bound_s ends the run, with
  // that text in one line (a starter that complains and then waits for ever); once they have,
  // the text goes out as it came, and so it does when the starter ends by itself.
  int processes_to_start = 0;
  double start_bound_s = 30;
};
// Set once by main before any run; until then a job's output passes as it comes.
void set_job_output(const JobOutput& output);

// Runs argv[0] (looked up on PATH). A stop signal already pending (hold_stop_signals) starts
// nothing: the result says it was forwarded. When bsprun is the terminal's foreground job mpirun
// shares its process group, so terminal signals (Ctrl-C) reach mpirun directly; otherwise mpirun
// gets a process group of its own. SIGINT/SIGTERM/SIGHUP/SIGQUIT sent to bsprun are passed
// on (to that group, or to mpirun), once. time_limit_s > 0 stops the job with SIGTERM when it
// expires. A stop request (signal or time limit) first continues every process of the job on
// this machine (SIGCONT: a stopped process cannot act on the signal) and, on the grid path,
// stops the job's processes on every host of `remote` over ssh (remote_stop.h); it escalates:
// kill_grace_s/3 later every process of the job here but mpirun gets SIGTERM, kill_grace_s
// later everything SIGKILL. mpirun never gets a second signal (it would print "Abort is in
// progress...hit ctrl-c again"). Ranks still alive when mpirun exits are stopped before
// run_job returns (bsprun is a child subreaper for the run). On the grid path, after a stop or
// a failure, run_job returns only once the hosts' stop scripts ended the job's processes and
// their MPI daemons there (or the hosts could not be reached, which it says).
// stdin is inherited; mpirun's stderr goes through MpirunStderr, which replaces Open MPI's
// start-up failure blocks with one line (and drops its banners once a stop began); so do the
// processes' stderr lines where the starter writes them to files (JobOutput). mpirun's stdout
// goes through MpirunStdout, which holds the starters' blocks there (MPICH's BAD TERMINATION):
// they are shown after the run only where no crash line, stop or start failure said more.
// bsprun's own lines about what could not be stopped are printed here.
RunResult run_job(const std::vector<std::string>& argv, double time_limit_s,
                  double kill_grace_s = 15, const RemoteJob& remote = {},
                  const JobWatch& watch = {});

// Prints the command line on stderr when verbose, flushes bsprun's output, and runs it (run_job
// with a 15 s grace period). After show_commands_only(), prints it on stdout instead and runs
// nothing: the result is that of a run that ended with status 0.
void show_commands_only();
RunResult run_mpirun(const std::vector<std::string>& argv, bool verbose, double time_limit_s,
                     const RemoteJob& remote = {}, const JobWatch& watch = {});

// bsprun's exit status for a run as it ended: its lines about leftovers, the time limit or a lost
// host first. A run stopped by a signal gives 128+signal and notes the signal, so that bsprun,
// once it has removed its files and released its locks, ends by it (signal_to_end_with).
int exit_status_of(const RunResult& result, double time_limit_s);

// Holds the stop signals (SIGINT, SIGTERM, SIGHUP, SIGQUIT) from now on, in this thread and every
// thread started after it: call it first in main. One that arrives between runs (while bsprun
// probes, surveys or copies shards) then waits for the next run_job, which starts nothing and
// reports it as a stop (forwarded_signal); bsprun cleans up and says how to continue instead of
// dying on the spot. Processes bsprun starts get the signals unblocked.
void hold_stop_signals();

// The stop signal waiting for bsprun (held, not yet acted on), without taking it; 0: none. The
// restart loop can ask between its phases, so as not to announce a restart that will not run.
int pending_stop_signal();

// The stop signal bsprun should end by (exit_as_killed_by) once it is done: the one a run was
// stopped by (exit_status_of noted it), else one that arrived since and is still pending; 0: none.
int signal_to_end_with();

// Ends this process the way signal sig would have (default action, so the parent sees
// "killed by sig"). A shell running bsprun in a script or loop stops there too, as it does for
// any program stopped by Ctrl-C; an exit(130) would make it carry on with the next command.
// SIGQUIT, whose default action dumps core, ends with exit status 128+SIGQUIT instead.
// Flushes stdio first (std::cout and std::cerr write through it: they are synced with stdio).
[[noreturn]] void exit_as_killed_by(int sig);

}  // namespace bspg::launcher

#endif
