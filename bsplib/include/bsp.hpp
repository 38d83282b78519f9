// bsp.hpp - MulticoreBSP for C 2.x's C++ header, over bspg: the calls with MulticoreBSP's
// unsigned and size_t types (mcbsp.h, which also accepts the standard's int pointers from C++),
// the affinity interface (mcbsp-affinity.h: hints, accepted and ignored) and the class
// mcbsp::BSP_program (mcbsp.hpp, which says how begin(P) runs spmd() on every process).
//
// MulticoreBSP 2.x's bsp.h defines bsp_pid_t and bsp_nprocs_t as unsigned int and bsp_size_t as
// size_t; bspg's bsp.h defines all three as int (the standard's type). Variables of either kind
// work with the calls; a comparison of bsp_size_t with SIZE_MAX (an empty queue) still holds, since
// the -1 that bspg stores there converts to SIZE_MAX.
//
// Not provided: mcbsp-resiliency.h (MulticoreBSP's automatic checkpoints; bspg's are bspg.h's
// bspg_checkpoint and bspg_persist) and mcbsp-templates.hpp.
#ifndef BSPG_BSP_HPP
#define BSPG_BSP_HPP

#include "mcbsp-affinity.h"
#include "mcbsp.hpp"

#endif  // BSPG_BSP_HPP
