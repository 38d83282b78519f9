// memory_copies.cpp - the shard and copies of the last whole checkpoint, in memfd files.
#include "memory_copies.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <map>

namespace bspg::memory_copies {
namespace {

struct Generation {
  std::uint64_t n = 0, run = 0;
  int own = -1;
  std::map<int, int> copies;  // ward pid -> file
  void drop() {
    if (own >= 0) ::close(own);
    for (auto& [ward, fd] : copies) ::close(fd);
    *this = Generation{};
  }
};

bool turned_on = false;
bool from_memory = false;
// The last whole checkpoint, the one before it (a process that did not see the last one end, its
// final agreement cut short by a loss, still has only that one; by the next checkpoint's start
// every process has the last, since the sync before it needs all), and the one being written.
Generation kept_generation, previous, writing;

int new_file(const char* name) { return memfd_create(name, MFD_CLOEXEC); }

}  // namespace

void turn_on() { turned_on = true; }

void begin(std::uint64_t n) {
  writing.drop();
  previous.drop();
  writing.n = n;
}
bool on() { return turned_on; }

int own_file(std::uint64_t n) {
  if (!turned_on || writing.n != n) return -1;
  if (writing.own < 0) writing.own = new_file("bspg-shard");
  return writing.own;
}

int copy_file(std::uint64_t n, int ward) {
  if (!turned_on || writing.n != n) return -1;
  auto found = writing.copies.find(ward);
  if (found != writing.copies.end()) return found->second;
  const int fd = new_file("bspg-copy");
  writing.copies[ward] = fd;
  return fd;
}

void keep(std::uint64_t n, std::uint64_t run) {
  if (!turned_on || writing.n != n || writing.own < 0) return;
  previous.drop();
  previous = kept_generation;
  kept_generation = writing;
  kept_generation.run = run;
  writing = Generation{};
}

std::uint64_t kept_before() { return previous.n; }

bool use(std::uint64_t n) {
  if (kept_generation.n == n) return true;
  if (previous.n != n || n == 0) return false;
  kept_generation.drop();
  kept_generation = previous;
  previous = Generation{};
  return true;
}

std::uint64_t kept() { return kept_generation.n; }
std::uint64_t kept_run() { return kept_generation.run; }
int kept_own() { return kept_generation.own; }

std::vector<int> kept_wards() {
  std::vector<int> wards;
  for (const auto& [ward, fd] : kept_generation.copies) wards.push_back(ward);
  return wards;
}

int kept_copy(int ward) {
  auto found = kept_generation.copies.find(ward);
  return found == kept_generation.copies.end() ? -1 : found->second;
}

void adopt(std::uint64_t n, std::uint64_t run, const std::string& bytes) {
  writing.drop();
  previous.drop();
  kept_generation.drop();
  kept_generation.n = n;
  kept_generation.run = run;
  kept_generation.own = new_file("bspg-shard");
  std::size_t at = 0;
  while (at < bytes.size()) {
    const ssize_t put = ::write(kept_generation.own, bytes.data() + at, bytes.size() - at);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) {
      kept_generation.drop();
      return;
    }
    at += static_cast<std::size_t>(put);
  }
}

bool read_whole(int fd, std::string& bytes) {
  const off_t size = lseek(fd, 0, SEEK_END);
  if (size < 0) return false;
  bytes.resize(static_cast<std::size_t>(size));
  std::size_t at = 0;
  while (at < bytes.size()) {
    const ssize_t got = pread(fd, bytes.data() + at, bytes.size() - at, static_cast<off_t>(at));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    at += static_cast<std::size_t>(got);
  }
  return true;
}

void resume_from_memory(bool yes) { from_memory = yes; }
bool resuming_from_memory() { return from_memory; }

}  // namespace bspg::memory_copies
