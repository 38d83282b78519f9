// globals_internal.hpp - what the files that share globals have in common; private to sections/.
// Each declaration names the file that defines it; globals.cpp tells how the parts fit.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

extern char** environ;

namespace bspg::globals_internal {

using Address = std::uintptr_t;
static_assert(sizeof(Address) == sizeof(std::uint64_t), "bspg shares globals on 64-bit systems");

// ---- main's arguments and the environment ------------------------------------------------------

// What the loader handed main. Zero until capture_start runs (static, so no constructor order).
// The pointer arrays are copied: getopt reorders argv, and setenv may replace entries of the
// original environment array in place.
struct StartArguments {
  char** argv;  // the array main gets
  std::size_t argc;
  char** argv_copy;          // argv[0 .. argc) as the loader left them
  std::size_t* argv_nbytes;  // their lengths then
  char** envp;               // the original environment array (on the initial stack)
  std::size_t envc;
  char** envp_copy;  // envp[0 .. envc) as the loader left them
};
extern StartArguments g_start;  // start_arguments.cpp

// The memory of process 0's argv and environment that a pointer may point into.
enum class PlaceKind : std::uint8_t {
  Argument,       // argv[index]'s text
  ArgumentArray,  // main's argv array
  EnvString,      // "name=value" of variable `name`
  EnvironArray,   // the environ array at bsp_begin
  EnvpArray,      // the original environment array, where environ has since moved
};

struct Place {
  Address begin, end;  // [begin, end): a string with its NUL, an array with its null entry
  PlaceKind kind;
  std::uint64_t index = 0;  // Argument
  std::string name;         // EnvString
};

// start_arguments.cpp: a variable's name in "name=value"; the entries of a null-ended array; this
// process's argv and environment as places.
std::size_t name_length(const char* text);
std::size_t entry_count(char* const* array);
std::vector<Place> start_places();

// ---- Hashing --------------------------------------------------------------------------------

constexpr std::uint64_t kMul1 = 0x9e3779b97f4a7c15ULL;
constexpr std::uint64_t kMul2 = 0xc2b2ae3d27d4eb4fULL;

inline std::uint64_t mix(std::uint64_t h, std::uint64_t word) {
  h ^= word * kMul1;
  h = (h << 31) | (h >> 33);
  return h * kMul2 + 0x165667b19e3779f9ULL;
}

inline std::uint64_t finish(std::uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  return h ^ (h >> 33);
}

// ---- Where addresses point --------------------------------------------------------------------

enum class Kind : std::uint8_t { Object, Heap, Stack, Anonymous, File };

const char* private_memory_name(Kind kind);  // variable_names.cpp: for messages

struct Segment {
  Address begin, end;  // [begin, end)
};

struct LoadedObject {
  std::string name;  // "" for the main program
  Address base = 0;
  std::uint64_t key = 0;  // name, occurrence of that name, layout and build-id
  std::vector<Segment> segments;
};

struct Interval {
  Address begin, end;  // [begin, end)
  Kind kind;
  std::uint32_t object;  // index into AddressMap::objects for Kind::Object
};

// A process's loaded objects and private memory, for classifying pointer values.
struct AddressMap {
  std::vector<LoadedObject> objects;
  std::vector<Interval> intervals;  // sorted by begin
  Address low = 0, high = 0;        // every interval lies in [low, high)
  std::vector<Place> start;         // argv and the environment, sorted by begin (process 0's)

  // Sorts the intervals and sets low and high, once objects and intervals are filled.
  void index() {
    std::sort(intervals.begin(), intervals.end(),
              [](const Interval& a, const Interval& b) { return a.begin < b.begin; });
    low = intervals.empty() ? 0 : intervals.front().begin;
    high = 0;
    for (const Interval& i : intervals) high = std::max(high, i.end);
  }

  const Interval* find(Address value) const {
    if (value < low || value >= high) return nullptr;
    auto after = std::upper_bound(intervals.begin(), intervals.end(), value,
                                  [](Address v, const Interval& i) { return v < i.begin; });
    if (after == intervals.begin()) return nullptr;
    const Interval& candidate = *(after - 1);
    return value < candidate.end ? &candidate : nullptr;
  }

  bool is_private(Address value) const {
    const Interval* i = find(value);
    return i != nullptr && i->kind != Kind::Object;
  }
};

// The main program's data to share, and what identifies its build.
struct Executable {
  Address base = 0;
  std::vector<Segment> pages;      // absolute; each within one 4 KiB page, in address order
  std::vector<Segment> zero_fill;  // the whole pages past the file's image: zero until written
  std::string build_id;
  std::uint64_t layout = 0;  // PT_LOAD layout, build-id and the pages' offsets
};

// address_space.cpp: this process's objects, private memory and executable's data.
void scan_address_space(AddressMap& map, Executable& exe);

// page_hashes.cpp: the hash of each page (untouched .bss without reading it).
std::vector<std::uint64_t> page_hashes(const std::vector<Segment>& pages,
                                       const std::vector<Segment>& zero_fill,
                                       const AddressMap& map);

// serialized_map.cpp: process 0's address map as bytes, and back (false: damaged).
std::vector<unsigned char> serialize(const AddressMap& map);
bool deserialize(const std::vector<unsigned char>& in, AddressMap& map);

// variable_names.cpp: pread of all nbytes; a variable and an object named for a message.
bool read_at(int fd, void* buffer, std::size_t nbytes, std::uint64_t offset);
std::string describe_variable(Address address, Address base);
std::string object_display_name(const std::string& name);

}  // namespace bspg::globals_internal
