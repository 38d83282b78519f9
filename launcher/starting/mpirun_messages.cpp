// mpirun_messages.cpp - MpirunStderr's reader (see mpirun_messages.h): mpirun's stderr in lines,
// each taken by its kind (a block, ssh's, Hydra's, the library's), held or passed on.
#include "mpirun_messages.h"

#include <algorithm>
#include <cctype>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "daemon_relay.h"
#include "message_lines.h"
#include "untrusted.h"

namespace bspg::launcher {
namespace messages_internal {

// A rule: at least 20 of `c` and nothing else. Open MPI frames its messages with a line of 74
// dashes, Hydra its block with 83 '='.
bool is_rule(std::string_view line, char c) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line.size() >= 20 && line.find_first_not_of(c) == std::string_view::npos;
}

std::string trim(const std::string& text) {
  const auto begin = text.find_first_not_of(" \t\r");
  if (begin == std::string::npos) return "";
  return text.substr(begin, text.find_last_not_of(" \t\r") - begin + 1);
}

bool contains(const std::string& text, const char* part) {
  return text.find(part) != std::string::npos;
}

// Open MPI 5's starter writes some of its lines with the C string's terminating NUL byte, so
// that the next line starts with one: NUL bytes at a line's start are never text.
std::string_view nuls_skipped(std::string_view line) {
  const std::size_t text = line.find_first_not_of('\0');
  return text == std::string_view::npos ? std::string_view() : line.substr(text);
}

// The lines' words, one space apart, without the rules that frame them (Open MPI's of '-',
// Hydra's of '=').
std::string joined(const std::vector<std::string>& lines) {
  std::string text;
  for (const auto& line : lines) {
    if (is_rule(line) || is_rule(line, '=')) continue;
    std::istringstream words(line);
    std::string word;
    while (words >> word) text += (text.empty() ? "" : " ") + word;
  }
  return text;
}

}  // namespace messages_internal

using namespace messages_internal;
namespace {

// The library's crash line is shorter than this.
constexpr std::size_t kCrashLineStart = 256;

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

// The starter's own crash report ("[host:pid] Signal: Segmentation fault (11)", its backtrace
// "[host:pid] [ 3] /lib/...", "*** End of error message ***"), and its "abort is already in
// progress...hit ctrl-c again" note: Open MPI 4.1's mpirun has crashed in PMIx_Finalize while
// it ended a job whose process had crashed.
bool is_starter_crash_report(const std::string& line) {
  if (line.find(": abort is already in progress...hit ctrl-c again") != std::string::npos)
    return true;
  if (line.empty() || line[0] != '[') return false;
  const auto close = line.find("] ");
  if (close == std::string::npos || line.find(':') > close) return false;
  const std::string rest = line.substr(close + 2);
  for (const char* said : {"Signal: ", "Signal code: ", "Failing at address: ", "*** "})
    if (rest.rfind(said, 0) == 0) return true;
  return rest.size() > 3 && rest[0] == '[' && rest.find("] ") != std::string::npos &&
         rest.find_first_not_of(" 0123456789", 1) == rest.find(']');
}

// PRRTE's word, once a process of a spawned job crashed, that the job's launcher is gone
// ("[host:pid] ... LAUNCHER JOB OBJECT NOT FOUND").
bool is_launcher_gone_line(const std::string& line) {
  return !line.empty() && line[0] == '[' &&
         line.find("LAUNCHER JOB OBJECT NOT FOUND") != std::string::npos;
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

// PRRTE's account of an aborted job whose launcher job is gone, in place of its "calling abort"
// banner (dropped too, openmpi_blocks.cpp): it comes alone, without a line end, when processes a
// master spawned stop after the master's own abort (a program that ends with a non-zero status
// between sections, section.cpp).
constexpr std::string_view kLauncherGone = "LAUNCHER JOB OBJECT NOT FOUND";

bool shows_abort_banners() { return std::getenv("BSPG_MPI_ABORT_BANNER") != nullptr; }

// That account, whole, where it is left out (not under BSPG_MPI_ABORT_BANNER).
bool is_launcher_gone_account(std::string_view text) {
  return text == kLauncherGone && !shows_abort_banners();
}

// Whether an unfinished line may still become that account: it waits for its end, or the flush.
bool may_be_launcher_gone(std::string_view partial) {
  return partial.size() <= kLauncherGone.size() &&
         kLauncherGone.substr(0, partial.size()) == partial && !shows_abort_banners();
}

// The library's word that a process started, taken out of the output (processes_started).
constexpr std::string_view kStartedLine = "bspg: process started";

// Whether an unfinished line may still become that word: it waits for its end. So does one that
// may become a line on a recovery in place (recovery_lines.h), read whole.
bool may_be_started_line(std::string_view partial) {
  const auto begins = [&](std::string_view line) {
    const std::size_t n = std::min(partial.size(), line.size());
    return partial.substr(0, n) == line.substr(0, n);
  };
  return (partial.size() <= kStartedLine.size() && begins(kStartedLine)) ||
         begins("bspg: recovered in place") || begins("bspg: process ");
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
    if (!passing_partial_ && line == kStartedLine) {
      ++processes_started_;
      continue;
    }
    if (passing_partial_) {                 // the rest of a line already being passed on
      out += line + "\n";
      passing_partial_ = false;
      note_crash_line(passed_start_ + line);
      passed_start_.clear();
      continue;
    }
    out += take_line(line);
  }
  // An unfinished line that cannot start a block (e.g. a prompt or progress output) goes on now,
  // unless a process said it crashed (the starter's own crash report may follow, dropped whole);
  // where the starter only reports in lines (Hydra), one that may be its report or ssh's waits
  // for its end (or flush) too: Hydra writes its lines in pieces. So does the start of PRRTE's
  // setpgid warning, which is dropped whole.
  if (!passing_partial_) partial_ = std::string(nuls_skipped(partial_));
  if (!partial_.empty() &&
      (passing_partial_ || (block_.empty() && partial_[0] != '-' && crash_signal_ == 0 &&
                            !(waits_on_failure_ && may_be_starter_report(partial_)) &&
                            !may_be_prrte_setpgid_race(partial_) &&
                            !may_be_started_line(partial_) && !may_be_launcher_gone(partial_)))) {
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
  if (!is_launcher_gone_account(partial_)) out += partial_;
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

// Open MPI 5's words under its fault tolerance (bsprun --spares) on the others' side of a loss
// that bspg recovers from: its non-blocking collectives' "NBC_Progress: an error 75 was found
// during schedule ..." and its count of the repeated post-failure warning.
namespace {
bool is_fault_tolerance_noise(const std::string& line) {
  return line.rfind("NBC_Progress: an error ", 0) == 0 ||
         (contains(line, "sent help message help-mpi-ft.txt") && !line.empty() &&
          std::isdigit(static_cast<unsigned char>(line[0])));
}
}  // namespace

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
  if (is_fault_tolerance_noise(line)) return "";
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
  if (is_launcher_gone_account(line)) return "";
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
  if (crash_signal_ != 0 && is_starter_crash_report(line)) return "";
  if (dropping_error_handler_ && trim(line).empty()) return "";
  dropping_error_handler_ = false;
  // The library's word that a checkpoint is whole, for bsprun alone.
  if (const unsigned long long whole = whole_checkpoint_said(line); whole > 0) {
    whole_checkpoint_ = std::max(whole_checkpoint_, whole);
    return "";
  }
  note_crash_line(line);
  // The library's words on a recovery in place (shown as they are: they are for the user too).
  if (auto recovery = recovered_in_place(line))
    recoveries_.push_back(std::move(*recovery));
  else if (auto none = no_recovery_in_place(line); none && !no_recovery_)
    no_recovery_ = std::move(none);
  // The library's word that every living process ended, while the MPI's run-time still waits for
  // processes lost on a host that does not answer (in_place.hpp, before_finalize).
  if (line.rfind(kEndedWithoutFinalizing, 0) == 0) ended_without_finalizing_ = true;
  // bsprun's own relay (daemon_relay.h): a daemon's host is gone, and mpirun was not told.
  if (std::string host = daemon_gone_host(line); !host.empty()) daemons_gone_.push_back(host);
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

// The library's line for a process that crashed: it says what mpirun's blocks would.
void MpirunStderr::note_crash_line(const std::string& line) {
  if (const int signal = crash_line_signal(line); signal != 0 && crash_signal_ == 0) {
    crash_signal_ = signal;
    crash_pid_ = std::atoi(line.c_str() + std::strlen("bspg: process "));
  }
}

// The failure's line, the first time it is asked for ("" after that, or without a failure).
std::string MpirunStderr::say_failure_once() {
  if (reported_ || failure_.message.empty()) return "";
  reported_ = true;
  return "bsprun: " + untrusted::printable(failure_.message) + "\n";
}

}  // namespace bspg::launcher
