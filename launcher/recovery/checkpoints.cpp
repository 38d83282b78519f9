// checkpoints.cpp - job ids, checkpoint directories, the scripts that look at them on a host, and
// the choice of the checkpoint to restart from (see checkpoints.h).
#include "checkpoints.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>
#include <sstream>

#include "hosts.h"
#include "shard.hpp"
#include "untrusted.h"

namespace bspg::launcher {
namespace {

const char* const kSurveyBegin = "bspg-survey-v1";
const char* const kSurveyEnd = "bspg-survey-end";

// sh: d = the directory, with a leading ~/ made $HOME/ (the host's own home).
std::string set_directory(const std::string& dir) {
  return hosts::shell_assignment("d", dir) + "case $d in \"~/\"*) d=$HOME/${d#??};; esac; ";
}

bool all_digits(const std::string& text) {
  return !text.empty() && text.size() <= 18 &&
         text.find_first_not_of("0123456789") == std::string::npos;
}

}  // namespace

std::string new_job_id() {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &local);
  std::random_device random;
  char id[64];
  std::snprintf(id, sizeof id, "%s-%06x", stamp, random() & 0xffffffu);
  return id;
}

std::string new_run_id() {
  std::random_device random;
  char id[32];
  std::snprintf(id, sizeof id, "%08llx%08x",
                static_cast<unsigned long long>(std::time(nullptr)) & 0xffffffffull,
                static_cast<unsigned>(random()));
  return id;
}

std::string run_id_problem(const std::string& run) {
  if (!bspg::is_hex_id(run)) return "a run id is 16 lowercase hexadecimal digits";
  return "";
}

std::string text_id(const std::string& text) {
  std::uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char c : text) hash = (hash ^ c) * 0x100000001b3ull;
  char id[32];
  std::snprintf(id, sizeof id, "%016llx", static_cast<unsigned long long>(hash));
  return id;
}

std::string program_id(const std::string& program, const std::vector<std::string>& args) {
  // The program's file name and each argument, each ended by a 0 byte (not a secret: it tells a
  // resume with other arguments from one with the same).
  std::string text = program.substr(program.rfind('/') + 1) + '\0';
  for (const auto& a : args) text += a + '\0';
  return text_id(text);
}

std::string default_checkpoint_dir(const std::string& job_id) {
  return "~/.cache/bspg/checkpoints/" + job_id;
}

std::string sftp_path(const std::string& dir) {
  return dir.rfind("~/", 0) == 0 ? dir.substr(2) : dir;
}

std::string local_path(const std::string& dir) {
  if (dir.rfind("~/", 0) != 0) return dir;
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : "/") + dir.substr(1);
}

std::string survey_script(const std::string& dir, const std::string& hostinfo, bool remove_stop) {
  // Only names of the contract's form are reported (c<digits>/kind-<digits>), so a file name on
  // the host cannot add lines; marker text is cut to its letters, digits and spaces.
  const std::string begin = std::string("echo ") + kSurveyBegin + "; ";
  const std::string end = std::string("echo ") + kSurveyEnd;
  return set_directory(dir) + hosts::shell_assignment("h", hostinfo) +
         "if [ ! -x \"$h\" ]; then h=$(command -v bspg-hostinfo 2>/dev/null); fi; " + begin +
         (remove_stop ? "rm -f \"$d/stop\"; " : "") +
         // Each checkpoint directory c<N>...
         // (symlinks are never followed: not the directory, not a c<N>, not a file)
         "if [ ! -L \"$d\" ] && cd \"$d\" 2>/dev/null; then for c in c[0-9]*; do n=${c#c}; "
         "case $n in *[!0-9]*) continue;; esac; [ -d \"$c\" ] && [ ! -L \"$c\" ] || continue; "
         // ... its complete markers ...
         "for f in \"$c\"/complete-*; do p=${f##*/complete-}; "
         "case $p in \"\"|*[!0-9]*) continue;; esac; "
         "[ -f \"$f\" ] && [ ! -L \"$f\" ] && "
         "echo \"complete $n $p $(head -c 200 \"$f\" | head -n 1 | tr -cd \"a-z0-9 \")\"; "
         "done; "
         // ... and its shards and copies, each checked where it lies.
         "for f in \"$c\"/shard-* \"$c\"/copy-*; do b=${f##*/}; k=${b%%-*}; p=${b#*-}; "
         "case $p in \"\"|*[!0-9]*) continue;; esac; [ -f \"$f\" ] && [ ! -L \"$f\" ] || continue; "
         "if [ -n \"$h\" ]; then v=$(\"$h\" --check-shard \"$f\" 2>/dev/null); s=$?; "
         "else v=; s=-; fi; "
         "echo \"file $n $k $p $s $v\"; done; done; fi; " +
         end;
}

std::string stop_file_script(const std::string& dir, const std::string& run) {
  // rm, then noclobber (O_EXCL): a symlink planted as "stop" is removed, never written through.
  return set_directory(dir) + hosts::shell_assignment("r", run) +
         "[ ! -L \"$d\" ] && mkdir -p \"$d\" && rm -f \"$d/stop\" && "
         "(set -C; echo \"$r\" >\"$d/stop\") && echo stop file written";
}

std::string remove_script(const std::string& dir, bool whole_directory) {
  return set_directory(dir) + (whole_directory ? "rm -rf \"$d\"" : "rm -f \"$d/stop\"") +
         "; echo removed";
}

std::string HeldFile::name() const {
  return "c" + std::to_string(checkpoint) + (copy ? "/copy-" : "/shard-") + std::to_string(pid);
}

std::string read_survey(const std::string& output, Holdings& holdings) {
  std::vector<std::string> lines;
  const hosts::Listing got = hosts::lines_between(output, kSurveyBegin, kSurveyEnd, lines);
  for (const std::string& line : lines) {
    std::istringstream words(line);
    std::string key, n, a;
    words >> key >> n >> a;
    // One line that is not understood (an empty marker of a full disk, a file of another bspg)
    // is named and skipped: the host's other files still count.
    const auto skip = [&](const std::string& why) {
      if (holdings.skipped.size() < 20)
        holdings.skipped.push_back("'" + untrusted::excerpt(line) + "' (" + why + ")");
    };
    if (!all_digits(n) || std::stoull(n) == 0) {
      skip("not a checkpoint number");
      continue;
    }
    const std::uint64_t checkpoint = std::stoull(n);
    if (key == "complete") {
      // "complete N PID " and the marker's line, read as the library writes it (shard.hpp).
      std::string marker;
      std::getline(words, marker);
      marker.erase(0, marker.find_first_not_of(' '));
      std::uint64_t number = 0;
      int count = 0;
      std::string run, program;
      if (!all_digits(a) ||
          !bspg::parse_complete_marker(marker + "\n", number, count, run, program) ||
          number != checkpoint || count <= 0 || count > 1000000) {
        const bool older =
            marker.rfind("bspg checkpoint ", 0) == 0 && marker.find(" run ") == std::string::npos;
        skip(older ? "a complete marker that names no run: of an older bspg, or damaged"
                   : "an empty or damaged complete marker");
        continue;
      }
      holdings.complete[{run, checkpoint}] = {count, program};
    } else if (key == "file") {
      // "file N shard|copy PID STATUS VERDICT..."
      std::string b, status, verdict;
      words >> b >> status;
      std::getline(words, verdict);
      verdict.erase(0, verdict.find_first_not_of(' '));
      if ((a != "shard" && a != "copy") || !all_digits(b) || std::stoull(b) >= 1000000 ||
          status.empty()) {
        skip("not a shard or copy");
        continue;
      }
      HeldFile file;
      file.checkpoint = checkpoint;
      file.pid = static_cast<int>(std::stoull(b));
      file.copy = a == "copy";
      file.checked = status == "0" || status == "1";
      if (!file.checked) {
        file.whole = true;  // no bspg-hostinfo there: the library checks it when it reads it
      } else if (status == "0") {
        // "ok PID N RUN"
        const std::string ok = "ok " + b + " " + n + " ";
        file.whole = verdict.rfind(ok, 0) == 0 && run_id_problem(verdict.substr(ok.size())).empty();
        if (file.whole) file.run = verdict.substr(ok.size());
        if (!file.whole)
          file.problem = "another process's or checkpoint's shard (" +
                         untrusted::excerpt(verdict) + ")";
      } else {
        file.problem = verdict.empty() ? "unusable" : untrusted::excerpt(verdict);
      }
      holdings.files.push_back(file);
    } else {
      skip("not a marker, shard or copy");
    }
  }
  if (got == hosts::Listing::kComplete) return "";
  return got == hosts::Listing::kCutShort ? "the listing of the checkpoint directory was cut short"
                                          : "no listing of the checkpoint directory";
}

CheckpointChoice choose_checkpoint(const std::vector<Holdings>& hosts, int nprocs,
                                   const std::string& run) {
  CheckpointChoice choice;
  std::map<RunCheckpoint, Marker> marked;
  for (const Holdings& h : hosts)
    for (const auto& [key, marker] : h.complete) {
      if (!run.empty() && key.first != run) continue;  // another run's: never restarted from
      marked[key] = marker;
      choice.any_marked = choice.any_marked || marker.nprocs == nprocs;
    }
  // Newest run first, and within a run its newest checkpoint first.
  for (auto it = marked.rbegin(); it != marked.rend(); ++it) {
    const auto& [key, marker] = *it;
    const auto& [n_run, n] = key;
    const int p = marker.nprocs;
    if (p != nprocs) {
      if (choice.other_nprocs.empty())
        choice.other_nprocs =
            "checkpoint " + std::to_string(n) + " of " + std::to_string(p) + " processes";
      continue;
    }
    // A file counts for the run its header names (unchecked files, whose run is not known, for
    // any: the library checks them when it reads them).
    const auto of_this = [&, &n = n, &n_run = n_run](const HeldFile& f) {
      return f.checkpoint == n && (f.run.empty() || f.run == n_run);
    };
    std::vector<std::vector<Source>> sources(static_cast<std::size_t>(nprocs));
    for (const Holdings& h : hosts)
      for (const HeldFile& f : h.files)
        if (of_this(f) && f.whole && f.pid < nprocs)
          sources[static_cast<std::size_t>(f.pid)].push_back({h.host, f});
    std::string missing;
    int lacking = 0;
    for (int pid = 0; pid < nprocs; ++pid) {
      auto& list = sources[static_cast<std::size_t>(pid)];
      std::stable_sort(list.begin(), list.end(), [](const Source& x, const Source& y) {
        return x.file.checked > y.file.checked;
      });
      if (list.empty() && lacking++ < 8)
        missing += (missing.empty() ? "" : ", ") + std::to_string(pid);
    }
    if (lacking == 0) {
      choice.checkpoint = n;
      choice.run = n_run;
      choice.program = marker.program;
      choice.nprocs = p;
      choice.sources = std::move(sources);
      return choice;
    }
    if (choice.why_none.empty()) {
      // Say what the newest one lacks, with the problems of the files that are there.
      std::string problems;
      for (const Holdings& h : hosts)
        for (const HeldFile& f : h.files) {
          if (f.checkpoint != n || problems.size() >= 300) continue;
          if (!f.whole)
            problems += "; " + h.host + ":" + f.name() + " is " + f.problem;
          else if (!of_this(f))
            problems += "; " + h.host + ":" + f.name() + " is of another run";
        }
      choice.why_none = "checkpoint " + std::to_string(n) + " lacks a whole shard of process" +
                        (lacking == 1 ? " " : "es ") + missing + (lacking > 8 ? ", ..." : "") +
                        " on the reachable hosts" + problems;
    }
  }
  return choice;
}

std::vector<Transfer> plan_transfers(const CheckpointChoice& choice,
                                     const std::vector<std::string>& host_of_pid) {
  std::vector<Transfer> transfers;
  for (std::size_t pid = 0; pid < host_of_pid.size() && pid < choice.sources.size(); ++pid) {
    const auto& list = choice.sources[pid];
    const std::string& target = host_of_pid[pid];
    const bool there =
        std::any_of(list.begin(), list.end(), [&](const Source& s) { return s.host == target; });
    if (there || list.empty()) continue;
    HeldFile as_shard = list.front().file;
    as_shard.copy = false;
    transfers.push_back({static_cast<int>(pid), list.front().host, list.front().file.name(), target,
                         as_shard.name()});
  }
  return transfers;
}

}  // namespace bspg::launcher
