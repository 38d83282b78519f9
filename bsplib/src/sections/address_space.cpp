// address_space.cpp - a process's loaded objects (ELF segments), private memory, data to share.
#include <elf.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include "elf_dynamic.hpp"
#include "globals.hpp"
#include "globals_internal.hpp"

namespace bspg::globals_internal {
namespace {

constexpr std::size_t kPageBytes = 4096;

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
#error "address_space.cpp: name this architecture's copy relocation"
#endif

std::uint64_t hash_bytes(std::uint64_t h, const void* data, std::size_t nbytes) {
  const unsigned char* bytes = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < nbytes; ++i) h = mix(h, bytes[i]);
  return h;
}

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

}  // namespace

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

}  // namespace bspg::globals_internal

namespace bspg {
using namespace globals_internal;  // the globals files' shared parts (globals_internal.hpp)

std::string object_build_id(const dl_phdr_info& object) {
  return build_id_of(object.dlpi_addr, object.dlpi_phdr, object.dlpi_phnum);
}
std::uint64_t object_layout(const dl_phdr_info& object) {
  return layout_hash(object.dlpi_phdr, object.dlpi_phnum, object_build_id(object));
}

}  // namespace bspg
