// mpi_state.cpp - who starts MPI: whether the program imports MPI_Init (its dynamic symbols say,
// before main), and whether bspg started it.
#include "mpi_state.hpp"

#include <elf.h>
#include <link.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "elf_dynamic.hpp"
#include "runtime.hpp"

namespace bspg {
namespace {

bool owns_mpi = false;  // bspg called MPI_Init (so the program's end finalizes it)

struct ImportSearch {
  const char* const* names;
  bool found = false;
};

// The main program (dl_iterate_phdr's first object): whether one of its undefined dynamic
// symbols has one of the names. Undefined symbols stand before GNU_HASH's first hashed one.
int search_imports(dl_phdr_info* info, std::size_t /*size*/, void* data) {
  auto* search = static_cast<ImportSearch*>(data);
  const ElfW(Dyn)* dynamic = nullptr;
  for (int i = 0; i < info->dlpi_phnum; ++i)
    if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
      dynamic = reinterpret_cast<const ElfW(Dyn)*>(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
  if (dynamic == nullptr) return 1;
  const ElfW(Sym)* symbols = nullptr;
  const char* strings = nullptr;
  std::size_t string_bytes = 0, count = 0;
  for (const ElfW(Dyn)* d = dynamic; d->d_tag != DT_NULL; ++d) {
    const std::uintptr_t at = dynamic_address(info->dlpi_addr, d->d_un.d_ptr);
    switch (d->d_tag) {
      case DT_SYMTAB:
        symbols = reinterpret_cast<const ElfW(Sym)*>(at);
        break;
      case DT_STRTAB:
        strings = reinterpret_cast<const char*>(at);
        break;
      case DT_STRSZ:
        string_bytes = d->d_un.d_val;
        break;
      case DT_HASH:
        count = reinterpret_cast<const std::uint32_t*>(at)[1];  // nchain: every symbol
        break;
      case DT_GNU_HASH:
        if (count == 0) count = reinterpret_cast<const std::uint32_t*>(at)[1];  // symoffset
        break;
      default:
        break;
    }
  }
  if (symbols == nullptr || strings == nullptr) return 1;
  for (std::size_t i = 1; i < count; ++i) {
    const ElfW(Sym)& symbol = symbols[i];
    if (symbol.st_shndx != SHN_UNDEF || symbol.st_name >= string_bytes) continue;
    for (const char* const* name = search->names; *name != nullptr; ++name)
      if (std::strcmp(strings + symbol.st_name, *name) == 0) search->found = true;
  }
  return 1;  // the main program only
}

}  // namespace

bool program_starts_mpi_itself() {
  static const char* const names[] = {"MPI_Init", "MPI_Init_thread", "PMPI_Init",
                                      "PMPI_Init_thread", nullptr};
  static const int found = [] {
    ImportSearch search{names};
    dl_iterate_phdr(search_imports, &search);
    return search.found ? 1 : 0;
  }();
  return found == 1;
}

bool start_mpi_as_owner() {
  if (!ensure_mpi()) return false;
  owns_mpi = true;
  return true;
}

bool bspg_owns_mpi() { return owns_mpi; }

}  // namespace bspg
