// mcbsp.cpp - the library side of MulticoreBSP for C's headers (mcbsp.h, mcbsp-affinity.h):
// bsp_init_with_user_data, the messages of mcbsp.h's argument conversions, and the affinity
// settings, which are hints bspg accepts and ignores.
#include <climits>
#include <cstddef>

#include "bsp.h"
#include "errors.hpp"
#include "mcbsp-affinity.h"
// The declarations with bsp.h's int calls, not the size_t forms programs get.
#define MCBSP_COMPATIBILITY_MODE
#include "mcbsp.h"
#include "runtime.hpp"
#include "section.hpp"

using bspg::fail;

namespace {

// bsp_init_with_user_data's function and this process's pointer for it.
void (*user_spmd)(void*) = nullptr;
void* user_data = nullptr;

void run_user_spmd() { user_spmd(user_data); }

mcbsp_affinity_mode affinity_mode = SCATTER;

}  // namespace

#pragma GCC visibility push(default)
extern "C" {

void bsp_init_with_user_data(void (*spmd)(void*), int argc, char** argv, void* data) {
  const char* call = "bsp_init_with_user_data";
  if (bspg::g_phase == bspg::Phase::Inside) fail(call, "called inside an SPMD section");
  if (spmd == nullptr) {
    (void)bsp_nprocs();  // starts MPI where it is not running, so that process 0 speaks for all
    fail(call, "the SPMD function is NULL");
  }
  // The other processes run the first call's function with their own data: they cannot see the
  // data of a later call of this process.
  if (user_spmd != nullptr)
    fail(call,
         "called a second time: a later SPMD section cannot carry this process's data to the "
         "others (bspg starts one SPMD section with user data per program)");
  user_spmd = spmd;
  user_data = data;
  bspg::section::let_others_run_main();  // each process passes its own data, from its own main
  bsp_init(run_user_spmd, argc, argv);
}

void bspg_mcbsp_name_section(void (*section)(void)) {
  bspg::section::let_others_run_main();
  bsp_init(section, 0, nullptr);
}

void bspg_mcbsp_too_large(const char* call, const char* what, size_t value) {
  fail(call, "%s %zu exceeds bspg's limit of %d bytes", what, value, INT_MAX);
}

void bspg_mcbsp_pid_out_of_range(const char* call, unsigned int pid) {
  fail(call, "pid %u is out of range 0..%d", pid, bsp_nprocs() - 1);
}

void mcbsp_set_maximum_threads(const size_t /*max*/) {}
void mcbsp_set_affinity_mode(const mcbsp_affinity_mode mode) { affinity_mode = mode; }
void mcbsp_set_available_cores(const size_t /*num_cores*/) {}
void mcbsp_set_threads_per_core(const size_t /*threads_per_core*/) {}
void mcbsp_set_thread_numbering(const mcbsp_thread_numbering /*numbering*/) {}
void mcbsp_set_pinning(const size_t* const /*pinning*/, const size_t /*length*/) {}
void mcbsp_set_reserved_cores(const size_t* const /*reserved*/, const size_t /*length*/) {}

size_t mcbsp_get_maximum_threads(void) { return static_cast<size_t>(bsp_nprocs()); }
mcbsp_affinity_mode mcbsp_get_affinity_mode(void) { return affinity_mode; }
size_t mcbsp_get_available_cores(void) { return static_cast<size_t>(bsp_nprocs()); }
size_t mcbsp_get_threads_per_core(void) { return 1; }
mcbsp_thread_numbering mcbsp_get_thread_numbering(void) { return CONSECUTIVE; }
size_t* mcbsp_get_pinning(void) { return nullptr; }
size_t mcbsp_get_reserved_cores_number(void) { return 0; }
size_t* mcbsp_get_reserved_cores(void) { return nullptr; }

}  // extern "C"
#pragma GCC visibility pop
