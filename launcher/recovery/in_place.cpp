// in_place.cpp - see in_place.h.
#include "in_place.h"

#include <signal.h>

#include "frozen.h"

namespace bspg::launcher {

InPlaceChoice choose_in_place(const Options& opt, const Mpi& mpi) {
  InPlaceChoice choice;
  if (opt.spares <= 0) return choice;
  const std::string spares = "--spares " + std::to_string(opt.spares);
  if (opt.recovery == Options::Recovery::Restart) {
    choice.not_used = spares + " with --recovery restart: no spare is started; a lost process " +
                      "restarts the job from its newest checkpoint";
    return choice;
  }
  if (const std::string why = mpi.in_place_unavailable(); !why.empty()) {
    if (opt.recovery == Options::Recovery::InPlace)
      choice.refused = "--recovery in-place is not possible: " + why;
    else
      choice.not_used = spares + ": no recovery in place: " + why;
    return choice;
  }
  choice.spares = opt.spares;
  return choice;
}

std::string in_place_text(const InPlaceRecovery& recovery, int used, int allowed) {
  std::string lost;
  for (std::size_t i = 0; i < recovery.lost.size(); ++i)
    lost += std::string(i == 0                          ? ""
                        : i + 1 == recovery.lost.size() ? " and "
                                                        : ", ") +
            std::to_string(recovery.lost[i].pid) + " on " + recovery.lost[i].host;
  const bool one = recovery.lost.size() == 1;
  return "process" + std::string(one ? " " : "es ") + lost + " lost: recovered in place (" +
         (one ? "a spare took its place" : "spares took their places") +
         (recovery.checkpoint > 0 ? ", from checkpoint " + std::to_string(recovery.checkpoint)
                                  : std::string()) +
         "), without a restart of the job; restart " + std::to_string(used) + " of " +
         std::to_string(allowed) + " used";
}

bool same_host_name(const std::string& said, const std::string& name) {
  if (said.empty() || name.empty()) return false;
  if (said == name) return true;
  if (said.find_first_not_of("0123456789.") == std::string::npos ||
      name.find_first_not_of("0123456789.") == std::string::npos)
    return false;
  const auto short_name = [](const std::string& n) { return n.substr(0, n.find('.')); };
  return !short_name(said).empty() && short_name(said) == short_name(name);
}

std::string end_lost_process_here(const LostProcess& lost,
                                  const std::vector<std::string>& job_lines,
                                  const std::string& this_host) {
  const std::string which = "process " + std::to_string(lost.pid) + " (process id " +
                            std::to_string(lost.process_id) + " on " + lost.host + ")";
  if (!same_host_name(lost.host, this_host))
    return which + ": not this machine (" + this_host + "), where the job runs: not ended";
  if (lost.process_id <= 1 || job_lines.empty()) return which + ": not a process of the job";
  for (const JobProcess& p : local_job_processes(job_lines)) {
    if (p.pid != lost.process_id) continue;
    if (p.daemon) return which + ": an MPI daemon, not a process of the job: not ended";
    if (kill(static_cast<pid_t>(p.pid), SIGKILL) != 0) return which + ": could not be ended";
    return which + ": still there (" +
           std::string(is_stopped_state(p.state) ? "stopped" : "running") + "), ended";
  }
  return "";  // gone already
}

}  // namespace bspg::launcher
