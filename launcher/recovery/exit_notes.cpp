// exit_notes.cpp - see exit_notes.h.
#include "exit_notes.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "hosts.h"

namespace bspg::launcher {

ExitNotes::ExitNotes() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/bspg-exits-XXXXXX";
  if (mkdtemp(pattern.data())) path_ = pattern;
}

ExitNotes::~ExitNotes() {
  if (path_.empty()) return;
  // Only names the library writes (digits, ".begun"), relative to the directory: no link followed.
  if (DIR* dir = opendir(path_.c_str())) {
    const int fd = dirfd(dir);
    while (const dirent* entry = readdir(dir))
      if (entry->d_name[0] != '.') unlinkat(fd, entry->d_name, 0);
    closedir(dir);
  }
  rmdir(path_.c_str());
}

ExitNoteSet ExitNotes::read() const {
  ExitNoteSet notes;
  if (DIR* dir = opendir(path_.c_str())) {
    while (const dirent* entry = readdir(dir)) {
      const std::string name = entry->d_name;
      int status = 0;
      if (!name.empty() && name.find_first_not_of("0123456789") == std::string::npos) {
        std::ifstream note(path_ + "/" + name);
        if (!(note >> status)) status = 0;
      }
      notes.add(name, status);
    }
    closedir(dir);
  }
  return notes;
}

void ExitNoteSet::add(const std::string& name, int status) {
  const std::size_t digits = std::min(name.find_first_not_of("0123456789"), name.size());
  if (digits == 0 || digits > 8) return;
  const int rank = std::stoi(name.substr(0, digits));
  if (digits == name.size())
    ended[rank] = status;
  else if (name.compare(digits, std::string::npos, ".begun") == 0)
    begun.insert(rank);
}

std::vector<int> ExitNoteSet::not_ended() const {
  std::vector<int> missing;
  for (int rank : begun)
    if (!ended.count(rank)) missing.push_back(rank);
  return missing;
}

bool ExitNoteSet::ended_with_failure() const {
  return std::any_of(ended.begin(), ended.end(), [](const auto& e) { return e.second != 0; });
}

bool ExitNoteSet::ended_with(int status) const {
  return std::any_of(ended.begin(), ended.end(), [&](const auto& e) { return e.second == status; });
}

namespace {
constexpr const char* kNotesBegin = "BSPG-EXIT-NOTES-BEGIN";
constexpr const char* kNotesEnd = "BSPG-EXIT-NOTES-END";
}  // namespace

std::string exit_notes_directory(const std::string& job_marker, const std::string& parent) {
  if (parent.empty()) return "~/.cache/bspg/exits/" + job_marker;
  return parent + "/exits-" + job_marker;
}

namespace {
// sh that sets d to the run's notes directory (exit_notes_directory; m holds the marker), and p
// to `parent` where there is one.
std::string notes_directory_sh(const std::string& parent) {
  if (parent.empty()) return "d=$HOME/.cache/bspg/exits/$m; ";
  const bool home = parent.rfind("~/", 0) == 0;
  return hosts::shell_assignment("p", home ? parent.substr(2) : parent) +
         (home ? "p=$HOME/$p; " : "") + "d=$p/exits-$m; ";
}
}  // namespace

std::string exit_notes_script(const std::string& job_marker, const std::string& parent) {
  // One line of sh (guarded_command): no single quote, no backslash but shell_assignment's. Only
  // the library's names are listed (RANK, RANK.begun), each a plain file, never through a link.
  // Each note is removed right after it is listed: where hosts share a home (NFS), the hosts'
  // listings together still hold every note, whichever host listed it (a note another host took
  // meanwhile reads empty here and is left out).
  const std::string where = notes_directory_sh(parent);
  // Earlier runs' notes (the job's own directory) and the directory if nothing else is left.
  const std::string earlier =
      parent.empty() ? ""
                     : "for o in \"$p\"/exits-*; do [ \"$o\" != \"$d\" ] && [ -d \"$o\" ] && "
                       "[ ! -L \"$o\" ] && { rm -f \"$o\"/*; rmdir \"$o\"; }; done 2>/dev/null; "
                       "rmdir \"$p\" 2>/dev/null; ";
  return hosts::shell_assignment("m", job_marker) + "case $m in \"\"|*/*|.*) m=-;; esac; " + where +
         "echo " + kNotesBegin +
         "; if [ -d \"$d\" ] && [ ! -L \"$d\" ]; then for f in \"$d\"/*; do b=${f##*/}; "
         "case ${b%.begun} in \"\"|*[!0-9]*) continue;; esac; "
         "[ -f \"$f\" ] && [ ! -L \"$f\" ] || continue; "
         "s=$(head -c 12 \"$f\" 2>/dev/null | head -n 1 | tr -cd 0-9-); [ -n \"$s\" ] && rm -f "
         "\"$f\" && "
         "echo \"note $b $s\"; done; rm -f \"$d/lost-ranks\"; rmdir \"$d\" 2>/dev/null; fi; " +
         earlier + "echo " + kNotesEnd;
}

std::string lost_ranks_script(const std::string& job_marker, const std::vector<int>& ranks,
                              const std::string& parent) {
  std::string lines;
  for (int r : ranks) lines += std::to_string(r) + " ";
  // The processes made the directory at their start; a link there is not followed. Hosts that
  // share a home (NFS) write the same file: each its own first, then renamed over it.
  return hosts::shell_assignment("m", job_marker) + "case $m in \"\"|*/*|.*) m=-;; esac; " +
         notes_directory_sh(parent) + "[ -d \"$d\" ] && [ ! -L \"$d\" ] && " + "echo " + lines +
         "> \"$d/lost-ranks.$$\" && " +
         "mv -f \"$d/lost-ranks.$$\" \"$d/lost-ranks\" && echo named";
}

bool read_exit_notes(const std::string& output, ExitNoteSet& notes) {
  std::vector<std::string> lines;
  const hosts::Listing got = hosts::lines_between(output, kNotesBegin, kNotesEnd, lines);
  for (const std::string& line : lines) {
    std::istringstream fields(line);
    std::string kind, name, status;
    fields >> kind >> name >> status;
    if (kind != "note") continue;
    char* end = nullptr;
    const long value = std::strtol(status.c_str(), &end, 10);
    const bool number = !status.empty() && *end == '\0' && value > -1000 && value < 1000;
    notes.add(name, number ? static_cast<int>(value) : 1);  // an unreadable status: not 0
  }
  return got == hosts::Listing::kComplete;
}

}  // namespace bspg::launcher
