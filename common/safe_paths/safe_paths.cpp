// safe_paths.cpp - see safe_paths.h.
#include "safe_paths.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <deque>
#include <vector>

namespace bspg::safe_paths {
namespace {

bool trusted_owner(uid_t uid) { return uid == 0 || uid == geteuid(); }

bool others_can_write(const struct stat& info) { return (info.st_mode & (S_IWGRP | S_IWOTH)) != 0; }

std::string mode_text(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

std::string uid_text(uid_t uid) { return "uid " + std::to_string(uid); }

// The components of `text`, put in front of what is still to walk.
void push_components(std::deque<std::string>& todo, const std::string& text) {
  std::vector<std::string> parts;
  for (std::size_t at = 0; at <= text.size();) {
    std::size_t slash = text.find('/', at);
    if (slash == std::string::npos) slash = text.size();
    if (slash > at) parts.push_back(text.substr(at, slash - at));
    at = slash + 1;
  }
  todo.insert(todo.begin(), parts.begin(), parts.end());
}

// One walk: the directory reached so far (`current`, its real path `walked`).
class Walk {
 public:
  // own: the directory must be this user's and writable by no one else; otherwise it may be
  // root's too, and writable by others where its sticky bit keeps them from this user's files.
  Walk(const std::string& path, const std::string& what, bool create, bool own = true)
      : path_(path), what_(what), create_(create), own_(own) {
    push_components(todo_, path);
    if (path.empty() || path.front() != '/') {
      char cwd[PATH_MAX];
      if (getcwd(cwd, sizeof cwd) == nullptr) {
        fail(".");
        return;
      }
      push_components(todo_, cwd);
    }
    current_ = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (current_ < 0) fail("/");
  }
  ~Walk() {
    if (current_ >= 0) close(current_);
  }

  OpenedDirectory run() {
    while (out_.refusal.empty() && out_.failed_path.empty() && !todo_.empty()) step();
    if (out_.refusal.empty() && out_.failed_path.empty()) finish();
    return out_;
  }

 private:
  std::string where() const { return walked_.empty() ? "/" : walked_; }

  void fail(const std::string& at) {
    out_.failed_path = at;
    out_.error = std::strerror(errno);
  }

  void move_to(int fd, const std::string& where) {
    close(current_);
    current_ = fd;
    walked_ = where;
  }

  void step() {
    const std::string name = todo_.front();
    todo_.pop_front();
    const std::string here = walked_ + "/" + name;
    if (name == ".") return;
    if (name == "..") {
      const int up = openat(current_, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (up < 0) return fail(where());
      const std::size_t slash = walked_.rfind('/');
      move_to(up, walked_.substr(0, slash == std::string::npos ? 0 : slash));
      return;
    }
    struct stat parent {};
    if (fstat(current_, &parent) != 0) return fail(where());
    struct stat info {};
    if (fstatat(current_, name.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno != ENOENT || !create_) return fail(here);
      if (mkdirat(current_, name.c_str(), 0700) != 0 && errno != EEXIST) return fail(here);
      if (fstatat(current_, name.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0) return fail(here);
    }
    if (S_ISLNK(info.st_mode)) return follow(name, here, parent, info);
    if (!S_ISDIR(info.st_mode)) {
      errno = ENOTDIR;
      return fail(here);
    }
    // Passing through: a directory of another user that others may rearrange is no road.
    if (!todo_.empty() && !trusted_owner(info.st_uid) && others_can_write(info) &&
        (info.st_mode & S_ISVTX) == 0) {
      out_.refusal = what_ + " " + path_ + " leads through " + here + ", owned by " +
                     uid_text(info.st_uid) + " and writable by others (mode " +
                     mode_text(info.st_mode) + "); refusing to use it";
      return;
    }
    const int next = openat(current_, name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0) return fail(here);
    move_to(next, here);
  }

  void follow(const std::string& name, const std::string& here, const struct stat& parent,
              const struct stat& link) {
    if (todo_.empty()) {
      out_.refusal = what_ + " " + here +
                     " is a symbolic link; refusing to follow it (name the directory itself)";
      return;
    }
    if (!trusted_owner(parent.st_uid)) {
      out_.refusal = what_ + " " + path_ + " leads through " + here + ", a symbolic link in " +
                     where() + ", which is owned by " + uid_text(parent.st_uid) +
                     " (another user); refusing to follow it";
      return;
    }
    if (others_can_write(parent) && link.st_uid != geteuid() && link.st_uid != parent.st_uid) {
      out_.refusal = what_ + " " + path_ + " leads through " + here + ", a symbolic link of " +
                     uid_text(link.st_uid) + " in " + where() +
                     ", which others can write; refusing to follow it";
      return;
    }
    char target[PATH_MAX];
    const ssize_t length = readlinkat(current_, name.c_str(), target, sizeof target - 1);
    if (length <= 0 || ++links_ > 40) {
      if (length > 0) errno = ELOOP;
      return fail(here);
    }
    target[length] = '\0';
    push_components(todo_, target);
    if (target[0] == '/') {
      const int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (root < 0) return fail("/");
      move_to(root, "");
    }
  }

  void finish() {
    out_.fd = openat(current_, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    struct stat info {};
    if (out_.fd < 0 || fstat(out_.fd, &info) != 0) {
      fail(path_);
    } else if (!own_) {
      // Root's or this user's, and no one else can take this user's files out of it.
      if (!trusted_owner(info.st_uid))
        out_.refusal = what_ + " " + path_ + " is owned by " + uid_text(info.st_uid) +
                       " (another user); refusing to write into it";
      else if (others_can_write(info) && (info.st_mode & S_ISVTX) == 0)
        out_.refusal = what_ + " " + path_ + " is writable by others and has no sticky bit (mode " +
                       mode_text(info.st_mode) + "); refusing to write into it";
    } else if (info.st_uid != geteuid()) {
      out_.refusal = what_ + " " + path_ + " is owned by " + uid_text(info.st_uid) +
                     ", not by this user (" + uid_text(geteuid()) + "); refusing to use it";
    } else if (others_can_write(info)) {
      out_.refusal = what_ + " " + path_ + " is writable by group or others (mode " +
                     mode_text(info.st_mode) + "); refusing to use it (chmod go-w " + path_ + ")";
    }
    if ((!out_.refusal.empty() || !out_.failed_path.empty()) && out_.fd >= 0) {
      close(out_.fd);
      out_.fd = -1;
    }
  }

  std::string path_, what_;
  bool create_;
  bool own_;
  std::deque<std::string> todo_;
  int current_ = -1;
  std::string walked_;  // the real path of current_ ("" for /)
  int links_ = 0;
  OpenedDirectory out_;
};

// Checks a just-opened descriptor: a regular file, owned by this user where `own`.
bool usable(int fd, bool own, std::string& error) {
  struct stat info {};
  if (fstat(fd, &info) != 0) {
    error = std::strerror(errno);
  } else if (S_ISDIR(info.st_mode)) {
    error = "it is a directory";
  } else if (!S_ISREG(info.st_mode)) {
    error = "it is " + file_kind(info.st_mode) + ", not a regular file";
  } else if (own && info.st_uid != geteuid()) {
    error = "it is owned by " + uid_text(info.st_uid) + ", not by this user";
  } else {
    const int flags = fcntl(fd, F_GETFL);  // blocking from here on
    if (flags >= 0 && fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == 0) return true;
    error = std::strerror(errno);
  }
  return false;
}

std::string opening_error(int error) {
  if (error == ELOOP) return "it is a symbolic link; refusing to follow it";
  if (error == ENXIO) return "it is a socket or a FIFO without a reader, not a regular file";
  return std::strerror(error);
}

}  // namespace

std::string OpenedDirectory::why() const {
  if (!refusal.empty()) return refusal;
  return failed_path + ": " + error;
}

OpenedDirectory open_own_directory(const std::string& path, const std::string& what, bool create) {
  return Walk(path, what, create).run();
}

int create_file_at(int dir_fd, const std::string& name, std::string& error, mode_t mode) {
  // No O_TRUNC here: a FIFO or another user's file is refused before anything changes.
  const int fd = openat(dir_fd, name.c_str(),
                        O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, mode);
  if (fd < 0) {
    error = opening_error(errno);
    return -1;
  }
  if (!usable(fd, true, error) || ftruncate(fd, 0) != 0) {
    if (error.empty()) error = std::strerror(errno);
    close(fd);
    return -1;
  }
  return fd;
}

namespace {

int create_file_in(const std::string& path, std::string& error, mode_t mode, bool own) {
  const std::size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "."
                          : slash == 0               ? "/"
                                                     : path.substr(0, slash);
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  const OpenedDirectory opened = Walk(dir, "the directory", false, own).run();
  if (!opened.ok()) {
    error = opened.why();
    return -1;
  }
  const int fd = create_file_at(opened.fd, name, error, mode);
  close(opened.fd);
  return fd;
}

}  // namespace

int create_file(const std::string& path, std::string& error, mode_t mode) {
  return create_file_in(path, error, mode, true);
}

int create_named_file(const std::string& path, std::string& error, mode_t mode) {
  return create_file_in(path, error, mode, false);
}

std::FILE* create_stream(const std::string& path, const char* stdio_mode, std::string& error,
                         mode_t mode, bool own_directory) {
  const int fd = create_file_in(path, error, mode, own_directory);
  if (fd < 0) return nullptr;
  std::FILE* stream = fdopen(fd, stdio_mode);
  if (stream == nullptr) {
    error = std::strerror(errno);
    close(fd);
  }
  return stream;
}

int open_regular_file(const std::string& path, std::string& error) {
  const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    const int saved = errno;
    struct stat info {};
    error = saved == ENXIO && stat(path.c_str(), &info) == 0
                ? "it is " + file_kind(info.st_mode) + ", not a regular file"
                : std::strerror(saved);
    return -1;
  }
  if (!usable(fd, false, error)) {
    close(fd);
    return -1;
  }
  return fd;
}

std::string file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISREG(mode)) return "a regular file";
  return "not a regular file";
}

}  // namespace bspg::safe_paths
