// startup.cpp - who runs main. bspg takes the C library's start-up (__libc_start_main) of every
// program linked with it, so that the processes other than 0 stop after the program's static
// constructors have run and before main (the rule's section::before_main decides): in a program
// that calls bsp_init, main's sequential part then runs once, on process 0, as MulticoreBSP's
// threads behave. A library constructor would be too early: the program's own C++ globals are not
// built yet.
#include <dlfcn.h>
#include <setjmp.h>

#include <cstdio>
#include <cstdlib>

#include "in_place.hpp"
#include "section.hpp"

namespace bspg {
namespace {

using MainFunction = int (*)(int, char**, char**);
using StartFunction = int (*)(MainFunction, int, char**, void (*)(), void (*)(), void (*)(), void*);

MainFunction program_main = nullptr;

int main_after_start_up(int argc, char** argv, char** envp) {
  in_place::prepare();  // with spares: the globals as they are now, for a recovery in place
  // A recovery in place comes back here, MPI running, and starts again as a fresh process would.
  setjmp(in_place::recovery_point());
  section::before_main();  // returns only where this process runs main
  return program_main(argc, argv, envp);
}

}  // namespace
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
