// section.hpp - the start and end of SPMD sections, as the API layer sees them: who runs main,
// who runs which SPMD part, who takes part in each section, and what a process does after it.
// One call per BSPlib call that starts or ends something; section.cpp holds the rule behind them.
#pragma once

#include "start_message.hpp"

namespace bspg::section {

// The hook the API layer sets before main (it owns the Runtime): ends the SPMD section of an SPMD
// part that returned without bsp_end, as bsp_end would, with a line that says so. The processes
// that run SPMD parts only are called from here, so their parts return here.
void set_end_section_hook(void (*end_section)());
// The API layer's other hook: forgets the section in progress when a recovery in place (bsprun
// --spares) abandons it, without ending it.
void set_forget_section_hook(void (*forget)());
// With BSPG_TRACE_RECOVERY set: one line "bspg trace: role R: WHAT at T" on stderr (in_place.hpp).
void trace_recovery(const char* what);

// Starts MPI unless someone already has (bspg then owns it and finalizes it). A call that may
// report an error before bsp_begin starts it first, so that process 0 speaks for all.
void start_mpi();

// bsp_init(part): names the SPMD part. On a process that runs SPMD parts only (every process but
// 0 of a program that starts MPI itself, every process a master spawned) the first call runs the
// part at once, and later sections' parts after it, and never returns. Fails after a section
// where no later one can follow (the program started MPI itself).
void init(void (*part)(void));

// MulticoreBSP's C++ begin and bsp_init_with_user_data, before init: the others run main up to
// their SPMD part too (it needs what main builds on each process).
void let_others_run_main();

// bsp_begin(maxprocs): starts MPI where needed and returns who takes part (under bsp_init only
// process 0's maxprocs counts), once the sequential part's globals reached every process in it;
// comm is the caller's. A process this section does not need waits for a later one (never
// returns) or ends where bspg owns MPI; else its comm is null and it goes on as after bsp_end.
// Fails where a later section cannot start (its part needs bsp_init, and MPI started by bspg).
Membership begin(int maxprocs);

// After the section's Runtime is gone (bsp_end, or a section ended at exit or by its part's
// return): leaves the section, and finalizes MPI where no later section can follow.
void leave();

// bsp_end's last step on the process with pid `pid`: process 0 returns to main; another waits for
// a later section (never returns), or ends where bspg owns MPI, or returns where it does not.
void after_bsp_end(int pid);

// bsp_nprocs() outside a section: after one, its processes until bsp_init names the next part;
// else those started, or in master mode those available.
int nprocs();

// Nested runs (MulticoreBSP 2's hierarchical BSP), inside a section. init_nested: bsp_init named
// the part the next nested bsp_begin's other processes run; until that bsp_begin, bsp_nprocs()
// is nested_available(), the processors of this machine. begin_nested: bsp_begin(maxprocs) spawns
// maxprocs-1 processes for a run of this process's own, whose pid 0 it is (fails in one line where
// the MPI cannot spawn); the outer section's state waits for leave(), after the nested run's
// Runtime is gone, which brings it back.
void init_nested(void (*part)(void));
bool nested_part_named();
int nested_available();
Membership begin_nested(int maxprocs);
// Whether this process's current run is a nested one (on any of its processes).
bool in_nested_run();

// Before main (startup.cpp): returns where this process runs main; the others run SPMD parts
// only, and end when process 0 ends.
void before_main();

}  // namespace bspg::section
