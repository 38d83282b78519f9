// loopback.h - sockets on 127.0.0.1 for the relays' tests (daemon_relay_test, srun_relay_test):
// stand-ins for mpirun's port, sshd and slurmd.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>

namespace bspg::test {

// A listening TCP socket on 127.0.0.1 (-1 where none) and its port.
inline int listen_local(int* port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || listen(fd, 8) != 0) {
    if (fd >= 0) close(fd);
    return -1;
  }
  socklen_t size = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &size);
  *port = ntohs(a.sin_port);
  return fd;
}

// Waits up to `ms` for `fd` to be readable; then reads. -2: nothing came in time.
inline ssize_t read_within(int fd, char* buffer, std::size_t size, int ms) {
  pollfd p{fd, POLLIN, 0};
  if (poll(&p, 1, ms) != 1) return -2;
  return recv(fd, buffer, size, 0);
}

}  // namespace bspg::test
