// directory.cpp - the checkpoint directory's files, read, written, listed and removed without
// following a symbolic link; what earlier runs left, cleared; the whole directory at the end.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "checkpoint_internal.hpp"

namespace bspg {
namespace {

std::string errno_text() { return std::strerror(errno); }

}  // namespace

namespace checkpoint_internal {

Problem problem_at(const std::string& file) { return {file, errno_text()}; }

// Opens a regular file `name` of directory `dir` for reading, never through a symbolic link and
// without waiting on a FIFO; -1 with `why` set otherwise.
int open_regular(int dir, const std::string& name, std::string& why) {
  const int fd = openat(dir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    why = errno == ENOENT  ? "missing"
          : errno == ELOOP ? "a symbolic link (not followed)"
                           : "cannot open: " + errno_text();
    return -1;
  }
  struct stat info {};
  if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    why = "not a regular file";
    return -1;
  }
  return fd;
}

// The first line (at most `limit` bytes) of a regular file of dir; "" when there is none.
std::string first_line(int dir, const std::string& name, std::size_t limit) {
  std::string why;
  const int fd = open_regular(dir, name, why);
  if (fd < 0) return "";
  std::string text(limit, '\0');
  const ssize_t got = pread(fd, &text[0], limit, 0);
  ::close(fd);
  text.resize(got > 0 ? static_cast<std::size_t>(got) : 0);
  return text.substr(0, text.find('\n'));
}

// Names in a directory (without "." and ".."), read through a descriptor of its own.
std::vector<std::string> entries(int dir) {
  std::vector<std::string> names;
  const int fd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return names;
  DIR* d = fdopendir(fd);
  if (!d) {
    ::close(fd);
    return names;
  }
  while (const dirent* entry = readdir(d))
    if (std::strcmp(entry->d_name, ".") && std::strcmp(entry->d_name, ".."))
      names.emplace_back(entry->d_name);
  closedir(d);
  return names;
}

// N of a name "c<N>" (digits only), or -1.
long long checkpoint_number(const std::string& name) {
  if (name.size() < 2 || name.size() > 19 || name[0] != 'c') return -1;
  for (std::size_t i = 1; i < name.size(); ++i)
    if (name[i] < '0' || name[i] > '9') return -1;
  return std::atoll(name.c_str() + 1);
}

// Removes the entry `name` of dir: a directory with everything in it, anything else (a symbolic
// link included) by unlinking the entry itself. Nothing is ever followed: a directory is opened
// with O_NOFOLLOW, so one swapped for a link in between is not entered.
void remove_entry(int dir, const std::string& name, int depth) {
  struct stat info {};
  if (fstatat(dir, name.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0) return;
  if (!S_ISDIR(info.st_mode)) {
    unlinkat(dir, name.c_str(), 0);
    return;
  }
  const int fd =
      depth < 8 ? openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
  if (fd >= 0) {
    for (const std::string& inner : entries(fd)) remove_entry(fd, inner, depth + 1);
    ::close(fd);
  }
  unlinkat(dir, name.c_str(), AT_REMOVEDIR);
}

// Once checkpoint n is durable everywhere, the ones before it are no longer needed.
void remove_checkpoints_before(int dir, std::uint64_t n) {
  for (const std::string& name : entries(dir)) {
    const long long m = checkpoint_number(name);
    if (m >= 0 && static_cast<std::uint64_t>(m) < n) remove_entry(dir, name);
  }
}

}  // namespace checkpoint_internal

using namespace checkpoint_internal;  // what the checkpoint files share (checkpoint_internal.hpp)

// Two levels, as the layout has them (c<N>/files, and files at the top); a directory deeper
// than that, or an entry that cannot go, stays, and so does the directory (bsprun's clean-up
// after a failed job, or the user, removes what is left). Failures are not errors: the job's
// results are out already.
void Checkpoints::remove_directory() {
  const auto remove_entries = [](int dir, bool descend, const auto& self) -> void {
    const int listing = dup(dir);
    if (listing < 0) return;
    DIR* d = fdopendir(listing);
    if (!d) {
      ::close(listing);
      return;
    }
    std::vector<std::string> names;
    while (const dirent* e = readdir(d))
      if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
        names.emplace_back(e->d_name);
    closedir(d);
    for (const auto& name : names) {
      struct stat st;
      if (fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
      if (!S_ISDIR(st.st_mode)) {
        unlinkat(dir, name.c_str(), 0);
      } else if (descend) {
        const int sub = openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub < 0) continue;
        self(sub, false, self);
        ::close(sub);
        unlinkat(dir, name.c_str(), AT_REMOVEDIR);
      }
    }
  };
  remove_entries(dir_fd_, true, remove_entries);
  rmdir(directory_.c_str());
}

// At the first checkpoint of a run, before writing it, each host's lowest pid clears what earlier
// runs left: on a fresh run every c<N> and a stop file that does not name this run, on a resumed
// one what lies beyond the checkpoint restored. Entries are removed, never followed.
void Checkpoints::clean_up_first() {
  if (lowest_on_host_ && dir_fd_ >= 0) {
    // A fresh run that restored a checkpoint (from memory, after a recovery in place) keeps it.
    const bool fresh = (resume_.empty() || resume_ == "0") && last_ == 0;
    for (const std::string& name : entries(dir_fd_)) {
      const long long m = checkpoint_number(name);
      if (m >= 0 && (fresh || static_cast<std::uint64_t>(m) > last_)) remove_entry(dir_fd_, name);
    }
    if (fresh && first_line(dir_fd_, "stop") != hex_id(run_)) remove_entry(dir_fd_, "stop");
  }
  idle_barrier(comm_);  // no process writes before its host is clean
}

}  // namespace bspg
