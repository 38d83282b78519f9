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
#include "globals.hpp"

#include <cxxabi.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <unistd.h>
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
#include <unordered_map>
#include <vector>

#include "elf_dynamic.hpp"
#include "errors.hpp"

extern char** environ;

namespace bspg {
namespace {

using Address = std::uintptr_t;
static_assert(sizeof(Address) == sizeof(std::uint64_t), "bspg shares globals on 64-bit systems");

constexpr std::size_t kPageBytes = 4096;
// Broadcasts of page contents go in pieces of at most this size (MPI counts are int).
constexpr std::size_t kChunkBytes = std::size_t{64} << 20;
constexpr const char* kTurnOff = "set BSPG_SHARE_GLOBALS=0 to keep each process's own globals";

// The relocation that copies a library's variable into the executable.
#if defined(__x86_64__)
constexpr unsigned kCopyRelocation = R_X86_64_COPY;
#elif defined(__aarch64__)
constexpr unsigned kCopyRelocation = R_AARCH64_COPY;
#elif defined(__powerpc64__)
constexpr unsigned kCopyRelocation = R_PPC64_COPY;
#elif defined(__riscv)
constexpr unsigned kCopyRelocation = R_RISCV_COPY;
#else
#error "globals.cpp: name this architecture's copy relocation"
#endif

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
StartArguments g_start;

// glibc calls ELF constructors with (argc, argv, envp), before main and before any setenv.
__attribute__((constructor)) void capture_start(int argc, char** argv, char** envp) {
  if (argc >= 0 && argv != nullptr) {
    const std::size_t n = static_cast<std::size_t>(argc);
    char** copy = static_cast<char**>(std::malloc((n + 1) * sizeof(char*)));
    std::size_t* nbytes = static_cast<std::size_t*>(std::malloc((n + 1) * sizeof(std::size_t)));
    if (copy != nullptr && nbytes != nullptr) {
      std::size_t kept = 0;
      for (; kept < n && argv[kept] != nullptr; ++kept) {
        copy[kept] = argv[kept];
        nbytes[kept] = std::strlen(argv[kept]);
      }
      g_start = StartArguments{argv, kept, copy, nbytes, nullptr, 0, nullptr};
    } else {
      std::free(copy);
      std::free(nbytes);
    }
  }
  if (envp != nullptr) {
    std::size_t n = 0;
    while (envp[n] != nullptr) ++n;
    char** copy = static_cast<char**>(std::malloc((n + 1) * sizeof(char*)));
    if (copy != nullptr) {
      std::memcpy(copy, envp, n * sizeof(char*));
      g_start.envp = envp;
      g_start.envc = n;
      g_start.envp_copy = copy;
    }
  }
}

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

// The variable's name in "name=value" (all of it without '=').
std::size_t name_length(const char* text) {
  const char* equals = std::strchr(text, '=');
  return equals != nullptr ? static_cast<std::size_t>(equals - text) : std::strlen(text);
}

std::size_t entry_count(char* const* array) {
  std::size_t n = 0;
  if (array != nullptr)
    while (array[n] != nullptr) ++n;
  return n;
}

// This process's argv and environment, as places (process 0 sends them).
std::vector<Place> start_places() {
  std::vector<Place> places;
  const StartArguments& start = g_start;
  for (std::size_t k = 0; k < start.argc; ++k) {
    const Address begin = reinterpret_cast<Address>(start.argv_copy[k]);
    places.push_back({begin, begin + start.argv_nbytes[k] + 1, PlaceKind::Argument, k, ""});
  }
  if (start.argv != nullptr) {
    const Address begin = reinterpret_cast<Address>(start.argv);
    places.push_back(
        {begin, begin + (start.argc + 1) * sizeof(char*), PlaceKind::ArgumentArray, 0, ""});
  }
  char** const current = environ;
  const std::size_t ncurrent = entry_count(current);
  std::vector<Address> seen;
  auto add_string = [&](const char* text) {
    const Address begin = reinterpret_cast<Address>(text);
    if (std::find(seen.begin(), seen.end(), begin) != seen.end()) return;
    seen.push_back(begin);
    places.push_back({begin, begin + std::strlen(text) + 1, PlaceKind::EnvString, 0,
                      std::string(text, name_length(text))});
  };
  for (std::size_t k = 0; k < ncurrent; ++k) add_string(current[k]);
  for (std::size_t k = 0; k < start.envc; ++k) add_string(start.envp_copy[k]);
  if (current != nullptr) {
    const Address begin = reinterpret_cast<Address>(current);
    places.push_back(
        {begin, begin + (ncurrent + 1) * sizeof(char*), PlaceKind::EnvironArray, 0, ""});
  }
  if (start.envp != nullptr && start.envp != current) {
    const Address begin = reinterpret_cast<Address>(start.envp);
    places.push_back(
        {begin, begin + (start.envc + 1) * sizeof(char*), PlaceKind::EnvpArray, 0, ""});
  }
  std::stable_sort(places.begin(), places.end(),
                   [](const Place& a, const Place& b) { return a.begin < b.begin; });
  // A string in two roles (putenv(argv[1])) keeps its first, argv: the places stay apart.
  std::vector<Place> apart;
  for (Place& p : places)
    if (apart.empty() || p.begin >= apart.back().end) apart.push_back(std::move(p));
  return apart;
}

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

std::uint64_t hash_bytes(std::uint64_t h, const void* data, std::size_t nbytes) {
  const unsigned char* bytes = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < nbytes; ++i) h = mix(h, bytes[i]);
  return h;
}

// ---- Where addresses point --------------------------------------------------------------------

enum class Kind : std::uint8_t { Object, Heap, Stack, Anonymous, File };

const char* private_memory_name(Kind kind) {
  switch (kind) {
    case Kind::Stack:
      return "stack memory";
    case Kind::File:
      return "memory mapped from a file";
    default:
      return "heap memory";  // the heap, and anonymous mappings (large mallocs, mmap)
  }
}

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

// The GNU build-id of an object, from its PT_NOTE segments ("" when it has none).
std::string build_id_of(Address base, const ElfW(Phdr) * phdrs, int count) {
  for (int i = 0; i < count; ++i) {
    if (phdrs[i].p_type != PT_NOTE) continue;
    const std::size_t align = phdrs[i].p_align == 8 ? 8 : 4;
    const unsigned char* note = reinterpret_cast<const unsigned char*>(base + phdrs[i].p_vaddr);
    const unsigned char* end = note + phdrs[i].p_filesz;
    while (note + sizeof(ElfW(Nhdr)) <= end) {
      ElfW(Nhdr) header;
      std::memcpy(&header, note, sizeof header);
      const std::size_t name_space = (header.n_namesz + align - 1) / align * align;
      const std::size_t desc_space = (header.n_descsz + align - 1) / align * align;
      const unsigned char* name = note + sizeof header;
      const unsigned char* desc = name + name_space;
      if (desc + header.n_descsz > end) break;
      if (header.n_type == NT_GNU_BUILD_ID && header.n_namesz == 4 &&
          std::memcmp(name, "GNU", 4) == 0)
        return std::string(reinterpret_cast<const char*>(desc), header.n_descsz);
      note = desc + desc_space;
    }
  }
  return "";
}

std::uint64_t layout_hash(const ElfW(Phdr) * phdrs, int count, const std::string& build_id) {
  std::uint64_t h = hash_bytes(0x6c61796f7574ULL, build_id.data(), build_id.size());
  for (int i = 0; i < count; ++i) {
    const ElfW(Phdr)& p = phdrs[i];
    if (p.p_type != PT_LOAD && p.p_type != PT_GNU_RELRO && p.p_type != PT_DYNAMIC &&
        p.p_type != PT_TLS)
      continue;
    for (std::uint64_t v :
         {std::uint64_t{p.p_type}, std::uint64_t{p.p_flags}, std::uint64_t{p.p_vaddr},
          std::uint64_t{p.p_memsz}, std::uint64_t{p.p_filesz}})
      h = mix(h, v);
  }
  return h;
}

// The main program's data to share, and what identifies its build.
struct Executable {
  Address base = 0;
  std::vector<Segment> pages;      // absolute; each within one 4 KiB page, in address order
  std::vector<Segment> zero_fill;  // the whole pages past the file's image: zero until written
  std::string build_id;
  std::uint64_t layout = 0;  // PT_LOAD layout, build-id and the pages' offsets
};

void subtract(std::vector<Segment>& ranges, Segment cut) {
  if (cut.begin >= cut.end) return;
  std::vector<Segment> left;
  for (const Segment& r : ranges) {
    if (cut.end <= r.begin || cut.begin >= r.end) {
      left.push_back(r);
      continue;
    }
    if (r.begin < cut.begin) left.push_back({r.begin, cut.begin});
    if (cut.end < r.end) left.push_back({cut.end, r.end});
  }
  ranges.swap(left);
}

// What the loader and the libraries own inside the executable's writable data.
void subtract_loader_data(Address base, const ElfW(Phdr) * phdrs, int count,
                          std::vector<Segment>& ranges) {
  const ElfW(Dyn)* dynamic = nullptr;
  for (int i = 0; i < count; ++i) {
    const ElfW(Phdr)& p = phdrs[i];
    const Address begin = base + p.p_vaddr;
    if (p.p_type == PT_GNU_RELRO || p.p_type == PT_DYNAMIC)
      subtract(ranges, {begin, begin + p.p_memsz});
    // The TLS template (.tdata); .tbss occupies no address space.
    if (p.p_type == PT_TLS) subtract(ranges, {begin, begin + p.p_filesz});
    if (p.p_type == PT_DYNAMIC) dynamic = reinterpret_cast<const ElfW(Dyn)*>(begin);
  }
  if (dynamic == nullptr) return;
  Address pltgot = 0, rela = 0, rel = 0, symtab = 0;
  std::size_t pltrelsz = 0, relasz = 0, relsz = 0, relaent = sizeof(ElfW(Rela));
  std::size_t relent = sizeof(ElfW(Rel)), syment = sizeof(ElfW(Sym));
  long pltrel = DT_RELA;
  for (const ElfW(Dyn)* d = dynamic; d->d_tag != DT_NULL; ++d) {
    switch (d->d_tag) {
      case DT_PLTGOT:
        pltgot = dynamic_address(base, d->d_un.d_ptr);
        break;
      case DT_PLTRELSZ:
        pltrelsz = d->d_un.d_val;
        break;
      case DT_PLTREL:
        pltrel = static_cast<long>(d->d_un.d_val);
        break;
      case DT_RELA:
        rela = dynamic_address(base, d->d_un.d_ptr);
        break;
      case DT_RELASZ:
        relasz = d->d_un.d_val;
        break;
      case DT_RELAENT:
        relaent = d->d_un.d_val;
        break;
      case DT_REL:
        rel = dynamic_address(base, d->d_un.d_ptr);
        break;
      case DT_RELSZ:
        relsz = d->d_un.d_val;
        break;
      case DT_RELENT:
        relent = d->d_un.d_val;
        break;
      case DT_SYMTAB:
        symtab = dynamic_address(base, d->d_un.d_ptr);
        break;
      case DT_SYMENT:
        syment = d->d_un.d_val;
        break;
      default:
        break;
    }
  }
  if (pltgot != 0) {
    // Three reserved words, then one per PLT relocation.
    const std::size_t entry = pltrel == DT_REL ? sizeof(ElfW(Rel)) : sizeof(ElfW(Rela));
    subtract(ranges, {pltgot, pltgot + (3 + pltrelsz / entry) * sizeof(Address)});
  }
  if (symtab == 0) return;
  auto cut_copy = [&](Address table, std::size_t nbytes, std::size_t entry_size) {
    if (table == 0 || entry_size < sizeof(ElfW(Rel))) return;
    for (std::size_t at = 0; at + entry_size <= nbytes; at += entry_size) {
      ElfW(Rel) r;  // r_offset and r_info start a Rela too
      std::memcpy(&r, reinterpret_cast<const void*>(table + at), sizeof r);
      if (ELF64_R_TYPE(r.r_info) != kCopyRelocation) continue;
      ElfW(Sym) symbol;
      std::memcpy(&symbol, reinterpret_cast<const void*>(symtab + ELF64_R_SYM(r.r_info) * syment),
                  sizeof symbol);
      const Address begin = base + r.r_offset;
      subtract(ranges, {begin, begin + symbol.st_size});
    }
  };
  cut_copy(rela, relasz, relaent);
  cut_copy(rel, relsz, relent);
}

struct ObjectScan {
  AddressMap* map;
  Executable* executable;
  std::unordered_map<std::string, std::uint64_t> occurrences;
};

int scan_object(struct dl_phdr_info* info, std::size_t /*size*/, void* data) {
  ObjectScan& scan = *static_cast<ObjectScan*>(data);
  const bool is_main_program = scan.map->objects.empty();
  LoadedObject object;
  object.name = info->dlpi_name != nullptr ? info->dlpi_name : "";
  object.base = info->dlpi_addr;
  const std::string build_id = build_id_of(object.base, info->dlpi_phdr, info->dlpi_phnum);
  const std::uint64_t layout = layout_hash(info->dlpi_phdr, info->dlpi_phnum, build_id);
  std::uint64_t key = hash_bytes(0x6f626a656374ULL, object.name.data(), object.name.size());
  key = finish(mix(mix(key, scan.occurrences[object.name]++), layout));
  object.key = key;
  std::vector<Segment> writable;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& p = info->dlpi_phdr[i];
    if (p.p_type != PT_LOAD || p.p_memsz == 0) continue;
    const Address begin = object.base + p.p_vaddr;
    object.segments.push_back({begin, begin + p.p_memsz});
    if (!(p.p_flags & PF_W)) continue;
    writable.push_back({begin, begin + p.p_memsz});
    if (is_main_program) {
      const Address frame = static_cast<Address>(sysconf(_SC_PAGESIZE));
      const Address zero_begin = (begin + p.p_filesz + frame - 1) / frame * frame;
      if (zero_begin < begin + p.p_memsz)
        scan.executable->zero_fill.push_back({zero_begin, begin + p.p_memsz});
    }
  }
  if (is_main_program) {
    Executable& exe = *scan.executable;
    exe.base = object.base;
    exe.build_id = build_id;
    subtract_loader_data(object.base, info->dlpi_phdr, info->dlpi_phnum, writable);
    std::sort(writable.begin(), writable.end(),
              [](const Segment& a, const Segment& b) { return a.begin < b.begin; });
    std::uint64_t h = layout;
    for (const Segment& r : writable) {
      for (Address at = r.begin; at < r.end;) {
        const Address page_end = (at / kPageBytes + 1) * kPageBytes;
        const Address end = std::min(page_end, r.end);
        exe.pages.push_back({at, end});
        at = end;
      }
      h = mix(mix(h, r.begin - object.base), r.end - object.base);
    }
    exe.layout = finish(mix(h, exe.pages.size()));
  }
  scan.map->objects.push_back(std::move(object));
  return 0;
}

bool overlaps_object(const AddressMap& map, Address begin, Address end) {
  for (const LoadedObject& o : map.objects)
    for (const Segment& s : o.segments)
      if (begin < s.end && s.begin < end) return true;
  return false;
}

// This process's objects (and its executable's data) and, from /proc/self/maps, its private
// memory: the heap, stacks, anonymous mappings and mapped files that belong to no object.
void scan_address_space(AddressMap& map, Executable& exe) {
  ObjectScan scan{&map, &exe, {}};
  dl_iterate_phdr(scan_object, &scan);
  for (std::uint32_t k = 0; k < map.objects.size(); ++k)
    for (const Segment& s : map.objects[k].segments)
      // One past the end too: a pointer to the end of an array.
      map.intervals.push_back({s.begin, s.end + 1, Kind::Object, k});
  FILE* maps = std::fopen("/proc/self/maps", "re");
  if (maps != nullptr) {
    char line[4096 + 256];
    while (std::fgets(line, sizeof line, maps) != nullptr) {
      unsigned long begin = 0, end = 0, inode = 0;
      int path_at = 0;
      if (std::sscanf(line, "%lx-%lx %*s %*x %*x:%*x %lu %n", &begin, &end, &inode, &path_at) < 3)
        continue;
      std::string path = line + path_at;
      while (!path.empty() && (path.back() == '\n' || path.back() == ' ')) path.pop_back();
      Kind kind = Kind::File;
      if (path == "[heap]") {
        kind = Kind::Heap;
      } else if (path.compare(0, 6, "[stack") == 0) {
        kind = Kind::Stack;
      } else if (path.empty() || path.compare(0, 6, "[anon:") == 0) {
        kind = Kind::Anonymous;
      } else if (path[0] == '[') {
        continue;  // [vdso], [vvar], [vsyscall]: the kernel's, never a program's data
      }
      if (overlaps_object(map, begin, end)) continue;
      map.intervals.push_back({begin, end, kind, 0});
    }
    std::fclose(maps);
  }
  map.index();
}

// A word as the page hashes see it: pointers by what they point into, not by address.
inline std::uint64_t normalized(std::uint64_t word, const AddressMap& map) {
  const Interval* i = map.find(word);
  if (i == nullptr) return word;
  if (i->kind != Kind::Object) return 0x7072697661746521ULL;
  const LoadedObject& o = map.objects[i->object];
  return finish(o.key ^ (word - o.base));
}

bool read_at(int fd, void* buffer, std::size_t nbytes, std::uint64_t offset);

inline std::uint64_t zero_page_hash(std::size_t nbytes) {
  return finish(mix(0x7061676500ULL, nbytes));
}

// A hash of one piece of a page.
std::uint64_t page_hash(const Segment& page, const AddressMap& map) {
  const unsigned char* bytes = reinterpret_cast<const unsigned char*>(page.begin);
  const std::size_t nbytes = page.end - page.begin;
  std::uint64_t any = 0;
  for (std::size_t i = 0; i < nbytes; ++i) any |= bytes[i];
  if (any == 0) return zero_page_hash(nbytes);
  std::uint64_t h = mix(0x7061676500ULL, nbytes);
  std::size_t i = 0;
  for (; i < nbytes && (page.begin + i) % sizeof(std::uint64_t) != 0; ++i) h = mix(h, bytes[i]);
  // Four independent lanes, for speed.
  std::uint64_t lanes[4] = {h, h ^ 1, h ^ 2, h ^ 3};
  constexpr std::size_t kWord = sizeof(std::uint64_t);
  for (; i + 4 * kWord <= nbytes; i += 4 * kWord) {
    std::uint64_t words[4];
    std::memcpy(words, bytes + i, sizeof words);
    for (int lane = 0; lane < 4; ++lane)
      lanes[lane] = mix(lanes[lane], normalized(words[lane], map));
  }
  h = mix(mix(mix(lanes[0], lanes[1]), lanes[2]), lanes[3]);
  for (; i + kWord <= nbytes; i += kWord) {
    std::uint64_t word;
    std::memcpy(&word, bytes + i, sizeof word);
    h = mix(h, normalized(word, map));
  }
  for (; i < nbytes; ++i) h = mix(h, bytes[i]);
  return finish(h);
}

bool inside(const std::vector<Segment>& ranges, const Segment& piece) {
  for (const Segment& r : ranges)
    if (r.begin <= piece.begin && piece.end <= r.end) return true;
  return false;
}

// The hashes of all pages. A page of .bss that the process never touched (neither in memory nor
// swapped out, says /proc/self/pagemap) is zero: it gets the hash of zeros without being read,
// which spares the page faults of reading a large untouched array.
std::vector<std::uint64_t> page_hashes(const std::vector<Segment>& pages,
                                       const std::vector<Segment>& zero_fill,
                                       const AddressMap& map) {
  std::vector<std::uint64_t> hashes(pages.size());
  std::vector<std::uint64_t> entries;
  Address first_frame = 0;
  const long frame_bytes = sysconf(_SC_PAGESIZE);
  const int pagemap =
      pages.empty() || frame_bytes <= 0 ? -1 : open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  if (pagemap >= 0) {
    const Address frame = static_cast<Address>(frame_bytes);
    first_frame = pages.front().begin / frame;
    entries.resize((pages.back().end - 1) / frame - first_frame + 1);
    if (!read_at(pagemap, entries.data(), entries.size() * sizeof(std::uint64_t),
                 first_frame * sizeof(std::uint64_t)))
      entries.clear();
    close(pagemap);
  }
  constexpr std::uint64_t kPresent = 1ULL << 63, kSwapped = 1ULL << 62;
  for (std::size_t k = 0; k < pages.size(); ++k) {
    if (!entries.empty()) {
      const std::uint64_t entry =
          entries[pages[k].begin / static_cast<Address>(frame_bytes) - first_frame];
      if ((entry & (kPresent | kSwapped)) == 0 && inside(zero_fill, pages[k])) {
        hashes[k] = zero_page_hash(pages[k].end - pages[k].begin);
        continue;
      }
    }
    hashes[k] = page_hash(pages[k], map);
  }
  return hashes;
}

// ---- Serialising process 0's address map ----------------------------------------------------

void put_u64(std::vector<unsigned char>& out, std::uint64_t v) {
  const unsigned char* b = reinterpret_cast<const unsigned char*>(&v);
  out.insert(out.end(), b, b + sizeof v);
}

std::vector<unsigned char> serialize(const AddressMap& map) {
  std::vector<unsigned char> out;
  put_u64(out, map.objects.size());
  for (const LoadedObject& o : map.objects) {
    put_u64(out, o.base);
    put_u64(out, o.key);
    put_u64(out, o.name.size());
    out.insert(out.end(), o.name.begin(), o.name.end());
  }
  put_u64(out, map.intervals.size());
  for (const Interval& i : map.intervals) {
    put_u64(out, i.begin);
    put_u64(out, i.end);
    put_u64(out, static_cast<std::uint64_t>(i.kind));
    put_u64(out, i.object);
  }
  put_u64(out, map.start.size());
  for (const Place& p : map.start) {
    put_u64(out, p.begin);
    put_u64(out, p.end);
    put_u64(out, static_cast<std::uint64_t>(p.kind));
    put_u64(out, p.index);
    put_u64(out, p.name.size());
    out.insert(out.end(), p.name.begin(), p.name.end());
  }
  return out;
}

class Reader {
 public:
  explicit Reader(const std::vector<unsigned char>& in) : in_(in) {}
  std::uint64_t u64() {
    std::uint64_t v = 0;
    if (at_ + sizeof v > in_.size()) {
      bad_ = true;
      return 0;
    }
    std::memcpy(&v, in_.data() + at_, sizeof v);
    at_ += sizeof v;
    return v;
  }
  std::string text(std::uint64_t nbytes) {
    if (nbytes > in_.size() - at_) {
      bad_ = true;
      return "";
    }
    std::string s(reinterpret_cast<const char*>(in_.data() + at_), nbytes);
    at_ += nbytes;
    return s;
  }
  bool bad() const { return bad_; }

 private:
  const std::vector<unsigned char>& in_;
  std::size_t at_ = 0;
  bool bad_ = false;
};

bool deserialize(const std::vector<unsigned char>& in, AddressMap& map) {
  Reader r(in);
  const std::uint64_t nobjects = r.u64();
  for (std::uint64_t k = 0; k < nobjects && !r.bad(); ++k) {
    LoadedObject o;
    o.base = r.u64();
    o.key = r.u64();
    o.name = r.text(r.u64());
    map.objects.push_back(std::move(o));
  }
  const std::uint64_t nintervals = r.u64();
  for (std::uint64_t k = 0; k < nintervals && !r.bad(); ++k) {
    Interval i;
    i.begin = r.u64();
    i.end = r.u64();
    const std::uint64_t kind = r.u64();
    i.object = static_cast<std::uint32_t>(r.u64());
    if (kind > static_cast<std::uint64_t>(Kind::File) ||
        (kind == 0 && i.object >= map.objects.size()))
      return false;
    i.kind = static_cast<Kind>(kind);
    map.intervals.push_back(i);
  }
  const std::uint64_t nplaces = r.u64();
  for (std::uint64_t k = 0; k < nplaces && !r.bad(); ++k) {
    Place p;
    p.begin = r.u64();
    p.end = r.u64();
    const std::uint64_t kind = r.u64();
    p.index = r.u64();
    p.name = r.text(r.u64());
    if (p.end <= p.begin || kind > static_cast<std::uint64_t>(PlaceKind::EnvpArray)) return false;
    p.kind = static_cast<PlaceKind>(kind);
    map.start.push_back(std::move(p));
  }
  if (r.bad()) return false;
  // Sorted and apart, so that the search finds the one place holding an address.
  for (std::size_t k = 1; k < map.start.size(); ++k)
    if (map.start[k].begin < map.start[k - 1].end) return false;
  map.index();
  return true;
}

// ---- Naming a variable (error path only) ------------------------------------------------------

bool read_at(int fd, void* buffer, std::size_t nbytes, std::uint64_t offset) {
  unsigned char* out = static_cast<unsigned char*>(buffer);
  while (nbytes > 0) {
    const ssize_t got = pread(fd, out, nbytes, static_cast<off_t>(offset));
    if (got <= 0) return false;
    out += got;
    nbytes -= static_cast<std::size_t>(got);
    offset += static_cast<std::uint64_t>(got);
  }
  return true;
}

// The symbol of the executable's symbol table (.symtab, else .dynsym) that holds the byte at
// link-time address `address`; false when there is none (a stripped executable).
bool symbol_at(Address address, std::string& name, Address& start) {
  const int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool found = false;
  ElfW(Ehdr) ehdr;
  std::vector<ElfW(Shdr)> sections;
  if (read_at(fd, &ehdr, sizeof ehdr, 0) && std::memcmp(ehdr.e_ident, ELFMAG, SELFMAG) == 0 &&
      ehdr.e_shentsize == sizeof(ElfW(Shdr)) && ehdr.e_shnum > 0 && ehdr.e_shnum < 65280) {
    sections.resize(ehdr.e_shnum);
    if (!read_at(fd, sections.data(), sections.size() * sizeof(ElfW(Shdr)), ehdr.e_shoff))
      sections.clear();
  }
  for (std::uint32_t wanted : {std::uint32_t{SHT_SYMTAB}, std::uint32_t{SHT_DYNSYM}}) {
    for (const ElfW(Shdr) & s : sections) {
      if (found || s.sh_type != wanted || s.sh_link >= sections.size() ||
          s.sh_entsize != sizeof(ElfW(Sym)) || s.sh_size > (std::uint64_t{1} << 31))
        continue;
      const ElfW(Shdr)& strings = sections[s.sh_link];
      if (strings.sh_size > (std::uint64_t{1} << 31)) continue;
      std::vector<ElfW(Sym)> symbols(s.sh_size / sizeof(ElfW(Sym)));
      std::vector<char> names(strings.sh_size + 1, '\0');
      if (!read_at(fd, symbols.data(), symbols.size() * sizeof(ElfW(Sym)), s.sh_offset) ||
          !read_at(fd, names.data(), strings.sh_size, strings.sh_offset))
        continue;
      for (const ElfW(Sym) & sym : symbols) {
        if (ELF64_ST_TYPE(sym.st_info) != STT_OBJECT || sym.st_shndx == SHN_UNDEF ||
            sym.st_name >= strings.sh_size || names[sym.st_name] == '\0')
          continue;
        const Address size = sym.st_size > 0 ? sym.st_size : 1;
        if (address < sym.st_value || address - sym.st_value >= size) continue;
        name = &names[sym.st_name];
        start = sym.st_value;
        found = true;
        break;
      }
    }
  }
  close(fd);
  return found;
}

// "the global variable 'table'" (with the byte within it, if not the first), or its place.
std::string describe_variable(Address address, Address base) {
  const Address link_address = address - base;
  std::string name;
  Address start = 0;
  char text[512];
  if (symbol_at(link_address, name, start)) {
    int status = 0;
    char* demangled = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
    if (status == 0 && demangled != nullptr) name = demangled;
    std::free(demangled);
    if (link_address == start)
      std::snprintf(text, sizeof text, "the global variable '%s'", name.c_str());
    else
      std::snprintf(text, sizeof text, "the global variable '%s' (at byte %lu of it)", name.c_str(),
                    static_cast<unsigned long>(link_address - start));
  } else {
    std::snprintf(text, sizeof text,
                  "the global variable at offset 0x%lx of the executable (address %p; the "
                  "executable has no symbol table to name it)",
                  static_cast<unsigned long>(link_address), reinterpret_cast<void*>(address));
  }
  return text;
}

std::string object_display_name(const std::string& name) {
  if (name.empty()) return "executable";
  const std::size_t slash = name.rfind('/');
  return slash == std::string::npos ? name : name.substr(slash + 1);
}

std::string hex(const std::string& bytes) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

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

// What went wrong with one received pointer (the first one found).
struct Problem {
  bool found = false;
  Address address = 0;  // of the word in this process
  Kind kind = Kind::Heap;
  std::string object;  // Kind::Object: the name of process 0's object
  bool object_loaded = false;
  std::string reason;  // argv and the environment: what went wrong ("" otherwise)
};

// Process 0's pointers, made this process's.
class Translator {
 public:
  Translator(const AddressMap& root, const AddressMap& own) : root_(root), own_(own) {
    std::unordered_map<std::uint64_t, std::size_t> own_by_key;
    for (std::size_t k = 0; k < own.objects.size(); ++k) own_by_key.emplace(own.objects[k].key, k);
    own_index_.resize(root.objects.size(), SIZE_MAX);
    for (std::size_t k = 0; k < root.objects.size(); ++k) {
      auto it = own_by_key.find(root.objects[k].key);
      if (it != own_by_key.end()) own_index_[k] = it->second;
    }
  }

  std::uint64_t word(std::uint64_t root_value, std::uint64_t own_value, Address where) {
    const Interval* i = root_.find(root_value);
    if (i == nullptr) return root_value;
    if (i->kind == Kind::Object) {
      const std::size_t own = own_index_[i->object];
      if (own != SIZE_MAX)
        return own_.objects[own].base + (root_value - root_.objects[i->object].base);
      note(where, Kind::Object, root_.objects[i->object].name);
      return own_value;
    }
    if (const Place* place = start_place(root_value))
      return start_word(*place, root_value, own_value, where);
    if (own_.is_private(own_value)) return own_value;  // it made its own allocation
    note(where, i->kind, "");
    return own_value;
  }

  // One piece of a page: process 0's bytes onto this process's.
  void apply(const unsigned char* from, const Segment& page) {
    unsigned char* to = reinterpret_cast<unsigned char*>(page.begin);
    const std::size_t nbytes = page.end - page.begin;
    std::size_t i = 0;
    for (; i < nbytes && (page.begin + i) % sizeof(std::uint64_t) != 0; ++i) to[i] = from[i];
    for (; i + sizeof(std::uint64_t) <= nbytes; i += sizeof(std::uint64_t)) {
      std::uint64_t root_value, own_value;
      std::memcpy(&root_value, from + i, sizeof root_value);
      std::memcpy(&own_value, to + i, sizeof own_value);
      const std::uint64_t value = word(root_value, own_value, page.begin + i);
      if (value != own_value) std::memcpy(to + i, &value, sizeof value);
    }
    for (; i < nbytes; ++i) to[i] = from[i];
  }

  const Problem& problem() const { return problem_; }

 private:
  // The place of process 0's argv or environment that holds `value` (its end included: one past
  // a string or an array), or nullptr.
  const Place* start_place(Address value) const {
    const std::vector<Place>& places = root_.start;
    auto after = std::upper_bound(places.begin(), places.end(), value,
                                  [](Address v, const Place& p) { return v < p.begin; });
    if (after == places.begin()) return nullptr;
    const Place& candidate = *(after - 1);
    return value <= candidate.end ? &candidate : nullptr;
  }

  // This process's string of environment variable `name` (getenv's), or nullptr.
  const char* own_variable(const std::string& name) {
    if (!own_variables_read_) {
      own_variables_read_ = true;
      for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry)
        own_variables_.emplace(std::string(*entry, name_length(*entry)), *entry);
    }
    auto it = own_variables_.find(name);
    return it != own_variables_.end() ? it->second : nullptr;
  }

  // A pointer `at` bytes into process 0's array of n entries (and its null one), into this
  // process's `array` of `count`.
  bool array_word(std::uint64_t at, char** array, std::size_t count, const char* what,
                  std::uint64_t& value, char* text, std::size_t text_size) {
    if (array != nullptr && at <= (count + 1) * sizeof(char*)) {
      value = reinterpret_cast<Address>(array) + at;
      return true;
    }
    std::snprintf(text, text_size,
                  "points at entry %llu of process 0's %s, past the end of this process's (%zu "
                  "entries)",
                  static_cast<unsigned long long>(at / sizeof(char*)), what, count);
    return false;
  }

  // `root_value`, inside process 0's `place`, made the same place of this process's argv or
  // environment; an error where this process has none such.
  std::uint64_t start_word(const Place& place, Address root_value, std::uint64_t own_value,
                           Address where) {
    const std::uint64_t at = root_value - place.begin;
    const StartArguments& own = g_start;
    std::uint64_t value = own_value;
    char text[600];
    bool mapped = false;
    switch (place.kind) {
      case PlaceKind::Argument:
        if (place.index >= own.argc) {
          std::snprintf(text, sizeof text,
                        "points into process 0's argv[%llu], which this process does not have "
                        "(its argc is %zu; start every process with the same arguments)",
                        static_cast<unsigned long long>(place.index), own.argc);
        } else if (at > own.argv_nbytes[place.index] + 1) {
          std::snprintf(text, sizeof text,
                        "points at byte %llu of process 0's argv[%llu], past the end of this "
                        "process's (%zu bytes; start every process with the same arguments)",
                        static_cast<unsigned long long>(at),
                        static_cast<unsigned long long>(place.index), own.argv_nbytes[place.index]);
        } else {
          value = reinterpret_cast<Address>(own.argv_copy[place.index]) + at;
          mapped = true;
        }
        break;
      case PlaceKind::ArgumentArray:
        mapped = array_word(at, own.argv, own.argc, "argv array", value, text, sizeof text);
        break;
      case PlaceKind::EnvironArray:
        mapped = array_word(at, environ, entry_count(environ), "environ array", value, text,
                            sizeof text);
        break;
      case PlaceKind::EnvpArray:
        mapped = array_word(at, own.envp, own.envc, "original environment array", value, text,
                            sizeof text);
        break;
      case PlaceKind::EnvString: {
        const char* own_text = own_variable(place.name);
        const std::size_t nbytes = own_text != nullptr ? std::strlen(own_text) : 0;
        const std::size_t value_at = place.name.size() + 1;  // past "name="
        if (own_text == nullptr) {
          std::snprintf(text, sizeof text,
                        "points into process 0's environment variable %.200s, which this process "
                        "does not have (set it for every process, or copy its value inside the "
                        "SPMD section)",
                        place.name.c_str());
        } else if (at > nbytes + 1) {
          std::snprintf(text, sizeof text,
                        "points at byte %llu of process 0's value of the environment variable "
                        "%.200s, past the end of this process's value (%zu bytes; give every "
                        "process the same value, or copy it inside the SPMD section)",
                        static_cast<unsigned long long>(at - value_at), place.name.c_str(),
                        nbytes >= value_at ? nbytes - value_at : 0);
        } else {
          value = reinterpret_cast<Address>(own_text) + at;
          mapped = true;
        }
        break;
      }
    }
    if (!mapped) note_reason(where, text);
    return value;
  }

  void note_reason(Address where, const char* reason) {
    if (problem_.found) return;
    problem_.found = true;
    problem_.address = where;
    problem_.reason = reason;
  }

  void note(Address where, Kind kind, const std::string& object) {
    if (problem_.found) return;
    problem_.found = true;
    problem_.address = where;
    problem_.kind = kind;
    problem_.object = object;
    if (kind == Kind::Object)
      for (const LoadedObject& o : own_.objects)
        if (o.name == object) problem_.object_loaded = true;
  }

  const AddressMap& root_;
  const AddressMap& own_;
  std::vector<std::size_t> own_index_;
  Problem problem_;
  bool own_variables_read_ = false;
  std::unordered_map<std::string, const char*> own_variables_;
};

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

std::string object_build_id(const dl_phdr_info& object) {
  return build_id_of(object.dlpi_addr, object.dlpi_phdr, object.dlpi_phnum);
}
std::uint64_t object_layout(const dl_phdr_info& object) {
  return layout_hash(object.dlpi_phdr, object.dlpi_phnum, object_build_id(object));
}
std::string builds_named(const std::string& own_build_id, const std::string& root_build_id,
                         const char* otherwise) {
  const std::string own = hex(own_build_id), root = hex(root_build_id);
  if (own.empty() || root.empty() || own == root) return otherwise;
  return "build-id " + own + " here, " + root + " on process 0";
}

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
