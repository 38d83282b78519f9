// variable_names.cpp - names for the messages: a variable by its symbol, an object, memory, builds.
#include <cxxabi.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "globals.hpp"
#include "globals_internal.hpp"

namespace bspg::globals_internal {

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

namespace {

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

}  // namespace

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

namespace {

std::string hex(const std::string& bytes) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

}  // namespace
}  // namespace bspg::globals_internal

namespace bspg {
using namespace globals_internal;  // the globals files' shared parts (globals_internal.hpp)

std::string builds_named(const std::string& own_build_id, const std::string& root_build_id,
                         const char* otherwise) {
  const std::string own = hex(own_build_id), root = hex(root_build_id);
  if (own.empty() || root.empty() || own == root) return otherwise;
  return "build-id " + own + " here, " + root + " on process 0";
}

}  // namespace bspg
