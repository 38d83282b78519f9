// spmd_part.hpp - the SPMD part bsp_init named: which one (the last named is the one later
// sections run), whether one was named since the last section ended, and whether the other
// processes run main up to it instead (MulticoreBSP's C++ begin, bsp_init_with_user_data).
#pragma once

namespace bspg {

// bsp_init named this SPMD part (so did a waiting process for the part process 0 sent).
void name_spmd_part(void (*part)(void));

// The SPMD part named last (nullptr: none).
void (*current_spmd_part())(void);

// Whether a part was named since the last section ended (bsp_nprocs() after bsp_end is that
// section's P until then), and the end of a section, which starts that anew.
bool part_named_since_last_section();
void forget_part_named_since_last_section();

// MulticoreBSP's C++ begin and bsp_init_with_user_data: every process runs main up to there (the
// part needs what main builds on each process), so the others run main for the first section,
// and processes a master spawns for a later one run main too (not the part named).
void let_others_run_main();
bool others_run_main();

// After a recovery in place: none named, as in a process just started.
void forget_spmd_parts();

}  // namespace bspg
