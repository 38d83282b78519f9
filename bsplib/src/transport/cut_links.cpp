// cut_links.cpp - see cut_links.hpp.
#include "cut_links.hpp"

#include <arpa/inet.h>
#include <dirent.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace bspg::cut_links {
namespace {

// The numeric address of `a`; an IPv4 address mapped into IPv6 as the IPv4 one. "" for others.
std::string numeric(const sockaddr* a) {
  char text[INET6_ADDRSTRLEN] = "";
  if (a->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(a);
    if (inet_ntop(AF_INET, &in->sin_addr, text, sizeof text) == nullptr) return "";
  } else if (a->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(a);
    if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
      if (inet_ntop(AF_INET, &in6->sin6_addr.s6_addr[12], text, sizeof text) == nullptr) return "";
    } else if (inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof text) == nullptr) {
      return "";
    }
  } else {
    return "";
  }
  return text;
}

bool loopback(const sockaddr* a) {
  if (a->sa_family == AF_INET)
    return (ntohl(reinterpret_cast<const sockaddr_in*>(a)->sin_addr.s_addr) >> 24) == 127;
  if (a->sa_family == AF_INET6)
    return IN6_IS_ADDR_LOOPBACK(&reinterpret_cast<const sockaddr_in6*>(a)->sin6_addr);
  return false;
}

}  // namespace

std::string local_addresses() {
  std::string all;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return all;
  for (const ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || loopback(i->ifa_addr)) continue;
    const std::string a = numeric(i->ifa_addr);
    if (!a.empty()) all += (all.empty() ? "" : " ") + a;
  }
  freeifaddrs(list);
  return all;
}

int cut_connections_to(const std::vector<std::string>& addresses) {
  if (addresses.empty()) return 0;
  DIR* fds = opendir("/proc/self/fd");
  if (fds == nullptr) return 0;
  const int own = dirfd(fds);
  int cut = 0;
  while (const dirent* entry = readdir(fds)) {
    char* end = nullptr;
    const long fd = std::strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0' || fd == own) continue;
    struct stat st {};
    if (fstat(static_cast<int>(fd), &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
    sockaddr_storage peer{};
    socklen_t size = sizeof peer;
    if (getpeername(static_cast<int>(fd), reinterpret_cast<sockaddr*>(&peer), &size) != 0) continue;
    const std::string far = numeric(reinterpret_cast<const sockaddr*>(&peer));
    if (far.empty() || std::find(addresses.begin(), addresses.end(), far) == addresses.end())
      continue;
    // Only its receiving side: a read now ends as at the peer's close, so the MPI fails the
    // connection, while a write still succeeds (one into a connection shut both ways would
    // raise SIGPIPE, which ends the process unless the program catches it).
    if (shutdown(static_cast<int>(fd), SHUT_RD) == 0) ++cut;
  }
  closedir(fds);
  return cut;
}

}  // namespace bspg::cut_links
