// job_lock.cpp - flock'ed lock files naming their holder (see job_lock.h).
#include "job_lock.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>

namespace bspg::launcher {
namespace {

std::string errno_text() { return std::strerror(errno); }

// mkdir -p with 0700; "" or why not.
std::string make_directories(const std::string& path) {
  for (std::size_t at = path.find('/', 1);; at = path.find('/', at + 1)) {
    const std::string part = path.substr(0, at);
    if (mkdir(part.c_str(), 0700) != 0 && errno != EEXIST)
      return "cannot create " + part + ": " + errno_text();
    if (at == std::string::npos) return "";
  }
}

std::string read_holder(int fd) {
  char text[512];
  const ssize_t n = pread(fd, text, sizeof text - 1, 0);
  if (n <= 0) return "another bsprun or bspg job (it has not said which yet)";
  std::string holder(text, static_cast<std::size_t>(n));
  holder = holder.substr(0, holder.find('\n'));
  for (char& c : holder)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return holder;
}

}  // namespace

JobLocks::~JobLocks() {
  for (const Held& h : held_) {
    if (h.remove) unlink(h.path.c_str());  // while still held: a waiting taker re-checks
    close(h.fd);
  }
}

std::string JobLocks::take(const std::string& path, const std::string& holder,
                           bool remove_when_done, bool& busy) {
  busy = false;
  const std::string dir = path.substr(0, path.rfind('/'));
  if (!dir.empty())
    if (std::string problem = make_directories(dir); !problem.empty()) return problem;
  for (int attempt = 0; attempt < 10; ++attempt) {
    const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
      return "cannot open " + path + ": " +
             (errno == ELOOP ? std::string("it is a symbolic link") : errno_text());
    struct stat st {};
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
      close(fd);
      return path + " is not a regular file of this user";
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int error = errno;
      busy = error == EWOULDBLOCK;
      std::string text = error == EWOULDBLOCK ? "in use by " + read_holder(fd)
                                              : "cannot lock " + path + ": " + std::strerror(error);
      close(fd);
      return text;
    }
    // The holder before may have removed the file between our open and our lock: then the lock
    // is on a file nobody else will find. Take the one that is there now.
    struct stat now {};
    if (stat(path.c_str(), &now) != 0 || now.st_ino != st.st_ino || now.st_dev != st.st_dev) {
      close(fd);
      continue;
    }
    const std::string line = holder + "\n";
    if (ftruncate(fd, 0) != 0 || pwrite(fd, line.data(), line.size(), 0) < 0) {
      const std::string text = "cannot write " + path + ": " + errno_text();
      close(fd);
      return text;
    }
    held_.push_back({fd, path, remove_when_done});
    return "";
  }
  return "cannot lock " + path + ": it keeps being replaced";
}

std::string lock_holder_text(const std::string& job_id) {
  char host[256] = "?";
  gethostname(host, sizeof host - 1);
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char since[32];
  std::strftime(since, sizeof since, "%Y-%m-%d %H:%M:%S", &local);
  return "bsprun pid " + std::to_string(getpid()) + " on " + host + ", job " + job_id + ", since " +
         since;
}

std::string lock_directory() {
  if (const char* runtime = std::getenv("XDG_RUNTIME_DIR"); runtime && *runtime == '/')
    return std::string(runtime) + "/bspg-locks";
  const char* home = std::getenv("HOME");
  if (!home || *home != '/')
    if (const passwd* user = getpwuid(geteuid())) home = user->pw_dir;
  return std::string(home && *home == '/' ? home : "/") + "/.cache/bspg/locks";
}

}  // namespace bspg::launcher
