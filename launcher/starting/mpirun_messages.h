// mpirun_messages.h - Open MPI's own messages on mpirun's stderr.
//
// When a job cannot start, mpirun prints a framed block (between lines of dashes) and exits with
// an Open MPI error code that looks like "killed by a signal" (131, 132, 135, 205, ...). bsprun
// reads mpirun's stderr through this filter: a block that says the program is missing, cannot be
// executed, the working directory is missing, a daemon could not start on a host or a host was
// lost is replaced by ONE line naming the host and the cause, and the job's exit status becomes
// 127 (not found), 126 (not executable) or 125 (could not start). A process that died of a signal
// is said in one line: the library's own ("bspg: process 2: crashed with signal SIGSEGV ..."),
// after which mpirun's account of that death and of its consequences is dropped, or else bsprun's
// condensed from mpirun's block ("bsprun: process 3 on emu2 ended by signal 9 (Killed)").
// Everything else passes through unchanged: the program's own output and its exit codes.
#ifndef BSPG_LAUNCHER_MPIRUN_MESSAGES_H
#define BSPG_LAUNCHER_MPIRUN_MESSAGES_H

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "recovery_lines.h"

namespace bspg::launcher {

// The first start-up failure recognised.
struct StartFailure {
  int exit_status = 0;  // 125, 126 or 127; 0 when none was recognised
  std::string host;     // the host it happened on, "" when Open MPI does not say
  std::string message;  // the one line bsprun prints (without "bsprun: ")
  // A host, not the program, failed: mpirun lost contact with it while the job ran, or could
  // not start its daemon there (ssh could not reach it). `host` is "" when mpirun does not say.
  bool host_lost = false;
  // When host_lost because a daemon did not start: why, without where (ssh's words, or that
  // mpirun gives no reason), for naming the host once bsprun has found it.
  std::string cause;
};

// A process of the job that died of a signal ("mpirun noticed that process rank R with PID P
// on node H exited on signal S (Name).").
struct ProcessDeath {
  int rank = -1;  // -1: none seen
  std::string host;
  int signal = 0;
  std::string signal_name;  // as mpirun says it, e.g. "Killed"
  std::string described;    // bsprun's own words for it, where the starter did not say it
};

class MpirunStderr {
 public:
  // address_names: ssh destinations (addresses and names) -> the host's name in the host file,
  // so that ssh's own errors ("connect to host 10.1.2.3 ...") name the host.
  explicit MpirunStderr(std::map<std::string, std::string> address_names = {});

  // Takes bytes read from mpirun's stderr; returns what to write to bsprun's stderr now. Lines
  // that may belong to a recognised message are held back until it is complete.
  std::string feed(std::string_view bytes);
  // Nothing arrived for a while: everything held back, as it was.
  std::string flush();
  // The stream ended: flush(), and with quiet_losses what was held as a consequence of a loss
  // (Open MPI's notices of peers that hung up) unless a loss was recorded.
  std::string finish();
  // The job is being stopped on request: Open MPI's blocks from now on are consequences of the
  // stop ("lost communication", "Abort is in progress", ...) and are dropped.
  void stopping() { stopping_ = true; }
  // The job may be restarted (bsprun --restarts): what mpirun says about a lost host or a killed
  // process is recorded, not shown; bsprun says it in its own words. What the other processes
  // said of a loss (a peer hung up, their MPI error handlers) is held: after finish(), what
  // nothing the starter said explained is in held_consequences(), for bsprun to show when the
  // run turns out to have failed by itself (not a loss, a stop, the allocation's end).
  void quiet_losses() { quiet_losses_ = true; }
  const std::string& held_consequences() const { return held_consequences_; }
  // The starter waits for ever after a failure it only reports (MPICH's Hydra: ssh's complaint,
  // a program or directory missing on a host): such a line alone is the failure, said at once.
  void starter_waits_on_failure() { waits_on_failure_ = true; }
  // After the job: the hosts that could not be reached to stop it ("host (why)"). Where the
  // starter only said that a proxy ended or could not be started (Hydra), the first of them is
  // the cause: a host lost while the job ran, or one that could not be reached to start it.
  // Returns the line to say, "" when nothing changes.
  std::string hosts_gone(const std::vector<std::string>& unreachable);

  const StartFailure& failure() const { return failure_; }
  // Hydra said that a proxy ended or could not start, and nothing has said where or why yet:
  // the job is to be stopped (run_job waits a second for ssh's word first); hosts_gone() or
  // finish() then make it the failure.
  bool failure_pending() const {
    return proxy_ended_.exit_status != 0 && failure_.exit_status == 0;
  }
  const ProcessDeath& death() const { return death_; }
  // The signal a process of the job said it crashed with ("bspg: process P: crashed with signal
  // SIGSEGV ..."), 0 when none did.
  int crash_signal() const { return crash_signal_; }
  // The process that said it, -1 when none did.
  int crash_pid() const { return crash_pid_; }
  // N when process 0 said "bspg: stopping after checkpoint N, as asked" (the stop file), else 0.
  unsigned long long stopped_after_checkpoint() const { return stopped_after_checkpoint_; }
  // The library's word that a checkpoint could not be written ("bspg: checkpoint N could not be
  // written on HOST: ..."): N (0: none said) and HOST.
  unsigned long long checkpoint_not_written() const { return checkpoint_not_written_; }
  // The newest checkpoint the library said is whole (BSPG_SAY_WHOLE; its lines are taken out).
  unsigned long long whole_checkpoint() const { return whole_checkpoint_; }
  const std::string& checkpoint_not_written_on() const { return checkpoint_not_written_on_; }
  // Open MPI 5's starter (PRRTE) said that it cannot start through Slurm ("The Slurm process
  // starter requires a minimum Slurm version", its reading when srun no longer runs, as after
  // the allocation ended): the block is held, not shown; "" when it did not.
  const std::string& slurm_starter_refused() const { return slurm_starter_refused_; }
  // The library's recoveries in place, in the order said (its lines pass through), and its word
  // that a lost process could not be recovered in place (the first such line).
  const std::vector<InPlaceRecovery>& recoveries() const { return recoveries_; }
  const std::optional<NoRecoveryInPlace>& no_recovery() const { return no_recovery_; }
  // The library said that every living process of the job ended without MPI_Finalize, while the
  // starter waits for processes lost on a host that does not answer: nothing more will come.
  bool ended_without_finalizing() const { return ended_without_finalizing_; }
  // The hosts whose MPI daemon bsprun's relay found gone with its host (daemon_relay.h), in the
  // order said.
  const std::vector<std::string>& daemons_gone() const { return daemons_gone_; }
  // How many processes said they started ("bspg: process started", the library's under
  // BSPG_SAY_STARTED; its lines are taken out).
  int processes_started() const { return processes_started_; }

 private:
  std::string take_line(const std::string& line);
  std::string end_block();
  std::string release_ssh_lines();
  void not_started_over_ssh(const std::string& no_reason);
  std::string take_hydra_line(const std::string& line);
  std::string take_ssh_line_alone();
  std::string say_failure_once();
  bool recognise(const std::string& text, const std::vector<std::string>& lines);
  void take_death(const ProcessDeath& death);
  void note_crash_line(const std::string& line);
  bool death_explained() const { return crash_signal_ != 0 || death_.rank >= 0; }
  std::string release_unexplained();

  std::map<std::string, std::string> address_names_;
  std::string partial_;                 // bytes of an unfinished line
  bool passing_partial_ = false;        // the unfinished line is passed through as it comes
  std::string passed_start_;            // the start of that line, as far as it was passed
  std::vector<std::string> block_;      // lines of a framed block being read
  std::vector<std::string> ssh_lines_;  // ssh's errors, held until we know whether a block follows
  bool stopping_ = false;
  bool quiet_losses_ = false;
  bool waits_on_failure_ = false;
  bool proxy_not_launched_ = false;  // proxy_ended_ is Hydra's "Launch proxy failed"
  std::string consequences_;         // held with quiet_losses until finish()
  std::string held_consequences_;    // what finish() left to bsprun
  // Without quiet_losses: what follows a death (peers that hung up), held until flush(), dropped
  // when a death explains it by then.
  std::string unexplained_;
  // mpirun's preface to a death ("Primary job  terminated normally, but 1 process returned a
  // non-zero exit code"), held until the block it announces; whether it spoke of a child job
  // (processes a master's bsp_begin spawned: their pid is their rank + 1).
  std::string preface_;
  bool preface_of_child_ = false;
  std::string death_line_;  // bsprun's line for the death, said at finish() unless explained
  int crash_signal_ = 0;
  int crash_pid_ = -1;
  bool dropping_error_handler_ = false;  // inside an MPI error handler's block after a crash
  bool reported_ = false;                // the failure's line was written
  int processes_started_ = 0;
  StartFailure failure_;
  StartFailure
      proxy_ended_;  // Hydra's proxy ended without a reason: the failure unless one follows
  ProcessDeath death_;
  unsigned long long stopped_after_checkpoint_ = 0;
  unsigned long long checkpoint_not_written_ = 0;
  unsigned long long whole_checkpoint_ = 0;
  std::string slurm_starter_refused_;
  std::string checkpoint_not_written_on_;
  std::vector<InPlaceRecovery> recoveries_;
  std::optional<NoRecoveryInPlace> no_recovery_;
  bool ended_without_finalizing_ = false;
  std::vector<std::string> daemons_gone_;
};

// mpirun's stdout. It carries the program's output where the starter does not separate it (Open
// MPI 5), and some of the starter's own text: MPICH's Hydra writes its account of a process that
// ended badly there (a block framed by lines of '=', "=   BAD TERMINATION OF ONE OF YOUR
// APPLICATION PROCESSES", then "YOUR APPLICATION TERMINATED WITH THE EXIT STRING: ..."), and Open
// MPI 5 may forward a spawned process's notice that a peer hung up (a block framed by lines of
// '-') there. Those blocks are held (held()); everything else passes unchanged and at once, in
// order. A line that may begin a block (a blank line, a rule) is held only until the next line
// shows whether it does; an unfinished line only while it may still become one.
class MpirunStdout {
 public:
  // starter_alone: the processes' output is written to files (OutputSeparation::kFiles, as with
  // MPICH), so that mpirun's stdout carries the starter's text alone. Only then are Hydra's
  // blocks looked for: elsewhere a program's blank lines and rules of '=' are not held at all.
  explicit MpirunStdout(bool starter_alone = true) : starter_alone_(starter_alone) {}
  // Takes bytes read from mpirun's stdout; returns what to write to bsprun's stdout now.
  std::string feed(std::string_view bytes);
  // Nothing arrived for a while: what was held because it might begin a block, as it was.
  std::string flush();
  // The stream ended: flush(); the blocks recognised stay in held().
  std::string finish() { return flush(); }
  // The starters' blocks, as they came: for bsprun to show when nothing else explained the run's
  // end (no process said it crashed, no stop was asked for).
  const std::string& held() const { return held_; }

 private:
  enum class State {
    kNone,         // nothing held
    kBlank,        // a blank line, which may precede Hydra's '=' rule
    kEqualsRule,   // a line of '=' (after a blank line or not), which may open Hydra's block
    kHydraBlock,   // inside Hydra's block, after its first line
    kHydraEnd,     // after its closing rule: the exit string may follow
    kExitString,   // after "YOUR APPLICATION TERMINATED WITH THE EXIT STRING: ..."
    kTypically,    // after "This typically refers to a problem with your application."
    kDashRule,     // a line of '-', which may open one of Open MPI's blocks
    kOpenMpiBlock  // inside one of Open MPI's blocks, after its first line
  };
  void take_line(std::string_view line, std::string& out);
  bool may_become_line(std::string_view partial) const;
  void release(std::string& out);

  bool starter_alone_;
  State state_ = State::kNone;
  std::string tentative_;         // lines that may begin a block, not yet known to
  std::string partial_;           // an unfinished line held back (it may become one of those)
  bool passing_partial_ = false;  // the unfinished line is being passed on as it comes
  std::size_t block_lines_ = 0;   // lines of the block being held
  std::string held_;
};

}  // namespace bspg::launcher

#endif
