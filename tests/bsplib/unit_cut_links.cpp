// Cutting a process's connections to a host that stopped answering (cut_links.hpp): only the
// connections to the named addresses, only their receiving side (a read ends as at the peer's
// close, a write still succeeds: no SIGPIPE), and the local addresses never list loopback.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include "cut_links.hpp"

namespace {

// A connected pair over TCP on `address` (IPv4, both ends): the connecting end and the accepted
// one.
bool connected_pair(const char* address, int& near, int& far) {
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in where{};
  where.sin_family = AF_INET;
  inet_pton(AF_INET, address, &where.sin_addr);
  socklen_t size = sizeof where;
  if (bind(listener, reinterpret_cast<sockaddr*>(&where), sizeof where) != 0 ||
      listen(listener, 1) != 0 ||
      getsockname(listener, reinterpret_cast<sockaddr*>(&where), &size) != 0) {
    close(listener);
    return false;
  }
  near = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in from = where;  // the connecting end on the same address, so both ends see it
  from.sin_port = 0;
  const bool ok = bind(near, reinterpret_cast<sockaddr*>(&from), sizeof from) == 0 &&
                  connect(near, reinterpret_cast<sockaddr*>(&where), sizeof where) == 0 &&
                  (far = accept(listener, nullptr, nullptr)) >= 0;
  close(listener);
  return ok;
}

TEST(CutLinks, OnlyTheNamedAddressesReceivingSideIsShut) {
  int to_a = -1, a = -1, to_b = -1, b = -1;
  ASSERT_TRUE(connected_pair("127.83.19.1", to_a, a));
  ASSERT_TRUE(connected_pair("127.83.19.2", to_b, b));  // all of 127/8 is loopback
  // Both ends of the first pair have 127.83.19.1 as their far end: both are cut (an address
  // nothing else here uses).
  EXPECT_EQ(bspg::cut_links::cut_connections_to({"127.83.19.1"}), 2);
  char byte = 0;
  EXPECT_EQ(read(to_a, &byte, 1), 0);  // as at the peer's close, at once
  // Writing into a connection cut this way still succeeds (no EPIPE, so no SIGPIPE).
  EXPECT_EQ(write(to_a, "x", 1), 1);
  // The other connection is untouched: a byte still goes through.
  ASSERT_EQ(write(to_b, "y", 1), 1);
  ASSERT_EQ(read(b, &byte, 1), 1);
  EXPECT_EQ(byte, 'y');
  EXPECT_EQ(bspg::cut_links::cut_connections_to({}), 0);
  EXPECT_EQ(bspg::cut_links::cut_connections_to({"192.0.2.1"}), 0);  // nobody's
  for (int fd : {to_a, a, to_b, b}) close(fd);
}

TEST(CutLinks, LocalAddressesLeaveLoopbackOut) {
  const std::string all = " " + bspg::cut_links::local_addresses() + " ";
  EXPECT_EQ(all.find(" 127."), std::string::npos);
  EXPECT_EQ(all.find(" ::1 "), std::string::npos);
}

}  // namespace
