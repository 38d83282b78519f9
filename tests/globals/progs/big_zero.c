/* big_zero - an 80 MiB static array, zero but for two elements that main's sequential part
 * sets on process 0 (after bsp_init). Every process checks both elements and that the rest it
 * samples is zero; bsp_begin must not send the 80 MiB. With "time", every process prints how
 * long its bsp_begin took: "pid s: bsp_begin X s".
 * Usage: big_zero [time]. Process 0 prints "PASS big_zero" after bsp_end. */
#include <string.h>
#include <time.h>

#include "check.h"

#define BIG_COUNT (10 * 1024 * 1024) /* doubles: 80 MiB */

static double big[BIG_COUNT];
static int print_time = 0;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void spmd(void) {
  const double start = now();
  bsp_begin(bsp_nprocs());
  const double took = now() - start;
  const int s = bsp_pid();
  CHECK("big_zero", big[BIG_COUNT / 2] == 2.5, "big[%d] = %g", BIG_COUNT / 2, big[BIG_COUNT / 2]);
  CHECK("big_zero", big[BIG_COUNT - 1] == 7.0, "big[%d] = %g", BIG_COUNT - 1, big[BIG_COUNT - 1]);
  for (int i = 0; i < BIG_COUNT; i += 4099)
    if (i != BIG_COUNT / 2) CHECK("big_zero", big[i] == 0.0, "big[%d] = %g", i, big[i]);
  if (print_time) printf("pid %d: bsp_begin %.4f s\n", s, took);
  bsp_end();
}

int main(int argc, char **argv) {
  bsp_init(spmd, argc, argv);
  print_time = argc > 1 && strcmp(argv[1], "time") == 0;
  big[BIG_COUNT / 2] = 2.5;
  big[BIG_COUNT - 1] = 7.0;
  spmd();
  printf("PASS big_zero\n");
  return 0;
}
