/* A process that waits at bsp_sync for a late peer does not keep a core busy: process 0 arrives
 * 1 s late (asleep), the others measure the CPU time they spend in that bsp_sync. A waiting loop
 * that spins uses 50-100% of a core; bspg's must use well under 25% (it sleeps between polls;
 * about 2% on an idle machine, see bspscale (e)). The same for a group sync and for bsp_end. */
#include <bspg.h>
#include <time.h>

#include "bsptest.h"

static double cpu_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double wall_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Process 0 sleeps, everybody calls wait; returns this process's CPU share of the wait. */
static double share_while_waiting(void (*wait)(void)) {
  double wall = wall_now(), cpu = cpu_now();
  if (bsp_pid() == 0) {
    struct timespec second = {1, 0};
    nanosleep(&second, NULL);
  }
  wait();
  return (cpu_now() - cpu) / (wall_now() - wall);
}

static void world_sync(void) { bsp_sync(); }
static void group_sync(void) { bspg_group_sync(bspg_subjob_group()); }

int main(void) {
  test_begin(bsp_nprocs());
  int me = bsp_pid();
  bsp_sync();
  double in_sync = share_while_waiting(world_sync);
  double in_group = share_while_waiting(group_sync);
  if (me != 0) {
    EXPECT(in_sync < 0.25, "waiting 1 s in bsp_sync used %.0f%% of a core", 100 * in_sync);
    EXPECT(in_group < 0.25, "waiting 1 s in bspg_group_sync used %.0f%% of a core", 100 * in_group);
  }
  bsp_sync();
  test_end();
  printf("PASS sync_idle_wait\n");
  return 0;
}
