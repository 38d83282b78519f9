/* fails_after.c - a BSP program that ends badly after known supersteps, for the profiler's tests.
 *
 *   fails_after HOW STEPS COMPUTE_S
 *
 * Every process ends STEPS supersteps (each puts 8 bytes to its right neighbour), then the last
 * process computes COMPUTE_S seconds and ends as HOW says: segv (a write through a null
 * pointer), abort (bsp_abort), exit3 (exit(3) inside the SPMD section). The others wait in the
 * next sync (HOW ending with "-computing": they compute for 60 s instead, and are stopped). */
#include <bsp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compute_for.h"

static char slot[8];

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: fails_after segv|abort|exit3[-computing] STEPS COMPUTE_S\n");
    return 2;
  }
  const char* how = argv[1];
  const int steps = atoi(argv[2]);
  const double compute_s = atof(argv[3]);
  const int others_compute = strstr(how, "-computing") != NULL;
  bsp_begin(bsp_nprocs());
  const int p = bsp_nprocs(), s = bsp_pid();
  bsp_push_reg(slot, sizeof slot);
  bsp_sync();
  for (int i = 1; i < steps; ++i) {
    bsp_put((s + 1) % p, &i, slot, 0, sizeof i);
    bsp_sync();
  }
  if (s == p - 1) {
    compute_for(compute_s);
    if (strncmp(how, "segv", 4) == 0) {
      volatile int* nowhere = NULL;
      *nowhere = 1;
    } else if (strncmp(how, "abort", 5) == 0) {
      bsp_abort("fails_after: giving up after %d supersteps\n", steps);
    } else if (strncmp(how, "exit3", 5) == 0) {
      exit(3);
    }
  } else if (others_compute) {
    compute_for(60);
  }
  bsp_sync();
  bsp_end();
  return 0;
}
