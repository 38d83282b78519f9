// output_relay.cpp - writing all of a text to bsprun's stdout or stderr, and emptying the
// directory of the starter's output files: what output_relay.h's classes call out of line.
#include "output_relay.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <string_view>
#include <vector>

namespace bspg::launcher::runner_internal {

// Writes all of text to fd (bsprun's stdout or stderr); gives up quietly when it is gone
// (false).
bool write_all(int fd, std::string_view text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

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
