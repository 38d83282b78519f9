// exit_notes.cpp - see exit_notes.h.
#include "exit_notes.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>

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

std::vector<int> ExitNotes::not_ended() const {
  std::set<int> begun, ended;
  if (DIR* dir = opendir(path_.c_str())) {
    while (const dirent* entry = readdir(dir)) {
      char* end = nullptr;
      const long rank = std::strtol(entry->d_name, &end, 10);
      if (end == entry->d_name || rank < 0 || rank > 10000000) continue;
      const std::string rest = end;
      if (rest.empty()) ended.insert(static_cast<int>(rank));
      if (rest == ".begun") begun.insert(static_cast<int>(rank));
    }
    closedir(dir);
  }
  std::vector<int> missing;
  std::set_difference(begun.begin(), begun.end(), ended.begin(), ended.end(),
                      std::back_inserter(missing));
  return missing;
}

bool ExitNotes::ended_with_failure() const {
  bool failed = false;
  if (DIR* dir = opendir(path_.c_str())) {
    while (const dirent* entry = readdir(dir)) {
      const std::string name = entry->d_name;
      if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
      std::ifstream note(path_ + "/" + name);
      int status = 0;
      if (note >> status && status != 0) failed = true;
    }
    closedir(dir);
  }
  return failed;
}

}  // namespace bspg::launcher
