// startup.cpp - who runs main. bspg takes the C library's start-up (__libc_start_main) of every
// program linked with it, so that the processes other than 0 stop after the program's static
// constructors have run and before main (job.cpp decides, before_main): in a program that calls
// bsp_init, main's sequential part then runs once, on process 0, as MulticoreBSP's threads behave.
// A library constructor would be too early: the program's own C++ globals are not built yet.
#include <dlfcn.h>
#include <elf.h>
#include <link.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "elf_dynamic.hpp"
#include "job.hpp"

namespace bspg {
namespace {

using MainFunction = int (*)(int, char**, char**);
using StartFunction = int (*)(MainFunction, int, char**, void (*)(), void (*)(), void (*)(), void*);

MainFunction program_main = nullptr;

int main_after_start_up(int argc, char** argv, char** envp) {
  before_main();  // returns only where this process runs main
  return program_main(argc, argv, envp);
}

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

}  // namespace bspg

// The C library's start-up, taken: the real one runs with main replaced by main_after_start_up.
// (An unversioned definition here satisfies the program's versioned reference to glibc's.)
extern "C" __attribute__((visibility("default"))) int __libc_start_main(
    bspg::MainFunction main, int argc, char** argv, void (*init)(), void (*fini)(),
    void (*rtld_fini)(), void* stack_end) {
  auto real = reinterpret_cast<bspg::StartFunction>(dlsym(RTLD_NEXT, "__libc_start_main"));
  if (real == nullptr) {
    std::fprintf(stderr, "bspg: cannot find the C library's start-up (__libc_start_main): %s\n",
                 dlerror());
    std::_Exit(127);
  }
  bspg::program_main = main;
  return real(bspg::main_after_start_up, argc, argv, init, fini, rtld_fini, stack_end);
}
