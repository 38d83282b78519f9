// globals.cpp - at bsp_begin every process takes process 0's values of the executable's own
// global variables, as MulticoreBSP's threads share them.
//
// What is shared: the writable PT_LOAD segments of the main program (dl_iterate_phdr's first
// object), without what the loader and the libraries own there: PT_GNU_RELRO, PT_DYNAMIC, the
// PLT's GOT (each process's lazy binding), the TLS template, and the variables of shared
// libraries that copy relocations placed in the executable (stdout, environ, MPI's objects).
//
// How: each process hashes its data in 4 KiB pages; process 0 broadcasts its hashes, the pages
// that differ anywhere are agreed with one bitwise-or reduction, and process 0 broadcasts those
// pages only. In the hashes, a pointer into a loaded object counts as (object, offset) and a
// pointer into private memory (heap, stack, mappings) as "private", so that address space
// randomisation alone makes no page differ; .bss pages a process never touched (pagemap) count
// as zero without being read. A received pointer into one of process 0's objects
// becomes the same offset in this process's copy of that object; one into process 0's private
// memory keeps this process's own value where that points into its own private memory (it made
// its own allocation), and is an error otherwise. Pointers into main's argv and into the
// environment are the exception: every process has them, so one into process 0's argv[i] (or its
// argv array) becomes the same place in this process's argv, and one into an environment string
// the same place in this process's string of that variable (found by name), or an error.
//
// The parts: globals_internal.hpp names the file of each; here the exchange itself.
#include "globals.hpp"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "errors.hpp"
#include "globals_internal.hpp"
#include "pointer_translation.hpp"

namespace bspg {
using namespace globals_internal;  // the globals files' shared parts (globals_internal.hpp)

namespace {

// Broadcasts of page contents go in pieces of at most this size (MPI counts are int).
constexpr std::size_t kChunkBytes = std::size_t{64} << 20;
constexpr const char* kTurnOff = "set BSPG_SHARE_GLOBALS=0 to keep each process's own globals";

// ---- The exchange ------------------------------------------------------------------------------

// Process 0's announcement, the first (and, with sharing off, only) message.
struct Header {
  std::uint64_t enabled;
  std::uint64_t layout;
  std::uint64_t npages;
  std::uint64_t build_id_nbytes;
  unsigned char build_id[64];
};

void broadcast(void* data, std::size_t nbytes, int root, MPI_Comm comm) {
  unsigned char* bytes = static_cast<unsigned char*>(data);
  for (std::size_t at = 0; at < nbytes; at += kChunkBytes) {
    const std::size_t n = std::min(kChunkBytes, nbytes - at);
    MPI_Bcast(bytes + at, static_cast<int>(n), MPI_BYTE, root, comm);
  }
}

// BSPG_SHARE_GLOBALS: unset or 1 shares, 0 does not; anything else is an error.
bool sharing_wanted() {
  const char* value = std::getenv("BSPG_SHARE_GLOBALS");
  if (value == nullptr || std::strcmp(value, "1") == 0) return true;
  if (std::strcmp(value, "0") == 0) return false;
  fail("bsp_begin",
       "BSPG_SHARE_GLOBALS='%.40s' is neither 0 (each process keeps its own global variables) "
       "nor 1 (the default: process 0's global variables reach every process)",
       value);
}

// The agreed reporter's line for a pointer that cannot be made this process's.
std::string problem_text(const Problem& problem, const Executable& exe) {
  const std::string variable = describe_variable(problem.address, exe.base);
  char text[1400];
  if (!problem.reason.empty()) {
    std::snprintf(text, sizeof text, "%s %s; %s", variable.c_str(), problem.reason.c_str(),
                  kTurnOff);
  } else if (problem.kind != Kind::Object) {
    std::snprintf(text, sizeof text,
                  "%s holds a pointer to process 0's %s, which this process does not have "
                  "(allocate it inside the SPMD section, or send its contents); %s",
                  variable.c_str(), private_memory_name(problem.kind), kTurnOff);
  } else {
    const std::string object = object_display_name(problem.object);
    std::snprintf(text, sizeof text, "%s holds a pointer into process 0's %s, which %s; %s",
                  variable.c_str(), object.c_str(),
                  problem.object_loaded ? "differs from this process's copy (another build)"
                                        : "this process has not loaded",
                  kTurnOff);
  }
  return text;
}

// The lowest pid for which `mine` holds (INT_MAX: none); collective.
int lowest_pid_where(bool mine, int rank, MPI_Comm comm) {
  int lowest = mine ? rank : INT_MAX;
  MPI_Allreduce(MPI_IN_PLACE, &lowest, 1, MPI_INT, MPI_MIN, comm);
  return lowest;
}

}  // namespace

void share_globals(MPI_Comm comm, int root) {
  int nprocs = 1, rank = 0;
  MPI_Comm_size(comm, &nprocs);
  MPI_Comm_rank(comm, &rank);
  const bool is_root = rank == root;
  // Process 0's setting counts, so process 0 alone checks it (one line, not one per process).
  const bool wanted = is_root ? sharing_wanted() : true;
  if (nprocs == 1) return;  // nothing to share: no traffic

  AddressMap own;
  Executable exe;
  // Process 0's setting counts (a process that disagrees follows it).
  Header header{};
  if (is_root) {
    header.enabled = wanted ? 1 : 0;
    if (wanted) {
      scan_address_space(own, exe);
      header.layout = exe.layout;
      header.npages = exe.pages.size();
      header.build_id_nbytes = std::min(exe.build_id.size(), sizeof header.build_id);
      std::memcpy(header.build_id, exe.build_id.data(), header.build_id_nbytes);
    }
  }
  MPI_Bcast(&header, sizeof header, MPI_BYTE, root, comm);
  if (!header.enabled) return;
  if (!is_root) scan_address_space(own, exe);
#if defined(__SANITIZE_ADDRESS__)
  // The pages are read and written whole, AddressSanitizer's red zones between variables too.
  for (const Segment& page : exe.pages)
    ASAN_UNPOISON_MEMORY_REGION(reinterpret_cast<void*>(page.begin), page.end - page.begin);
#endif
  // Another executable than process 0's (an MPMD start): its data cannot take process 0's.
  const bool other_executable = !is_root && exe.layout != header.layout;

  // Page hashes: every process hashes its own (at once), then compares with process 0's.
  std::vector<std::uint64_t> own_hashes;
  if (!other_executable) own_hashes = page_hashes(exe.pages, exe.zero_fill, own);
  std::vector<std::uint64_t> root_hashes(header.npages);
  if (is_root) root_hashes = own_hashes;
  broadcast(root_hashes.data(), root_hashes.size() * sizeof(std::uint64_t), root, comm);
  // Word 0: bit 0 says some process runs another executable; then one bit per page.
  std::vector<std::uint64_t> marks(1 + (header.npages + 63) / 64, 0);
  if (other_executable) {
    marks[0] = 1;
  } else if (!is_root) {
    for (std::size_t k = 0; k < own_hashes.size(); ++k)
      if (own_hashes[k] != root_hashes[k]) marks[1 + k / 64] |= 1ULL << (k % 64);
  }
  for (std::size_t at = 0; at < marks.size(); at += kChunkBytes / sizeof(std::uint64_t)) {
    const std::size_t n = std::min(kChunkBytes / sizeof(std::uint64_t), marks.size() - at);
    MPI_Allreduce(MPI_IN_PLACE, marks.data() + at, static_cast<int>(n), MPI_UINT64_T, MPI_BOR,
                  comm);
  }
  if (marks[0] & 1) {
    const int reporter = lowest_pid_where(other_executable, rank, comm);
    const std::string ids = builds_named(
        exe.build_id,
        std::string(reinterpret_cast<const char*>(header.build_id), header.build_id_nbytes),
        "its writable data is laid out differently");
    fail_collective(reporter, "bsp_begin",
                    "this process runs another executable than process 0 (%s), so process 0's "
                    "global variables cannot reach it; start the same program on every process, "
                    "or %s",
                    ids.c_str(), kTurnOff);
  }
  std::vector<std::size_t> differing;
  for (std::size_t k = 0; k < header.npages; ++k)
    if (marks[1 + k / 64] & (1ULL << (k % 64))) differing.push_back(k);
  if (differing.empty()) return;

  // Process 0's address map, for its pointers.
  std::vector<unsigned char> root_map_bytes;
  std::uint64_t map_nbytes = 0;
  if (is_root) {
    own.start = start_places();
    root_map_bytes = serialize(own);
    map_nbytes = root_map_bytes.size();
  }
  MPI_Bcast(&map_nbytes, 1, MPI_UINT64_T, root, comm);
  root_map_bytes.resize(map_nbytes);
  broadcast(root_map_bytes.data(), map_nbytes, root, comm);
  AddressMap root_map;
  if (!is_root && !deserialize(root_map_bytes, root_map))
    fail("bsp_begin", "process 0's map of its address space arrived damaged (%llu bytes)",
         static_cast<unsigned long long>(map_nbytes));
  Translator translator(root_map, own);

  // The differing pages, in pieces of at most kChunkBytes.
  std::vector<unsigned char> chunk;
  for (std::size_t first = 0; first < differing.size();) {
    std::size_t last = first, nbytes = 0;
    while (last < differing.size()) {
      const Segment& page = exe.pages[differing[last]];
      if (nbytes > 0 && nbytes + (page.end - page.begin) > kChunkBytes) break;
      nbytes += page.end - page.begin;
      ++last;
    }
    chunk.resize(nbytes);
    if (is_root) {
      std::size_t at = 0;
      for (std::size_t k = first; k < last; ++k) {
        const Segment& page = exe.pages[differing[k]];
        std::memcpy(chunk.data() + at, reinterpret_cast<const void*>(page.begin),
                    page.end - page.begin);
        at += page.end - page.begin;
      }
    }
    MPI_Bcast(chunk.data(), static_cast<int>(nbytes), MPI_BYTE, root, comm);
    if (!is_root) {
      std::size_t at = 0;
      for (std::size_t k = first; k < last; ++k) {
        const Segment& page = exe.pages[differing[k]];
        translator.apply(chunk.data() + at, page);
        at += page.end - page.begin;
      }
    }
    first = last;
  }

  const Problem& problem = translator.problem();
  const int reporter = lowest_pid_where(problem.found, rank, comm);
  if (reporter != INT_MAX) {
    const std::string text = rank == reporter ? problem_text(problem, exe) : std::string();
    fail_collective(reporter, "bsp_begin", "%s", text.c_str());
  }
}

}  // namespace bspg
