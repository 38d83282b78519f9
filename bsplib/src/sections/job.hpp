// job.hpp - how the processes of a run come together at bsp_begin and part at bsp_end, or when
// the program ends before bsp_begin. Either all processes are started at once (mpirun -np N,
// bsprun -p N) and process 0 tells the others at bsp_begin how many take part, or bsprun
// started the master alone and its bsp_begin spawns the others (master.hpp).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>

namespace bspg {

struct Membership {
  MPI_Comm comm;  // MPI_COMM_NULL: this process is not needed (bsp_begin asked for fewer)
  int pid;
  int nprocs;  // processes in the SPMD section
};

// bsp_begin(maxprocs): who takes part; comm (when not null) is owned by the caller. Under
// bsp_init only process 0's maxprocs counts. The others learn here if process 0 ended the
// program instead, and end as well, with status 0.
Membership join_job(int maxprocs);

// bsp_end, after the superstep engine has freed its communicators.
void leave_job();

// Before main (startup.cpp): returns where this process runs main. Under a starter every process
// starts MPI here; the others than process 0 wait for process 0's first bsp_begin: where bsp_init
// named the SPMD part, they run only that part (and later ones), never main, and end when process
// 0 ends; where bsp_begin came without bsp_init, they run main too. A program that starts MPI
// itself, or a plain run without a starter, runs main everywhere at once, as written.
void before_main();

// Whether the executable calls MPI_Init or MPI_Init_thread itself (startup.cpp).
bool program_starts_mpi_itself();

// Starts MPI unless someone already has; bspg then owns it (and finalizes it at the program's end).
void start_mpi();
bool bspg_owns_mpi();

// A process that runs SPMD parts only: runs `part` (named, as bsp_init would), then waits between
// sections for more until process 0 ends. Never returns.
[[noreturn]] void run_spmd_part_only(void (*part)(void));

// Whether bsp_init named an SPMD part since the last section ended (bsp_nprocs() after bsp_end
// is that section's P until then).
bool part_named_since_last_section();

// bsp_nprocs() before bsp_begin: the processes started, or in master mode those available.
int processes_available();

// bsp_init named this SPMD part (the last one named is the one later sections run).
void name_spmd_part(void (*part)(void));

// Whether this process (process 0, or a master) may start another SPMD section after bsp_end:
// bspg owns MPI, which then stays initialised until the program ends (the later section's part
// must be named with bsp_init).
bool later_sections_possible();

// Whether this process, at bsp_end (or not needed at bsp_begin), waits for a later section
// instead of ending: a process other than 0 of a run started all at once (where bspg owns MPI),
// or one a master spawned to run a part that bsp_init named.
bool parks_between_sections();

// bsp_end of such a process: wait for the next section and run its SPMD part; ends the process
// when process 0 ends the program. Never returns.
[[noreturn]] void wait_for_next_section();

// Provided by the API layer: ends the SPMD section of an SPMD part that returned without
// bsp_end, as bsp_end would, with a line that says so.
void end_section_after_return();

// bsp_init of a process that runs the SPMD part at once: the part to run (a process a master
// spawned for a later section runs the part the master names, not the first one main names).
void (*spmd_part_to_run(void (*named)(void)))(void);

// MulticoreBSP's C++ begin and bsp_init_with_user_data: every process runs main up to there (the
// part needs what main builds on each process), so the others run main for the first section,
// and processes a master spawns for a later one run main too (not the part named).
void let_others_run_main();
bool others_run_main();

// The SPMD part bsp_init named last (nullptr: none).
void (*current_spmd_part())(void);

// Where an SPMD part is, the same in every process of one executable: the loaded object that
// holds it (its place in the list of loaded objects) and its offset from that object's base.
// The object's build (object_layout, object_build_id) goes with it: another executable's code at
// that offset is not the part.
struct PartLocation {
  int object = -1;
  std::uint64_t offset = 0;
  std::uint64_t layout = 0;
  std::uint32_t build_id_nbytes = 0;
  unsigned char build_id[32] = {};
};

// Where `part` is (object -1 where it is not code of a loaded object).
PartLocation locate(void (*part)(void));

// What process 0 tells the others at bsp_begin, or at the program's end.
enum StartKind : int { kBegin = 1, kEnd = 2 };
struct StartMessage {
  int kind;
  int value;          // kBegin: the processes process 0 asked for
  PartLocation part;  // kBegin: the SPMD part bsp_init named last on process 0
};

// Collective over comm: rank 0's message reaches the others, who wait idly for it.
StartMessage exchange_start_message(MPI_Comm comm, StartMessage mine);

// bsp_init: whether this process runs the SPMD part at once (every process but 0, and every
// process spawned in master mode) instead of returning to main.
bool runs_spmd_part_at_once();

// Once bspg has initialised MPI: a process spawned in master mode reports and stops through the
// master; a program that ends before bsp_begin (a usage message and exit(0), say) ends with its
// own status and without Open MPI's complaint that a process did not finalize.
void mpi_started_by_bspg();

}  // namespace bspg
