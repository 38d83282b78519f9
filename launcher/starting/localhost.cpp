// localhost.cpp - core count, PATH lookups.
#include "localhost.h"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <thread>

#include "cores.h"
#include "mpi.h"

namespace bspg::launcher {
namespace {

bool is_regular_file(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool is_executable_file(const std::string& path) {
  return is_regular_file(path) && access(path.c_str(), X_OK) == 0;
}

std::string absolute(const std::string& path) {
  if (!path.empty() && path[0] == '/') return path;
  char cwd[PATH_MAX];
  if (!getcwd(cwd, sizeof cwd)) return path;
  std::string rel = path;
  while (rel.rfind("./", 0) == 0) rel.erase(0, 2);
  return std::string(cwd) + "/" + rel;
}

}  // namespace

std::string search_path(const std::string& name) {
  const char* path_env = std::getenv("PATH");
  std::string dirs = path_env ? path_env : "/usr/bin:/bin";
  size_t begin = 0;
  while (begin <= dirs.size()) {
    size_t end = dirs.find(':', begin);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(begin, end - begin);
    if (dir.empty()) dir = ".";
    std::string candidate = dir + "/" + name;
    if (is_executable_file(candidate)) return absolute(candidate);
    begin = end + 1;
  }
  return "";
}

int local_core_count() {
  // hwloc reads the whole topology: once per bsprun, however many places ask.
  static const int cores = hosts::this_host_cores();
  return cores;
}

ResolvedProgram resolve_program(const std::string& name) {
  ResolvedProgram r;
  std::string path;
  if (name.find('/') != std::string::npos) {
    path = name;
  } else {
    path = search_path(name);
    if (path.empty()) path = name;  // mpirun also tries the current directory
  }
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    r.problem = ResolvedProgram::kNotFound;
    r.message = "program '" + name + "' not found" +
                (name.find('/') == std::string::npos ? " (not on PATH nor in the current directory)"
                                                     : std::string(": ") + std::strerror(errno));
    return r;
  }
  if (!S_ISREG(st.st_mode)) {
    r.problem = ResolvedProgram::kNotExecutable;
    r.message = "program '" + name + "' is not a regular file";
    return r;
  }
  if (access(path.c_str(), X_OK) != 0) {
    r.problem = ResolvedProgram::kNotExecutable;
    r.message = "program '" + name + "' is not executable (try chmod +x " + name + ")";
    return r;
  }
  r.path = absolute(path);
  return r;
}

std::string find_mpirun() {
  if (const char* env = std::getenv("BSPG_MPIRUN"); env && *env) {
    std::string chosen = env;
    if (chosen.find('/') != std::string::npos) return is_executable_file(chosen) ? chosen : "";
    return search_path(chosen);
  }
  // The starter of the MPI bspg was built with, by its full name: not whichever mpirun comes
  // first in PATH (Debian installs several MPIs side by side).
  const std::string configured = configured_mpi().starter();
  return is_executable_file(configured) ? configured : "";
}

std::string current_directory() {
  char buf[PATH_MAX];
  return getcwd(buf, sizeof buf) ? buf : "";
}

std::string run_sh_here(const std::string& script, double timeout_s, std::string& error,
                        double wind_down_s) {
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) {
    error = std::string("cannot run sh: ") + std::strerror(errno);
    return "";
  }
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], STDOUT_FILENO);
    const int null = open("/dev/null", O_RDWR);
    if (null >= 0) {
      dup2(null, STDIN_FILENO);
      dup2(null, STDERR_FILENO);
    }
    sigset_t none;  // bsprun holds its stop signals; the script must not
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execl("/bin/sh", "sh", "-c", script.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(out[1]);
  if (pid < 0) {
    error = std::string("cannot run sh: ") + std::strerror(errno);
    close(out[0]);
    return "";
  }
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(timeout_s));
  std::string text;
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    pollfd wait{out[0], POLLIN, 0};
    const int ready = left > 0 ? ::poll(&wait, 1, static_cast<int>(left)) : 0;
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) {
      error = "took longer than " + std::to_string(static_cast<int>(timeout_s)) + " s";
      if (wind_down_s > 0) {
        // Its own end may wait for what does not answer (srun for a frozen node): not here.
        kill(pid, SIGTERM);
        close(out[0]);
        std::thread([pid, wind_down_s] {
          const auto give_up = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                  std::chrono::duration<double>(wind_down_s));
          while (waitpid(pid, nullptr, WNOHANG) == 0) {
            if (Clock::now() >= give_up) {
              kill(pid, SIGKILL);
              waitpid(pid, nullptr, 0);
              return;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
          }
        }).detach();
        return text;
      }
      kill(pid, SIGKILL);
      break;
    }
    char buffer[4096];
    const ssize_t n = read(out[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (text.size() < (1u << 20)) text.append(buffer, static_cast<std::size_t>(n));
  }
  close(out[0]);
  waitpid(pid, nullptr, 0);
  return text;
}

bool links_bspg(const std::string& path) {
  // The dynamic section's strings (DT_NEEDED) sit near the start of an executable.
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return false;
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return false;
  }
  constexpr std::string_view kNeeded = "libbspg.so";
  std::string window;
  char buffer[1 << 16];
  bool found = false;
  for (std::size_t total = 0; !found && total < (std::size_t{16} << 20);) {
    const ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    total += static_cast<std::size_t>(n);
    // The end of the last piece with this one: a name cut between two reads is found too.
    window.erase(0, window.size() > kNeeded.size() ? window.size() - kNeeded.size() : 0);
    window.append(buffer, static_cast<std::size_t>(n));
    found = window.find(kNeeded) != std::string::npos;
  }
  close(fd);
  return found;
}

}  // namespace bspg::launcher
