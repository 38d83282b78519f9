// memory_copies.cpp - the shard and copies of the last whole checkpoint, in memfd files.
#include "memory_copies.hpp"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <vector>

namespace bspg::memory_copies {
namespace {

// An in-memory file and its mapping (mapped bytes may run past the file's end: never touched).
struct File {
  int fd = -1;
  char* map = nullptr;
  std::size_t mapped = 0;
};

void release(File& file) {
  if (file.map) munmap(file.map, file.mapped);
  if (file.fd >= 0) ::close(file.fd);
  file = File{};
}

// Files of checkpoints dropped while the next is written, for it to use again; what it does not
// use goes once it is kept (release_unused).
std::vector<File> reusable;

void release_unused() {
  for (File& file : reusable) release(file);
  reusable.clear();
}

struct Generation {
  std::uint64_t n = 0, run = 0;
  File own;
  std::map<int, File> copies;  // ward pid -> file
  void drop() {
    if (own.fd >= 0) reusable.push_back(own);
    for (auto& [ward, file] : copies) reusable.push_back(file);
    *this = Generation{};
  }
};

bool turned_on = false;
bool from_memory = false;
// The last whole checkpoint, the one before it (a process that did not see the last one end, its
// final agreement cut short by a loss, still has only that one; by the next checkpoint's start
// every process has the last, since the sync before it needs all), and the one being written.
Generation kept_generation, previous, writing;

// Room for `bytes` in `file`: a reusable file where there is one (its pages are there already),
// else a new one; made exactly `bytes` long, mapped (its pages populated at once, not one fault
// at a time).
char* room(File& file, std::uint64_t bytes) {
  if (file.fd < 0 && !reusable.empty()) {
    file = reusable.back();
    reusable.pop_back();
  }
  if (file.fd < 0) file.fd = memfd_create("bspg-checkpoint", MFD_CLOEXEC);
  if (file.fd < 0) return nullptr;
  if (ftruncate(file.fd, static_cast<off_t>(bytes)) != 0) return nullptr;
  if (bytes > file.mapped || file.map == nullptr) {
    if (file.map) munmap(file.map, file.mapped);
    file.map = nullptr;
    file.mapped = 0;
    const std::size_t length = bytes > 0 ? bytes : 1;
    void* at = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, file.fd, 0);
    if (at == MAP_FAILED) return nullptr;
    file.map = static_cast<char*>(at);
    file.mapped = length;
  }
  return file.map;
}

}  // namespace

void turn_on() { turned_on = true; }

void begin(std::uint64_t n) {
  writing.drop();
  previous.drop();
  writing.n = n;
}
bool on() { return turned_on; }

char* own_room(std::uint64_t n, std::uint64_t bytes) {
  if (!turned_on || writing.n != n) return nullptr;
  return room(writing.own, bytes);
}

char* copy_room(std::uint64_t n, int ward, std::uint64_t bytes) {
  if (!turned_on || writing.n != n) return nullptr;
  return room(writing.copies[ward], bytes);
}

void keep(std::uint64_t n, std::uint64_t run) {
  if (!turned_on || writing.n != n || writing.own.fd < 0) return;
  previous.drop();
  previous = kept_generation;
  kept_generation = writing;
  kept_generation.run = run;
  writing = Generation{};
  release_unused();
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
int kept_own() { return kept_generation.own.fd; }

std::vector<int> kept_wards() {
  std::vector<int> wards;
  for (const auto& [ward, file] : kept_generation.copies) wards.push_back(ward);
  return wards;
}

int kept_copy(int ward) {
  auto found = kept_generation.copies.find(ward);
  return found == kept_generation.copies.end() ? -1 : found->second.fd;
}

char* adopt(std::uint64_t n, std::uint64_t run, std::uint64_t bytes) {
  writing.drop();
  previous.drop();
  kept_generation.drop();
  kept_generation.n = n;
  kept_generation.run = run;
  char* into = room(kept_generation.own, bytes);
  if (!into) kept_generation.drop();
  release_unused();
  return into;
}

const char* kept_copy_bytes(int ward, std::uint64_t& bytes) {
  auto found = kept_generation.copies.find(ward);
  if (found == kept_generation.copies.end() || !found->second.map) return nullptr;
  struct stat info {};
  if (fstat(found->second.fd, &info) != 0) return nullptr;
  bytes = static_cast<std::uint64_t>(info.st_size);
  return found->second.map;
}

void resume_from_memory(bool yes) { from_memory = yes; }
bool resuming_from_memory() { return from_memory; }

}  // namespace bspg::memory_copies
