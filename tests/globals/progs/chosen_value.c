/* chosen_value - one global variable that main's sequential part sets on process 0 only (after
 * bsp_init). Every process prints the value it sees at the start of the SPMD function:
 * "pid s: chosen 42" where process 0's value reached it, "pid s: chosen -1" where it kept its
 * own (BSPG_SHARE_GLOBALS=0). Process 0 prints "PASS chosen_value" after bsp_end.
 * Built three times (CHOSEN_VARIANT 1, 2 and 3) into different executables, for starts that mix
 * them (3: the SPMD part at another offset). */
#include "check.h"

#ifndef CHOSEN_VARIANT
#define CHOSEN_VARIANT 1
#endif

static int chosen = -1;
#if CHOSEN_VARIANT == 2
static volatile double another[600]; /* another layout: more data, other code */
#endif

#if CHOSEN_VARIANT == 3
/* The SPMD part at another offset than in variants 1 and 2. */
#define PART_PLACE __attribute__((aligned(4096)))
#else
#define PART_PLACE
#endif

PART_PLACE static void spmd(void) {
  bsp_begin(bsp_nprocs());
  printf("pid %d: chosen %d\n", bsp_pid(), chosen);
#if CHOSEN_VARIANT == 2
  another[bsp_pid()] = chosen;
#endif
  bsp_end();
}

int main(int argc, char **argv) {
  bsp_init(spmd, argc, argv);
  chosen = 42;
  spmd();
  printf("PASS chosen_value\n");
  return 0;
}
