/* bsp_time: >= 0, never decreases, and tracks wall-clock time. */
#include <time.h>

#include "bsptest.h"

static double wall_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(void) {
  test_begin(bsp_nprocs());
  double t0 = bsp_time();
  EXPECT(t0 >= 0.0, "bsp_time() = %g is negative", t0);
  EXPECT(t0 < 60.0, "bsp_time() = %g seconds right after bsp_begin", t0);

  double last = t0;
  for (int i = 0; i < 100000; ++i) {
    double t = bsp_time();
    EXPECT(t >= last, "bsp_time() went back from %.9f to %.9f", last, t);
    last = t;
  }

  /* Sleep 0.2 s of wall-clock time: bsp_time must advance by about that much. */
  double w0 = wall_seconds(), b0 = bsp_time();
  struct timespec nap = {0, 200000000L};
  nanosleep(&nap, NULL);
  double w1 = wall_seconds(), b1 = bsp_time();
  double wall = w1 - w0, bsp = b1 - b0;
  EXPECT(bsp > 0.0, "bsp_time() did not increase over a 0.2 s sleep (%.9f -> %.9f)", b0, b1);
  EXPECT(bsp > 0.5 * wall && bsp < 2.0 * wall + 0.01,
         "bsp_time() advanced %.6f s while the wall clock advanced %.6f s", bsp, wall);

  bsp_sync();
  double t2 = bsp_time();
  EXPECT(t2 >= b1, "bsp_time() went back across bsp_sync (%.9f -> %.9f)", b1, t2);
  test_end();
  printf("PASS spmd_time\n");
  return 0;
}
