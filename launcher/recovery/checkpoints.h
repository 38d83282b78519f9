// checkpoints.h - what bsprun knows about a job's checkpoint files (the contract with libbspg:
// c<N>/shard-<pid>, c<N>/copy-<pid>, c<N>/complete-<pid> in the job's checkpoint directory on
// each host, and the file "stop" there). Pure logic and shell text, unit-tested; restart.cpp runs
// the scripts on the hosts.
//
// Finding the checkpoint to restart from: every reachable host reports (survey_script) the
// complete markers and the shards and copies it holds, each checked where it lies with
// `bspg-hostinfo --check-shard`. A checkpoint is whole when some host holds a complete marker for
// it and, for every process, some reachable host holds a shard or copy of it that passed the
// check. The newest whole one is used; each process's shard is then brought to the host that
// process will run on, unless one is there already (plan_transfers).
#ifndef BSPG_LAUNCHER_CHECKPOINTS_H
#define BSPG_LAUNCHER_CHECKPOINTS_H

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace bspg::launcher {

// ---- The job and its directory ----------------------------------------------------------------

// A new job id: "YYYYMMDD-HHMMSS-" and 6 hex digits (local time).
std::string new_job_id();
// A new run id: 16 lowercase hex digits, the seconds since the epoch and then random bits, so
// that a newer run's id sorts after an older one's (BSPG_RUN, the mark of a run's checkpoints).
std::string new_run_id();
// "" or why `run` is not a run id.
std::string run_id_problem(const std::string& run);
// The program and its arguments as 16 lowercase hex digits (BSPG_PROGRAM_ID): a resumed run
// must give the same ones.
std::string program_id(const std::string& program, const std::vector<std::string>& args);
// Any text as 16 lowercase hex digits (names lock files after the directories they lock).
std::string text_id(const std::string& text);
// The program id of markers written without BSPG_PROGRAM_ID (a plain mpirun): any arguments.
constexpr const char* kUnknownProgram = "0000000000000000";

// "~/.cache/bspg/checkpoints/ID": on each host, below that host's home directory.
std::string default_checkpoint_dir(const std::string& job_id);
// The directory as SFTP names it: "~/" dropped (SFTP paths without '/' start at the home).
std::string sftp_path(const std::string& dir);
// The directory on this machine: "~/" replaced by $HOME.
std::string local_path(const std::string& dir);

// ---- Scripts for the hosts (sh; see hosts::guarded_command for the quoting rules) ------------

// Reports what `dir` holds on the host it runs on: markers, and every shard and copy with
// bspg-hostinfo --check-shard's verdict (`hostinfo` first, else bspg-hostinfo on PATH; neither:
// not checked). Removes dir/stop first when remove_stop (a restarted job must not stop again).
std::string survey_script(const std::string& dir, const std::string& hostinfo, bool remove_stop);
// Creates dir/stop naming run `run`: that run stops right after its next checkpoint (exit status
// 75); any other run ignores the file. Never follows a symlink planted in its place.
std::string stop_file_script(const std::string& dir, const std::string& run = "");
// Removes dir/stop, or (whole_directory) the whole directory.
std::string remove_script(const std::string& dir, bool whole_directory);

// ---- What a host holds ----------------------------------------------------------------------

struct HeldFile {
  std::uint64_t checkpoint = 0;
  std::string run;  // the run that wrote it, from its header ("" when it was not checked)
  int pid = 0;
  bool copy = false;         // c<N>/copy-<pid>, else c<N>/shard-<pid>
  bool checked = false;      // bspg-hostinfo --check-shard ran
  bool whole = false;        // it said "ok <pid> <N>" (or it could not run: then assumed whole)
  std::string problem;       // when checked and not whole: its verdict (untrusted text)
  std::string name() const;  // "c<N>/shard-<pid>" or "c<N>/copy-<pid>"
};

// A checkpoint of one run: (run id, checkpoint number).
using RunCheckpoint = std::pair<std::string, std::uint64_t>;

// What a complete marker says ("bspg checkpoint N of P processes run RUN program PROGRAM").
struct Marker {
  int nprocs = 0;
  std::string program;  // program_id() of the run that wrote it
};

struct Holdings {
  std::string host;
  std::vector<HeldFile> files;
  std::map<RunCheckpoint, Marker> complete;  // from the complete markers
  std::vector<std::string> skipped;          // lines not understood: why, each (named, skipped)
};

// Reads survey_script's output into `holdings` (host set by the caller): "" or the problem with
// the listing as a whole (none, or cut short). The host is not trusted: names and numbers are
// checked, verdicts kept as text; a line that is not understood is put in `skipped` and the rest
// of the listing still counts.
std::string read_survey(const std::string& output, Holdings& holdings);

// ---- Choosing a checkpoint ---------------------------------------------------------------------

struct Source {
  std::string host;
  HeldFile file;
};

struct CheckpointChoice {
  std::uint64_t checkpoint = 0;              // the newest whole one; 0 when there is none
  std::string run;                           // the run that wrote it
  std::string program;                       // the program_id() its markers name
  int nprocs = 0;                            // the processes its markers name
  std::vector<std::vector<Source>> sources;  // per pid: usable files, checked ones first
  bool any_marked = false;   // some host holds a complete marker of a checkpoint of nprocs
  std::string why_none;      // when checkpoint == 0 and any_marked: why none is whole
  std::string other_nprocs;  // the newest marked checkpoint of another process count,
                             // e.g. "checkpoint 4 of 3 processes"
};

// The newest checkpoint of `nprocs` processes that the hosts hold whole, of run `run` (a restart:
// only the run's own checkpoints count), or with run "" of any run (--resume: the newest run's
// first, a checkpoint's files all of the run its markers name).
CheckpointChoice choose_checkpoint(const std::vector<Holdings>& hosts, int nprocs,
                                   const std::string& run = "");

struct Transfer {
  int pid = 0;
  std::string from_host, from_name;  // e.g. "emu3", "c4/copy-2"
  std::string to_host, to_name;      // e.g. "emu1", "c4/shard-2"
};

// For each process whose new host (host_of_pid[pid]) holds no usable file of the checkpoint: one
// copy from a host that does, written there as its shard.
std::vector<Transfer> plan_transfers(const CheckpointChoice& choice,
                                     const std::vector<std::string>& host_of_pid);

}  // namespace bspg::launcher

#endif
