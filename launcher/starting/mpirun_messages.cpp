// mpirun_messages.cpp - recognises Open MPI 4.1's start-up failure blocks (see mpirun_messages.h).
#include "mpirun_messages.h"

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <utility>

#include "untrusted.h"

namespace bspg::launcher {
namespace {

// A block longer than this is not one of Open MPI's messages: pass it on as it is.
constexpr std::size_t kMaxBlockLines = 200;
// The library's crash line is shorter than this.
constexpr std::size_t kCrashLineStart = 256;
// Every line of the starters' blocks on stdout is shorter than this.
constexpr std::size_t kLongestStarterLine = 4096;

// A rule: at least 20 of `c` and nothing else. Open MPI frames its messages with a line of 74
// dashes, Hydra its block with 83 '='.
bool is_rule(std::string_view line, char c = '-') {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line.size() >= 20 && line.find_first_not_of(c) == std::string_view::npos;
}

// ssh's own complaints, which mpirun passes on just before "unable to reliably start".
bool is_ssh_error(const std::string& line) {
  const auto starts = [&](const char* prefix) { return line.rfind(prefix, 0) == 0; };
  return starts("ssh: ") || starts("kex_exchange_identification: ") ||
         // a connection that broke while ssh started the daemon
         starts("ssh_dispatch_run_fatal: ") || starts("client_loop: ") ||
         starts("Connection reset by ") ||
         (starts("Connection to ") && line.find(" closed by remote host") != std::string::npos) ||
         line.find("Permission denied (") != std::string::npos ||
         line == "Host key verification failed." || starts("Connection closed by ") ||
         starts("Connection timed out during banner exchange");
}

// PRRTE (Open MPI 5) warns when its ssh child was quicker than it at setting the child's process
// group ("[vm:01281] plm:ssh: Warning: setpgid(1318,1318) failed in parent with errno=Permission
// denied(13)"): the child set it itself, so nothing is wrong, and a user would only be alarmed.
bool is_prrte_setpgid_race(const std::string& line) {
  const std::size_t close = line.find("] plm:ssh: Warning: setpgid(");
  return !line.empty() && line[0] == '[' && close != std::string::npos &&
         line.find("failed in parent with errno=Permission denied", close) != std::string::npos;
}

// One of ssh's lines about a connection that was cut after it was made (the host went away while
// the job ran), rather than one that could not be made.
bool is_cut_connection(const std::string& line) {
  return (line.rfind("Connection to ", 0) == 0 &&
          line.find(" closed by remote host") != std::string::npos) ||
         line.rfind("client_loop: ", 0) == 0 || line.rfind("Connection reset by ", 0) == 0;
}

std::string trim(const std::string& text) {
  const auto begin = text.find_first_not_of(" \t\r");
  if (begin == std::string::npos) return "";
  return text.substr(begin, text.find_last_not_of(" \t\r") - begin + 1);
}

// The value of a "Key: value" line of a block, or "".
std::string field(const std::vector<std::string>& lines, const std::string& key) {
  for (const auto& line : lines) {
    const std::string text = trim(line);
    if (text.rfind(key, 0) == 0) return trim(text.substr(key.size()));
  }
  return "";
}

bool contains(const std::string& text, const char* part) {
  return text.find(part) != std::string::npos;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string text;
  for (const auto& line : lines) {
    if (is_rule(line)) continue;
    std::istringstream words(line);
    std::string word;
    while (words >> word) text += (text.empty() ? "" : " ") + word;
  }
  return text;
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

// Whether the word that ends at `end` of text is the name Open MPI's starter gives itself (its
// argv[0]'s base name: mpirun, or Debian's mpirun.openmpi; prterun in Open MPI 5).
bool starter_word_before(const std::string& text, std::size_t end) {
  std::size_t begin = text.find_last_of(" \n/", end == 0 ? 0 : end - 1);
  begin = begin == std::string::npos || end == 0 ? 0 : begin + 1;
  const std::string word = text.substr(begin, end - begin);
  return word.rfind("mpirun", 0) == 0 || word.rfind("mpiexec", 0) == 0 ||
         word.rfind("prterun", 0) == 0;
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

// The signal named by the library's line for a crashed process ("bspg: process 2: crashed with
// signal SIGSEGV (segmentation fault)"), 0 when the line is not one.
// A line of an MPI error handler's report: "[host:pid] *** ...".
bool is_error_handler_line(const std::string& line) {
  return !line.empty() && line[0] == '[' && line.find("] *** ") != std::string::npos;
}

// PRRTE's words (Open MPI 5) on a daemon connection that broke, as when Slurm ends the starter
// with the job: "[emu4:04917] oob:tcp: send_msg: write failed: Broken pipe (32) [sd = 19]",
// "[emu4:04917] [prterun-emu4-4917@0,0]-[...] prte_oob_tcp_peer_send_handler: unable to send".
bool is_prrte_connection_line(const std::string& line) {
  return !line.empty() && line[0] == '[' &&
         (contains(line, "] oob:tcp: ") || contains(line, " prte_oob_tcp_"));
}

// A Hydra proxy's lines when its connection to mpiexec is cut (MPICH 4.2 through Slurm, as the
// allocation ends): "[proxy:1@emu2] HYD_pmcd_pmip_control_cmd_cb (...): assert (!closed) failed",
// "... callback returned error status", "... demux engine error waiting for event".
bool is_hydra_proxy_cut_off(const std::string& line) {
  return (line.rfind("[proxy:", 0) == 0 || line.rfind("[mpiexec@", 0) == 0) &&
         (contains(line, "assert (!closed) failed") ||
          contains(line, "callback returned error status") ||
          contains(line, "demux engine error waiting for event"));
}

// mpiexec's account of a job that ended badly (MPICH 4.2): "[mpiexec@vm] HYDT_bscu_wait_for_
// completion (...): one of the processes terminated badly; aborting", "... error waiting for".
bool is_hydra_wait_failure(const std::string& line) {
  return line.rfind("[mpiexec@", 0) == 0 &&
         (contains(line, "terminated badly") || contains(line, "error waiting for"));
}

// Slurm's words on a step it ended: "srun: error: emu1: task 0: Exited with exit code 7" (or
// Killed, Terminated), "srun: Job step aborted: ...", "slurmstepd-emu1: error: *** STEP 2.1 ON
// emu1 CANCELLED AT ... ***".
bool is_slurm_step_end(const std::string& line) {
  if (line.rfind("srun: error: ", 0) == 0 && contains(line, ": task ")) return true;
  if (line.rfind("srun: Job step aborted", 0) == 0 || line == "srun: got SIGCONT" ||
      line.rfind("srun: forcing job termination", 0) == 0)
    return true;
  return line.rfind("slurmstepd", 0) == 0 && contains(line, "CANCELLED AT") &&
         (contains(line, "*** STEP ") || contains(line, "*** JOB "));
}

// A line the starter or Slurm writes because a connection or step of the job ended: a Hydra
// proxy cut off (not mpiexec's own "assert (!closed)", which says whether a proxy ended before
// the start), mpiexec's account of a bad end, srun's and slurmstepd's words, PRRTE's broken
// daemon connection.
bool is_echo_of_a_loss(const std::string& line) {
  return (line.rfind("[proxy:", 0) == 0 && is_hydra_proxy_cut_off(line)) ||
         is_hydra_wait_failure(line) || is_slurm_step_end(line) || is_prrte_connection_line(line);
}

// "bspg: checkpoint N is whole" (checkpoint.cpp, under BSPG_SAY_WHOLE): N, else 0.
unsigned long long whole_checkpoint_said(const std::string& line) {
  const std::string prefix = "bspg: checkpoint ", suffix = " is whole";
  if (line.size() <= prefix.size() + suffix.size() || line.rfind(prefix, 0) != 0 ||
      line.compare(line.size() - suffix.size(), suffix.size(), suffix) != 0)
    return 0;
  const std::string number =
      line.substr(prefix.size(), line.size() - prefix.size() - suffix.size());
  if (number.size() > 19 || number.find_first_not_of("0123456789") != std::string::npos) return 0;
  return std::strtoull(number.c_str(), nullptr, 10);
}

// PRRTE's word, once a process of a spawned job crashed, that the job's launcher is gone
// ("[host:pid] ... LAUNCHER JOB OBJECT NOT FOUND").
bool is_launcher_gone_line(const std::string& line) {
  return !line.empty() && line[0] == '[' &&
         line.find("LAUNCHER JOB OBJECT NOT FOUND") != std::string::npos;
}

// Open MPI 5's starter writes some of its lines with the C string's terminating NUL byte, so
// that the next line starts with one: NUL bytes at a line's start are never text.
std::string_view nuls_skipped(std::string_view line) {
  const std::size_t text = line.find_first_not_of('\0');
  return text == std::string_view::npos ? std::string_view() : line.substr(text);
}

int crash_line_signal(const std::string& line) {
  const std::string said = ": crashed with signal ";
  if (line.rfind("bspg: process ", 0) != 0) return 0;
  const auto at = line.find(said);
  const std::size_t pid_at = std::strlen("bspg: process ");
  if (at == std::string::npos || at == pid_at || line.find_first_not_of("0123456789", pid_at) != at)
    return 0;
  static const std::pair<const char*, int> kNames[] = {
      {"SIGSEGV", SIGSEGV}, {"SIGBUS", SIGBUS}, {"SIGFPE", SIGFPE},   {"SIGILL", SIGILL},
      {"SIGABRT", SIGABRT}, {"SIGSYS", SIGSYS}, {"SIGTRAP", SIGTRAP},
  };
  const std::string rest = line.substr(at + said.size());
  for (const auto& [name, number] : kNames) {
    const std::size_t length = std::strlen(name);
    if (rest.compare(0, length, name) == 0 && (rest.size() == length || rest[length] == ' '))
      return number;
  }
  const int number = std::atoi(rest.c_str());
  return number > 0 && number < 128 ? number : 0;
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

// Open MPI's count of notices it did not repeat ("[vm:123] 1 more process has sent help message
// help-mpi-btl-tcp.txt / peer hung up", and how to see them all).
bool is_help_count(const std::string& line) {
  return !line.empty() && line[0] == '[' &&
         (contains(line, "sent help message") || contains(line, "orte_base_help_aggregate"));
}

// A line MPICH's Hydra writes about itself: "[mpiexec@vm] ..." or "[proxy:0:1@emu2] ...".
bool is_hydra_line(const std::string& line) {
  return line.rfind("[mpiexec@", 0) == 0 || line.rfind("[proxy:", 0) == 0 ||
         // the end of a line that another proxy's line broke into
         line.rfind("execvp error on file ", 0) == 0;
}

// Whether an unfinished line may become a line of Hydra's or ssh's (it is one's start, or starts
// with one).
bool may_be_starter_report(std::string_view partial) {
  for (std::string_view start : {"[mpiexec@", "[proxy:", "execvp error on file ", "ssh",
                                 "kex_exchange_identification: ", "Connection ",
                                 "client_loop: ", "Host key verification failed."}) {
    const std::size_t n = std::min(partial.size(), start.size());
    if (partial.substr(0, n) == start.substr(0, n)) return true;
  }
  return false;
}

// Whether an unfinished line may still become PRRTE's setpgid warning (is_prrte_setpgid_race):
// its "[host:pid]" tag, then the start of the warning.
bool may_be_prrte_setpgid_race(std::string_view partial) {
  if (partial.empty() || partial[0] != '[') return false;
  const std::size_t close = partial.find(']');
  if (close == std::string_view::npos) return partial.size() < 300;
  const std::string_view rest = partial.substr(close + 1);
  const std::string_view warning = " plm:ssh: Warning: setpgid(";
  const std::size_t n = std::min(rest.size(), warning.size());
  return rest.substr(0, n) == warning.substr(0, n);
}

// bsprun's words for a host lost while the job ran ("" when the starter does not say which).
std::string lost_contact(const std::string& host) {
  return "lost contact with " + (host.empty() ? std::string("a host") : host) +
         " while the job ran (the host or its network failed); the job was stopped";
}

// Whether one of ssh's lines names address ("connect to host 10.1.2.3 port 22", "Connection to
// 10.1.2.3 closed", "root@10.1.2.3: Permission denied").
bool names_address(const std::string& line, const std::string& address) {
  return contains(line, (" " + address + " ").c_str()) ||
         contains(line, (" " + address + ":").c_str()) ||
         contains(line, ("@" + address + ":").c_str());
}

// "X (reason)", the way Hydra ends its lines: {"X", "reason"} ({"X", ""} without one).
std::pair<std::string, std::string> split_reason(const std::string& text) {
  const auto open = text.rfind(" (");
  if (open == std::string::npos) return {text, ""};
  std::string reason = text.substr(open + 2);
  if (!reason.empty() && reason.back() == ')') reason.pop_back();
  return {text.substr(0, open), reason};
}

// "emu2" of "[proxy:0:1@emu2] ...".
std::string hydra_host(const std::string& line) {
  const auto at = line.find('@');
  const auto end = at == std::string::npos ? at : line.find(']', at);
  return end == std::string::npos ? "" : line.substr(at + 1, end - at - 1);
}

}  // namespace

MpirunStderr::MpirunStderr(std::map<std::string, std::string> address_names)
    : address_names_(std::move(address_names)) {}

std::string MpirunStderr::feed(std::string_view bytes) {
  std::string out;
  partial_.append(bytes);
  std::size_t newline;
  while ((newline = partial_.find('\n')) != std::string::npos) {
    const bool had_nul = partial_[0] == '\0';
    const std::string line(nuls_skipped(std::string_view(partial_).substr(0, newline)));
    partial_.erase(0, newline + 1);
    if (had_nul && line.empty()) continue;  // NUL bytes alone on a line: nothing to say
    if (passing_partial_) {                 // the rest of a line already being passed on
      out += line + "\n";
      passing_partial_ = false;
      note_crash_line(passed_start_ + line);
      passed_start_.clear();
      continue;
    }
    out += take_line(line);
  }
  // An unfinished line that cannot start a block (e.g. a prompt or progress output) goes on now;
  // where the starter only reports in lines (Hydra), one that may be its report or ssh's waits
  // for its end (or flush) too: Hydra writes its lines in pieces. So does the start of PRRTE's
  // setpgid warning, which is dropped whole.
  if (!passing_partial_) partial_ = std::string(nuls_skipped(partial_));
  if (!partial_.empty() &&
      (passing_partial_ || (block_.empty() && partial_[0] != '-' &&
                            !(waits_on_failure_ && may_be_starter_report(partial_)) &&
                            !may_be_prrte_setpgid_race(partial_)))) {
    out += release_ssh_lines();
    out += partial_;
    // Enough of it to recognise the library's crash line once the line is whole.
    if (passed_start_.size() < kCrashLineStart)
      passed_start_ += partial_.substr(0, kCrashLineStart);
    partial_.clear();
    passing_partial_ = true;
  }
  return out;
}

// The held ssh lines, to pass on now (they are about what follows).
std::string MpirunStderr::release_ssh_lines() {
  std::string out;
  for (const auto& held : ssh_lines_) out += held + "\n";
  ssh_lines_.clear();
  return out;
}

std::string MpirunStderr::flush() {
  std::string out = release_ssh_lines();
  for (const auto& held : block_) out += held + "\n";
  out += partial_;
  block_.clear();
  partial_.clear();
  passing_partial_ = false;
  passed_start_.clear();
  return out + release_unexplained();
}

// The peers' notices held without restarts: dropped once a death explains them, else as they were.
std::string MpirunStderr::release_unexplained() {
  std::string out;
  if (!death_explained() && !stopping_) out.swap(unexplained_);
  unexplained_.clear();
  return out;
}

std::string MpirunStderr::finish() {
  std::string out = flush();
  // Hydra's proxy that ended (or did not start) without a word, when nothing placed it since.
  if (failure_pending()) {
    failure_ = proxy_ended_;
    out += say_failure_once();
  }
  proxy_ended_ = StartFailure{};
  // What followed a loss nothing explained: bsprun decides once it knows how the run ended.
  if (!stopping_ && death_.rank < 0 && !failure_.host_lost) held_consequences_ = consequences_;
  consequences_.clear();
  // A preface that nothing followed, as it was; the death it announced, in one line, unless the
  // process said itself that it crashed.
  if (!stopping_ && !quiet_losses_ && crash_signal_ == 0) out += preface_ + death_line_;
  preface_.clear();
  death_line_.clear();
  return out;
}

std::string MpirunStderr::take_line(const std::string& line) {
  if (!block_.empty()) {
    // A rule right after a rule: the first closed a block whose opening rule never came here
    // (Open MPI 5 was seen to lose it when a peer's hang-up notice and a death's block follow
    // each other), and the second opens the next block. No block of Open MPI's is empty.
    if (block_.size() == 1 && is_rule(line)) {
      block_.front() = line;
      return "";
    }
    block_.push_back(line);
    if (is_rule(line)) return end_block();
    if (block_.size() > kMaxBlockLines) return flush();
    return "";
  }
  if (is_rule(line)) {
    block_.push_back(line);
    return "";
  }
  if (is_prrte_setpgid_race(line)) return "";
  if (is_ssh_error(line)) {
    ssh_lines_.push_back(trim(line));
    return waits_on_failure_ ? take_ssh_line_alone() : "";
  }
  // After a process said it crashed, Hydra's words on the connections that ended with it
  // (MPICH 4.2: mpiexec's and the proxies' "assert (!closed) failed" and what follows).
  if (crash_signal_ != 0 && is_hydra_line(line) &&
      (is_hydra_proxy_cut_off(line) || is_hydra_wait_failure(line))) {
    dropping_error_handler_ = false;
    return "";
  }
  // With restarts, what a lost connection makes the starter and Slurm say, held.
  if (quiet_losses_ && is_echo_of_a_loss(line)) {
    consequences_ += line + "\n";
    return "";
  }
  if (is_hydra_line(line)) return take_hydra_line(line);
  // Open MPI's count of notices it did not repeat: about the held notices.
  if (quiet_losses_ && is_help_count(line)) {
    consequences_ += line + "\n";
    return "";
  }
  if (!quiet_losses_ && is_help_count(line) && (death_explained() || !unexplained_.empty())) {
    unexplained_ += line + "\n";
    return "";
  }
  // After a process said it crashed, the others' MPI error handler blocks ("[vm:00000] *** An
  // error occurred in Socket closed ..."; Open MPI 5 in master mode) are its consequences.
  if (crash_signal_ != 0 && is_launcher_gone_line(line)) return "";
  // With restarts, the others' error handler blocks are the consequences of a loss, held.
  if (quiet_losses_ && crash_signal_ == 0 && is_error_handler_line(line)) {
    consequences_ += line + "\n";
    dropping_error_handler_ = true;
    return "";
  }
  if (crash_signal_ != 0 && is_error_handler_line(line)) {
    dropping_error_handler_ = true;
    return "";
  }
  if (dropping_error_handler_ && trim(line).empty()) return "";
  dropping_error_handler_ = false;
  // The library's word that a checkpoint is whole, for bsprun alone.
  if (const unsigned long long whole = whole_checkpoint_said(line); whole > 0) {
    whole_checkpoint_ = std::max(whole_checkpoint_, whole);
    return "";
  }
  note_crash_line(line);
  // The library's word that the job stops after a checkpoint because of a stop file.
  if (line.rfind("bspg: stopping after checkpoint ", 0) == 0)
    stopped_after_checkpoint_ = std::strtoull(line.c_str() + 32, nullptr, 10);
  // ... or that one of its hosts could not write a checkpoint.
  if (const char* prefix = "bspg: checkpoint "; line.rfind(prefix, 0) == 0) {
    char* end = nullptr;
    const unsigned long long n = std::strtoull(line.c_str() + std::strlen(prefix), &end, 10);
    const std::string rest = end ? end : "";
    const std::string said = " could not be written on ";
    if (n > 0 && rest.rfind(said, 0) == 0) {
      const std::string host = rest.substr(said.size(), rest.find(':') - said.size());
      if (!host.empty() && host.size() <= 255 && host.find(' ') == std::string::npos) {
        checkpoint_not_written_ = n;
        checkpoint_not_written_on_ = host;
      }
    }
  }
  // mpirun's answer to a second stop signal, which bsprun itself never sends, and its note on
  // passing on the SIGCONT that woke it up.
  const auto forwarding = line.find(": Forwarding signal ");
  if (stopping_ && (line.rfind("Abort is in progress...", 0) == 0 ||
                    (forwarding != std::string::npos && starter_word_before(line, forwarding))))
    return "";
  return release_ssh_lines() + line + "\n";
}

std::string MpirunStderr::end_block() {
  std::vector<std::string> lines;
  lines.swap(block_);
  const std::string text = joined(lines);
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

// The library's line for a process that crashed: it says what mpirun's blocks would.
void MpirunStderr::note_crash_line(const std::string& line) {
  if (const int signal = crash_line_signal(line); signal != 0 && crash_signal_ == 0)
    crash_signal_ = signal;
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

// ssh could not start the starter's daemon on a host (the held ssh lines say which, by its
// address or name): a start failure, 125, and that host's.
void MpirunStderr::not_started_over_ssh(const std::string& no_reason) {
  std::string host, reason = ssh_lines_.empty() ? "" : ssh_lines_.front();
  for (const auto& [address, name] : address_names_) {
    for (const auto& line : ssh_lines_) {
      if (host.empty() && names_address(line, address)) {
        host = name;
        reason = line;
      }
    }
  }
  ssh_lines_.clear();
  if (reason.empty()) reason = no_reason;
  if (failure_.exit_status == 0)
    failure_ = StartFailure{125, host,
                            (host.empty() ? "could not start the job on every host: "
                                          : host + ": could not start the job there: ") +
                                reason,
                            false, ""};
  // A daemon that did not start is a host's failure (unreachable, or cut off as it started),
  // whether or not ssh said which.
  failure_.host_lost = failure_.host == host;
  if (failure_.host_lost) failure_.cause = reason;
  if (quiet_losses_ && failure_.host_lost) reported_ = true;  // bsprun says it when it restarts
}

// A starter that waits for ever after ssh failed (Hydra) says nothing more: ssh's line alone is
// the failure. A connection that was cut is a host lost while the job ran; any other complaint
// (refused, no route, a host key, a login) kept the job from starting there.
std::string MpirunStderr::take_ssh_line_alone() {
  const std::string line = ssh_lines_.back();
  const bool cut = is_cut_connection(line);
  if (failure_.exit_status != 0 || stopping_) {
    ssh_lines_.clear();
    return "";
  }
  if (!cut) {
    not_started_over_ssh("ssh failed");
  } else {
    std::string host;
    for (const auto& [address, name] : address_names_)
      if (host.empty() && names_address(line, address)) host = name;
    ssh_lines_.clear();
    failure_ = StartFailure{125, host, lost_contact(host), !host.empty(), line};
  }
  if (quiet_losses_ && failure_.host_lost) return "";  // bsprun says it when it restarts
  return say_failure_once();
}

std::string MpirunStderr::hosts_gone(const std::vector<std::string>& unreachable) {
  if (unreachable.empty() || !failure_pending()) return "";
  // "emu2 (ssh: connect to host ...: Connection refused)", as RemoteStop gives it.
  const std::string& first = unreachable.front();
  const auto open = first.find(" (");
  const std::string host = first.substr(0, open);
  std::string why = open == std::string::npos ? "" : first.substr(open + 2);
  if (!why.empty() && why.back() == ')') why.pop_back();
  if (proxy_not_launched_)
    failure_ = StartFailure{125, host, host + ": could not start the job there: " + why, true, why};
  else
    failure_ = StartFailure{125, host, lost_contact(host), true, "MPICH's proxy there ended"};
  proxy_ended_ = StartFailure{};
  if (quiet_losses_) return "";  // bsprun says it when it restarts
  return say_failure_once();
}

// MPICH's Hydra speaks in single lines, and waits for ever after some of them: a program that a
// proxy could not execute, or (after ssh's own complaint) a proxy that never started. Those
// become the start failure; Hydra's account of its own state, then and while the job is being
// stopped, is dropped.
std::string MpirunStderr::take_hydra_line(const std::string& line) {
  const std::string execvp = "execvp error on file ", wdir = "unable to change wdir to ";
  if (const auto at = line.find(wdir); at != std::string::npos && line.rfind("[proxy:", 0) == 0) {
    const std::string directory = split_reason(trim(line.substr(at + wdir.size()))).first;
    const std::string host = hydra_host(line);
    if (failure_.exit_status == 0)
      failure_ = StartFailure{125, host,
                              host + ": cannot change to the working directory " + directory +
                                  " (it does not exist there, or cannot be entered)",
                              false, ""};
    ssh_lines_.clear();
    return say_failure_once();
  }
  if (const auto at = line.find(execvp); at != std::string::npos && line.rfind("[proxy:", 0) == 0) {
    const auto [file, reason] = split_reason(trim(line.substr(at + execvp.size())));
    const std::string host = hydra_host(line);
    if (failure_.exit_status == 0) {
      // Hydra says "Permission denied" of a path that does not exist as well.
      if (reason == "No such file or directory")
        failure_ =
            StartFailure{127, host, host + ": program " + file + " not found there", false, ""};
      else if (reason == "Permission denied")
        failure_ = StartFailure{127, host,
                                host + ": program " + file + " not found there, or not executable",
                                false, ""};
      else
        failure_ =
            StartFailure{126, host, host + ": cannot execute " + file + ": " + reason, false, ""};
    }
  } else if (line.rfind("[proxy:", 0) == 0 && failure_.exit_status == 0 &&
             (contains(line, "unable to connect to server ") ||
              contains(line, "unable to connect from ") ||
              contains(line, "unable to get host address for "))) {
    // A proxy that cannot reach mpiexec back (at the name or address mpiexec gave it: a name the
    // host cannot resolve, or one it resolves to itself): Hydra then waits for ever.
    const std::string host = hydra_host(line);
    const auto said = line.find("): ");
    std::string detail = said == std::string::npos ? line : trim(line.substr(said + 3));
    detail = detail.substr(0, detail.find(" (check for firewalls!)"));
    failure_ =
        StartFailure{125, host,
                     host + ": MPICH's proxy there could not connect back to mpiexec (" + detail +
                         "); where this machine has several networks, name the one the "
                         "hosts reach in HYDRA_IFACE",
                     false, ""};
    ssh_lines_.clear();
    return say_failure_once();
  } else if (!ssh_lines_.empty() && failure_.exit_status == 0) {
    not_started_over_ssh("MPICH's proxy did not start (mpiexec gives no reason)");
  } else if (failure_.exit_status == 0 && !stopping_ && contains(line, "[mpiexec@") &&
             contains(line, " control_cb (") && contains(line, "assert (!closed) failed") &&
             !death_explained()) {
    // A proxy hung up before anything else was said: its own line (a working directory it could
    // not enter, above) is often lost as it ends, or cut short by mpiexec's ("[proxy:0:0@emu1]
    // [mpiexec@vm] control_cb ...", whose start names the proxy's host).
    // Held for a second (flush): ssh's word that the host's connection was cut may follow it.
    const std::string host = line.rfind("[proxy:", 0) == 0 ? hydra_host(line) : "";
    proxy_ended_ =
        StartFailure{125, host,
                     "could not start the job" +
                         (host.empty() ? std::string(": MPICH's proxy on one of the hosts")
                                       : " on " + host + ": MPICH's proxy there") +
                         " ended before its processes started (mpiexec gives no reason; a "
                         "working directory missing there ends it so)",
                     false, ""};
    return "";
  } else if (failure_.exit_status == 0 && !stopping_ && contains(line, "[mpiexec@") &&
             contains(line, "Launch proxy failed")) {
    // MPICH 4.2: ssh failed to start a proxy, and ssh's own line may be lost; which host is
    // learnt when bsprun cannot reach it either (hosts_gone), else said after a second.
    proxy_not_launched_ = true;
    proxy_ended_ = StartFailure{125, "",
                                "could not start the job on every host: MPICH's mpiexec could "
                                "not start its proxy on one of them (it does not say which)",
                                true, ""};
    return "";
  } else if (failure_.exit_status == 0 && !stopping_ && proxy_ended_.exit_status == 0) {
    return release_ssh_lines() + line + "\n";
  }
  ssh_lines_.clear();
  return say_failure_once();
}

// The failure's line, the first time it is asked for ("" after that, or without a failure).
std::string MpirunStderr::say_failure_once() {
  if (reported_ || failure_.message.empty()) return "";
  reported_ = true;
  return "bsprun: " + untrusted::printable(failure_.message) + "\n";
}

}  // namespace bspg::launcher

namespace bspg::launcher {
namespace {

// Hydra's account of a process that ended badly (MPICH's mpiexec, on its stdout), line by line.
constexpr std::string_view kBadTermination =
    "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES";
constexpr std::string_view kHydraBlockLine = "=   ";
constexpr std::string_view kExitString = "YOUR APPLICATION TERMINATED WITH THE EXIT STRING: ";
constexpr std::string_view kTypically = "This typically refers to a problem with your application.";
constexpr std::string_view kFaq = "Please see the FAQ page for debugging suggestions";

// The first lines of Open MPI's blocks that its starter may put on stdout: a spawned process's
// notice that a peer hung up.
constexpr std::string_view kOpenMpiFirstLines[] = {
    "An MPI communication peer process has unexpectedly disconnected.  This",
};

bool starts_with(std::string_view text, std::string_view start) {
  return text.substr(0, start.size()) == start;
}

// Whether the unfinished text may still become a line that starts with `start`.
bool may_start_with(std::string_view partial, std::string_view start) {
  const std::size_t n = std::min(partial.size(), start.size());
  return partial.substr(0, n) == start.substr(0, n);
}

// Whether an unfinished line may still become one that begins a block (Hydra's too or not).
bool may_become_beginning(std::string_view partial, bool hydra) {
  return partial.find_first_not_of('-') == std::string_view::npos ||
         (hydra && (partial.find_first_not_of('=') == std::string_view::npos ||
                    may_start_with(partial, kExitString)));
}

// A quick look at a line's first byte: most of a program's lines cannot begin a block (a rule,
// Hydra's blank line or exit string; NUL bytes before it).
bool may_begin_block_at_all(std::string_view line, bool hydra) {
  return (!line.empty() && (line[0] == '-' || line[0] == '\0')) ||
         (hydra && (line.empty() || line[0] == '=' || line[0] == 'Y'));
}

}  // namespace

std::string MpirunStdout::feed(std::string_view bytes) {
  std::string out;
  std::string joined;
  if (!partial_.empty()) {
    joined.swap(partial_);
    joined.append(bytes);
    bytes = joined;
  }
  out.reserve(bytes.size());
  std::size_t pos = 0;
  // The rest of a line already being passed on.
  if (passing_partial_) {
    const std::size_t newline = bytes.find('\n');
    pos = newline == std::string_view::npos ? bytes.size() : newline + 1;
    out.append(bytes.substr(0, pos));
    passing_partial_ = newline == std::string_view::npos;
  }
  // Lines that pass as they are go out in one piece from `run` on.
  std::size_t run = pos;
  while (pos < bytes.size()) {
    const void* found = std::memchr(bytes.data() + pos, '\n', bytes.size() - pos);
    if (!found) break;
    const std::size_t end =
        static_cast<std::size_t>(static_cast<const char*>(found) - bytes.data());
    const std::string_view line = bytes.substr(pos, end - pos);
    if (state_ != State::kNone || may_begin_block_at_all(line, starter_alone_)) {
      out.append(bytes.substr(run, pos - run));
      take_line(line, out);
      run = end + 1;
    }
    pos = end + 1;
  }
  out.append(bytes.substr(run, pos - run));
  const std::string_view rest = bytes.substr(pos);
  if (!rest.empty()) {
    if (may_become_line(rest)) {
      partial_.assign(rest);
    } else {
      release(out);
      out.append(rest);
      passing_partial_ = true;
    }
  }
  return out;
}

void MpirunStdout::take_line(std::string_view line, std::string& out) {
  const std::string_view text = nuls_skipped(line);
  const auto hold = [&](State next) {
    tentative_.append(line).push_back('\n');
    state_ = next;
  };
  // A line of a block recognised: from what was held before it on, the block is the starter's.
  const auto keep = [&](State next) {
    held_.append(tentative_).append(line).push_back('\n');
    tentative_.clear();
    ++block_lines_;
    state_ = next;
  };
  switch (state_) {
    case State::kBlank:
      if (is_rule(text, '=')) return hold(State::kEqualsRule);
      break;
    case State::kEqualsRule:
      if (text == kBadTermination) return keep(State::kHydraBlock);
      break;
    case State::kHydraBlock:
      if (block_lines_ < kMaxBlockLines && starts_with(text, kHydraBlockLine))
        return keep(State::kHydraBlock);
      if (is_rule(text, '=')) return keep(State::kHydraEnd);
      break;
    case State::kHydraEnd:
      if (starts_with(text, kExitString)) return keep(State::kExitString);
      break;
    case State::kExitString:
      if (text == kTypically) return keep(State::kTypically);
      break;
    case State::kTypically:
      if (text == kFaq) return keep(State::kNone);
      break;
    case State::kDashRule:
      for (std::string_view first : kOpenMpiFirstLines)
        if (text == first) return keep(State::kOpenMpiBlock);
      break;
    case State::kOpenMpiBlock:
      if (block_lines_ < kMaxBlockLines) return keep(is_rule(text, '-') ? State::kNone : state_);
      break;
    case State::kNone:
      break;
  }
  // Not what a block would have next: what was held as its possible beginning goes out, and the
  // line is looked at afresh.
  release(out);
  if (is_rule(text, '-')) return hold(State::kDashRule);
  if (starter_alone_) {
    if (text.empty()) return hold(State::kBlank);
    if (is_rule(text, '=')) return hold(State::kEqualsRule);
    if (starts_with(text, kExitString)) return keep(State::kExitString);
  }
  out.append(line).push_back('\n');
}

// What was held as a block's possible beginning, to pass on now.
void MpirunStdout::release(std::string& out) {
  out += tentative_;
  tentative_.clear();
  state_ = State::kNone;
  block_lines_ = 0;
}

// Whether an unfinished line may still become one that begins a block or goes on the one held.
bool MpirunStdout::may_become_line(std::string_view partial) const {
  if (state_ == State::kOpenMpiBlock) return true;
  // None of the starters' lines is this long: memory stays bounded.
  if (partial.size() > kLongestStarterLine) return false;
  const std::string_view text = nuls_skipped(partial);
  if (may_become_beginning(text, starter_alone_)) return true;
  switch (state_) {
    case State::kEqualsRule:
      return may_start_with(text, kBadTermination);
    case State::kHydraBlock:
      return may_start_with(text, kHydraBlockLine);
    case State::kExitString:
      return may_start_with(text, kTypically);
    case State::kTypically:
      return may_start_with(text, kFaq);
    case State::kDashRule:
      for (std::string_view first : kOpenMpiFirstLines)
        if (may_start_with(text, first)) return true;
      return false;
    default:
      return false;
  }
}

std::string MpirunStdout::flush() {
  std::string out;
  release(out);
  if (!partial_.empty()) {
    out += partial_;
    partial_.clear();
    passing_partial_ = true;
  }
  return out;
}

}  // namespace bspg::launcher
