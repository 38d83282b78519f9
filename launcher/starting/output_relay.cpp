// output_relay.cpp - emptying the directory of the starter's output files: what output_relay.h's
// classes call out of line.
#include "output_relay.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <string_view>
#include <vector>

namespace bspg::launcher::runner_internal {

// Removes what is inside dir (not dir itself); the files the starter wrote there for a run.
void empty_directory(const std::string& dir) {
  DIR* d = opendir(dir.c_str());
  if (!d) return;
  std::vector<std::string> names;
  while (dirent* entry = readdir(d)) {
    const std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  closedir(d);
  for (const auto& name : names) {
    const std::string path = dir + "/" + name;
    struct stat st {};
    if (lstat(path.c_str(), &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      empty_directory(path);
      rmdir(path.c_str());
    } else {
      unlink(path.c_str());
    }
  }
}

}  // namespace bspg::launcher::runner_internal
