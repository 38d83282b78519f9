// openmpi_blocks.cpp - Open MPI's framed blocks on mpirun's stderr: a start-up failure, a process
// that died of a signal (and its preface), the others' notices that a peer hung up.
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "message_lines.h"
#include "mpirun_messages.h"
#include "untrusted.h"

namespace bspg::launcher {
namespace messages_internal {

// Whether the word that ends at `end` of text is the name Open MPI's starter gives itself (its
// argv[0]'s base name: mpirun, or Debian's mpirun.openmpi; prterun in Open MPI 5).
bool starter_word_before(const std::string& text, std::size_t end) {
  std::size_t begin = text.find_last_of(" \n/", end == 0 ? 0 : end - 1);
  begin = begin == std::string::npos || end == 0 ? 0 : begin + 1;
  const std::string word = text.substr(begin, end - begin);
  return word.rfind("mpirun", 0) == 0 || word.rfind("mpiexec", 0) == 0 ||
         word.rfind("prterun", 0) == 0;
}

}  // namespace messages_internal

using namespace messages_internal;
namespace {

// The value of a "Key: value" line of a block, or "".
std::string field(const std::vector<std::string>& lines, const std::string& key) {
  for (const auto& line : lines) {
    const std::string text = trim(line);
    if (text.rfind(key, 0) == 0) return trim(text.substr(key.size()));
  }
  return "";
}

// "emu2" in "... Remote daemon: [[1867,0],2] on node emu2 ..." (the HNP's node comes first).
std::string remote_node(const std::string& text) {
  const auto remote = text.find("Remote daemon:");
  const auto on = remote == std::string::npos ? remote : text.find(" on node ", remote);
  if (on == std::string::npos) return "";
  std::istringstream rest(text.substr(on + 9));
  std::string node;
  rest >> node;
  return node;
}

// "mpirun noticed that process rank 3 with PID 0 on node emu2 exited on signal 9 (Killed)."
bool read_death(const std::string& text, ProcessDeath& death) {
  const std::string noticed = " noticed that process rank ";
  auto at = text.find(noticed);
  while (at != std::string::npos && !starter_word_before(text, at)) at = text.find(noticed, at + 1);
  if (at == std::string::npos) return false;
  std::istringstream words(text.substr(at + noticed.size()));
  std::string with, pid_word, pid, on, node, host, exited, on2, signal_word;
  int rank = -1, signal = 0;
  if (!(words >> rank >> with >> pid_word >> pid >> on >> node >> host >> exited >> on2 >>
        signal_word >> signal) ||
      with != "with" || node != "node" || exited != "exited" || signal_word != "signal")
    return false;
  std::string name;
  std::getline(words, name);
  const auto open = name.find('('), close = name.rfind(')');
  death.rank = rank;
  death.host = host;
  death.signal = signal;
  death.signal_name = open != std::string::npos && close != std::string::npos && close > open
                          ? name.substr(open + 1, close - open - 1)
                          : "";
  return true;
}

// mpirun's preface to the block that names a dead process: "Primary job  terminated normally,
// but 1 process returned a non-zero exit code. Per user-direction, the job has been aborted."
// ("Child job 2 ..." for processes a master spawned).
bool is_death_preface(const std::string& text) {
  return contains(text, " terminated normally, but ") && contains(text, "non-zero exit code") &&
         (contains(text, "Primary job") || contains(text, "Child job"));
}

// What the other processes say when a lost or dead one hangs up on them.
bool is_peer_hang_up(const std::string& text) {
  return contains(text, "communication peer process has unexpectedly disconnected") ||
         contains(text, "failed to TCP connect to a peer MPI process");
}

}  // namespace

std::string MpirunStderr::end_block() {
  std::vector<std::string> lines;
  lines.swap(block_);
  const std::string text = joined(lines);
  // Open MPI 5's fault tolerance (bsprun --spares) warns at every start that its shared-memory
  // windows are "not tested for post-failure operation": bspg checks its own waits
  // (tests/recovery).
  if (contains(text, "is not tested for post-failure")) return "";
  // What the other processes say when a lost one hangs up on them: held until it is known
  // whether a loss explains it (with restarts), or a death (without).
  if (is_peer_hang_up(text) && !stopping_) {
    std::string& held = quiet_losses_ ? consequences_ : unexplained_;
    if (!quiet_losses_ && death_explained()) return "";
    for (const auto& line : lines) held += line + "\n";
    return "";
  }
  // A death: its preface and its block are held (see finish()).
  if (is_death_preface(text)) {
    preface_.clear();
    for (const auto& line : lines) preface_ += line + "\n";
    preface_of_child_ = contains(text, "Child job");
    return "";
  }
  if (ProcessDeath death; read_death(text, death)) {
    take_death(death);
    return "";
  }
  // Any other block: a preface held before it goes first, as it was.
  std::string out;
  if (!quiet_losses_ && !stopping_) out.swap(preface_);
  preface_.clear();
  // Open MPI 5's starter (PRRTE) on a process that called MPI_Abort: the process has said why
  // (bspg's one line, or the program's own bsp_abort message) and the exit status says the rest.
  if (contains(text, "has exited due to process rank") && contains(text, "calling \"abort\"") &&
      !std::getenv("BSPG_MPI_ABORT_BANNER"))
    return out;
  if (contains(text, "The Slurm process starter requires a minimum Slurm version")) {
    slurm_starter_refused_ = text;
    return out;
  }
  if (recognise(text, lines)) {
    if (failure_.exit_status != 0) out += say_failure_once();
    return out;
  }
  if (stopping_) return "";  // whatever Open MPI says while it is being stopped
  out += release_ssh_lines();
  for (const auto& line : lines) out += line + "\n";
  return out;
}

// mpirun's block on a process that died of a signal: recorded; said in one line at the end
// (finish), unless the process said it crashed, restarts will say it, or the job is being stopped.
void MpirunStderr::take_death(const ProcessDeath& death) {
  preface_.clear();  // it announced this
  if (death_.rank < 0) death_ = death;
  if (!death_line_.empty()) return;  // the first death is the cause; the others follow from it
  const int pid = death.rank + (preface_of_child_ ? 1 : 0);
  death_line_ =
      "bsprun: process " + std::to_string(pid) +
      (death.host.empty() ? "" : " on " + untrusted::printable(death.host)) + " ended by signal " +
      std::to_string(death.signal) +
      (death.signal_name.empty() ? "" : " (" + untrusted::printable(death.signal_name) + ")") +
      "\n";
}

// True when the block is one of Open MPI's start-up messages (then it is not passed on).
bool MpirunStderr::recognise(const std::string& text, const std::vector<std::string>& lines) {
  const auto set = [&](int status, const std::string& host, const std::string& message) {
    if (failure_.exit_status == 0) failure_ = StartFailure{status, host, message, false, ""};
    return true;
  };
  // PRRTE 3.0 (Open MPI 5) says "lacked permissions" of a missing program as well as of one that
  // is not executable.
  if (contains(text, "could not access or execute an executable") ||
      contains(text, "lacked permissions to execute an executable")) {
    const std::string node = field(lines, "Node:");
    return set(
        127, node,
        node + ": program " + field(lines, "Executable:") + " not found there, or not executable");
  }
  // ... and this when it cannot change to the working directory (or really ran out of files).
  if (contains(text, "system limit exceeded on number of files that can be open") &&
      contains(text, "when attempting to start process")) {
    const std::string node = field(lines, "Node:");
    return set(125, node,
               node +
                   ": could not start the job there: Open MPI says the limit of open files "
                   "was reached, which it also says when the working directory does not exist "
                   "there or cannot be entered");
  }
  if (contains(text, "was unable to find the specified executable file")) {
    const std::string node = field(lines, "Node:");
    return set(127, node, node + ": program " + field(lines, "Executable:") + " not found there");
  }
  if (contains(text, "tried to fork a new process via the \"execve\" system call but failed")) {
    const std::string node = field(lines, "Local host:");
    return set(126, node,
               node + ": cannot execute " + field(lines, "Application name:") + ": " +
                   field(lines, "Error:"));
  }
  if (contains(text, "change to the specified working directory")) {
    const std::string node = field(lines, "Node:");
    return set(125, node,
               node + ": cannot change to the working directory " +
                   field(lines, "Working directory:") +
                   " (it does not exist there, or cannot be entered)");
  }
  if (contains(text, "unable to reliably start one or more daemons")) {
    not_started_over_ssh("Open MPI's daemon did not start (mpirun gives no reason)");
    return true;
  }
  if (contains(text, "has lost communication with a remote daemon")) {
    if (stopping_) return true;
    const std::string node = remote_node(text);
    // PRRTE (Open MPI 5) says this too of a daemon that ssh could not start: ssh's held line about
    // that host's address tells the two apart.
    for (const auto& [address, name] : address_names_) {
      if (name != node) continue;
      for (const auto& line : ssh_lines_) {
        if (names_address(line, address) && !is_cut_connection(line)) {
          not_started_over_ssh("");
          return true;
        }
      }
    }
    set(125, node, lost_contact(node));
    failure_.host_lost = failure_.host == node;
    if (quiet_losses_) reported_ = true;  // bsprun says it when it restarts
    return true;
  }
  // Consequences of a failure already reported.
  if (failure_.exit_status != 0 &&
      (contains(text, "was unable to start the specified application as it encountered an error") ||
       contains(text, "does not know how to route a message"))) {
    return true;
  }
  return false;
}

}  // namespace bspg::launcher
