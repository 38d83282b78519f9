// silent_hosts COUNT HOSTFILE - COUNT candidate hosts that accept TCP connections and never say a
// word (like hung machines), for probing tests and benchmarks/probe_scale.sh.
//
// Listens on one port of every local address and writes HOSTFILE (YAML, written whole at once)
// naming COUNT hosts 127.1.A.B on that port; then holds every connection (reading and dropping what
// the client sends) until killed, or until its parent dies. Refuses to run where a network
// interface other than lo exists: run it inside `unshare --net` (with lo up), so that nothing but
// loopback can reach it.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace {

int fail(const std::string& message) {
  std::fprintf(stderr, "silent_hosts: %s\n", message.c_str());
  return 1;
}

// True when lo is the only network interface (/proc/self/net/dev lists this namespace's).
bool only_loopback() {
  std::ifstream dev("/proc/self/net/dev");
  std::string line;
  int interfaces = 0;
  bool lo = false;
  for (int n = 0; std::getline(dev, line); ++n) {
    if (n < 2) continue;  // the two header lines
    const std::string name = line.substr(0, line.find(':'));
    ++interfaces;
    lo = lo || name.find_first_not_of(' ') == name.find("lo");
  }
  return interfaces == 1 && lo;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) return fail("usage: silent_hosts COUNT HOSTFILE");
  char* end = nullptr;
  const long count = std::strtol(argv[1], &end, 10);
  if (*end != '\0' || count < 1 || count > 60000)
    return fail("COUNT must be 1 to 60000, not '" + std::string(argv[1]) + "'");
  if (!only_loopback())
    return fail("a network interface other than lo exists; run inside unshare --net");
  prctl(PR_SET_PDEATHSIG, SIGTERM);

  rlimit files{};  // one descriptor per held connection
  if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    setrlimit(RLIMIT_NOFILE, &files);
  }

  const int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr =
      htonl(INADDR_ANY);  // every 127.x address, and nothing else in this namespace
  socklen_t length = sizeof address;
  if (listener < 0 || bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      listen(listener, 4096) != 0 ||
      getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length) != 0)
    return fail(std::string("cannot listen: ") + std::strerror(errno));

  const std::string path = argv[2], part = path + ".part";
  {
    std::ofstream out(part);
    out << "# " << count << " silent candidates (tests/launcher/hosts/silent_hosts)\n"
        << "defaults:\n  port: " << ntohs(address.sin_port) << "\nhosts:\n";
    for (long i = 0; i < count; ++i)
      out << "  - name: silent" << i + 1 << "\n    address: 127.1." << i / 250 << "." << i % 250 + 1
          << "\n";
    if (!out.flush()) return fail("cannot write " + part);
  }
  if (std::rename(part.c_str(), path.c_str()) != 0)
    return fail("cannot write " + path + ": " + std::strerror(errno));

  std::vector<pollfd> fds{{listener, POLLIN, 0}};
  char sink[4096];
  for (;;) {
    if (poll(fds.data(), fds.size(), -1) < 0 && errno != EINTR) return fail(std::strerror(errno));
    if (fds[0].revents & POLLIN) {
      const int held = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (held >= 0) fds.push_back({held, POLLIN, 0});
    }
    for (size_t i = 1; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      const ssize_t n = read(fds[i].fd, sink, sizeof sink);
      if (n > 0 || (n < 0 && errno == EAGAIN)) continue;
      close(fds[i].fd);  // the client went away
      fds[i] = fds.back();
      fds.pop_back();
      --i;
    }
  }
}
