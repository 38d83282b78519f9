// spmd_part.cpp - the SPMD part bsp_init named, and how the others reach it.
#include "spmd_part.hpp"

namespace bspg {
namespace {

void (*spmd_part)(void) = nullptr;  // the SPMD part bsp_init named last
bool named_since_section = false;   // an SPMD part was named since the last section ended
bool others_run_main_flag = false;  // the others run main up to the part (MulticoreBSP's C++)

}  // namespace

void name_spmd_part(void (*part)(void)) {
  spmd_part = part;
  named_since_section = true;
}

void (*current_spmd_part())(void) { return spmd_part; }

bool part_named_since_last_section() { return named_since_section; }

void forget_part_named_since_last_section() { named_since_section = false; }

void let_others_run_main() { others_run_main_flag = true; }

bool others_run_main() { return others_run_main_flag; }

void forget_spmd_parts() {
  spmd_part = nullptr;
  named_since_section = false;
  others_run_main_flag = false;
}

}  // namespace bspg
