// exit_notes.h - which processes of a local job ended by exit, for MPIs whose starter may report
// success although a process was killed (MPICH 4.2's mpiexec). The library leaves a note per
// process in the directory named by BSPG_EXIT_NOTES (bsplib/src/job.cpp): RANK.begun when MPI
// starts, RANK with its status when it ends by exit.
#ifndef BSPG_LAUNCHER_EXIT_NOTES_H
#define BSPG_LAUNCHER_EXIT_NOTES_H

#include <string>
#include <vector>

namespace bspg::launcher {

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
  // The ranks that began but did not end by exit (killed), in order. Empty where no process
  // left a note (not a bspg program).
  std::vector<int> not_ended() const;
  // Whether a process ended by exit with a status other than 0: the program failed (bsp_abort,
  // say, after which the starter kills the others), rather than lost a process.
  bool ended_with_failure() const;

 private:
  std::string path_;
};

}  // namespace bspg::launcher

#endif
