// exit_notes.h - which processes of a job ended by exit, for MPIs whose starter does not say which
// process was killed (MPICH's Hydra; 4.2's may even report success). The library leaves a note per
// process in the directory named by BSPG_EXIT_NOTES (bsplib/src/sections/exit_notes.cpp):
// RANK.begun when MPI starts, RANK with its status when it ends by exit. On this machine bsprun
// reads the directory (ExitNotes); on the grid path each host's are listed over ssh
// (exit_notes_script).
#ifndef BSPG_LAUNCHER_EXIT_NOTES_H
#define BSPG_LAUNCHER_EXIT_NOTES_H

#include <map>
#include <set>
#include <string>
#include <vector>

namespace bspg::launcher {

// The notes of a job's processes, from one directory or from several hosts.
struct ExitNoteSet {
  std::set<int> begun;
  std::map<int, int> ended;  // rank: the status it ended with
  // One note by its file name ("3.begun"; "3", which holds `status`); other names are ignored.
  void add(const std::string& name, int status);
  // The ranks that began but did not end by exit (killed), in order. Empty where no process
  // left a note (not a bspg program).
  std::vector<int> not_ended() const;
  // Whether a process ended by exit with a status other than 0: the program failed (bsp_abort,
  // say, after which the starter kills the others), rather than lost a process.
  bool ended_with_failure() const;
  // Whether a process ended by exit with exactly `status`.
  bool ended_with(int status) const;
};

// Grid path: where each host's processes leave their notes, "~/..." (each host's home), for
// BSPG_EXIT_NOTES; one directory per run (the job marker, letters, digits and '-').
// With `parent` (the Slurm path: the job's checkpoint directory on each node, which outlives an
// allocation that ends under the job and is removed with the job), PARENT/exits-MARKER instead.
std::string exit_notes_directory(const std::string& job_marker, const std::string& parent = "");
// sh for guarded_command: lists the notes in that directory, one line "note NAME STATUS" each
// between begin and end lines, then removes the directory. With `parent`, also the notes of the
// job's earlier runs there (one bsprun runs a job at a time), and PARENT when that leaves it empty.
std::string exit_notes_script(const std::string& job_marker, const std::string& parent = "");
// Adds a listing's notes to `notes`; false when the listing is not complete.
bool read_exit_notes(const std::string& output, ExitNoteSet& notes);
// sh for guarded_command: leaves bsprun's word in that directory (with `parent` as above) that the
// processes of MPI_COMM_WORLD ranks `ranks` are lost on a host that does not answer (the file
// lost-ranks, the ranks separated by spaces, replaced whole); the library cuts its connections to
// them (bsplib/src/sections/in_place.hpp, watch_named_losses). Prints "named" where it was written.
std::string lost_ranks_script(const std::string& job_marker, const std::vector<int>& ranks,
                              const std::string& parent = "");

class ExitNotes {
 public:
  // A new private directory under TMPDIR (or /tmp); empty path() when none could be made.
  ExitNotes();
  ~ExitNotes();  // removes it and what is in it
  ExitNotes(const ExitNotes&) = delete;
  ExitNotes& operator=(const ExitNotes&) = delete;

  const std::string& path() const { return path_; }
  // "BSPG_EXIT_NOTES=<path>", for the processes' environment.
  std::string variable() const { return "BSPG_EXIT_NOTES=" + path_; }
  // The notes in the directory so far (ExitNoteSet::not_ended, ended_with_failure).
  ExitNoteSet read() const;
  std::vector<int> not_ended() const { return read().not_ended(); }
  bool ended_with_failure() const { return read().ended_with_failure(); }

 private:
  std::string path_;
};

}  // namespace bspg::launcher

#endif
