// recovery_lines.h - the library's two lines about recovery in place (bsprun --spares), read from
// the job's standard error. Both come from the processes, so they are untrusted: a line is taken
// only when it has exactly the form below, every number in range and every host name plain.
//
// After a recovery in place, one line:
//   bspg: recovered in place[ from checkpoint C]: process P (host H, process id X) lost, ...
// (several lost processes are joined by ", " or " and "; what follows " lost" is free).
// When the job cannot recover in place, one line before it ends through MPI_Abort with
// kExitNoRecoveryInPlace:
//   bspg: process P (host H, process id X) lost; no recovery in place: WHY; the job ends for a
//   restart
#ifndef BSPG_LAUNCHER_RECOVERY_LINES_H
#define BSPG_LAUNCHER_RECOVERY_LINES_H

#include <optional>
#include <string>
#include <vector>

namespace bspg::launcher {

// The exit status of a job that lost a process it could not recover in place (every living
// process ends with it): bsprun restarts it as after any other loss.
constexpr int kExitNoRecoveryInPlace = 76;

// How the library's last line begins when the job ended well after recovering in place from
// processes on a host that does not answer, which the MPI's run-time still waits for.
constexpr const char* kEndedWithoutFinalizing = "bspg: the job ended without finalizing MPI: ";

// A lost process as the library names it.
struct LostProcess {
  int pid = -1;         // its BSP pid (0 .. 999999)
  std::string host;     // the host it ran on, as that host calls itself (a plain name)
  long process_id = 0;  // its operating system's process id there (2 .. 4194304)
};

struct InPlaceRecovery {
  unsigned long long checkpoint = 0;  // the checkpoint the job went on from (0: not said)
  std::vector<LostProcess> lost;      // never empty
};

struct NoRecoveryInPlace {
  LostProcess lost;  // pid -1 and no host where the line names none ("a process was lost")
  std::string why;  // the library's reason, printable (untrusted::printable)
};

// The line's recovery, or nothing when it is not such a line (or not a well-formed one).
std::optional<InPlaceRecovery> recovered_in_place(const std::string& line);
// The same for the line that ends the job for a restart.
std::optional<NoRecoveryInPlace> no_recovery_in_place(const std::string& line);

// Whether `name` may be a host's name in such a line: 1 to 255 letters, digits, '.', '-' and
// '_', not starting with '-' or '.'.
bool plain_lost_host(const std::string& name);

}  // namespace bspg::launcher

#endif
