/* abort_deep - bsp_abort called from deep inside a computation on one process, with a
 * formatted message, while the other processes are either waiting in bsp_sync ("sync") or
 * busy computing without communicating ("busy", for up to BUSY_SECONDS). The job must stop
 * with a non-zero exit status, print the message exactly once, and never get to "PASS" or,
 * for the busy processes, to the "FAIL" line that says they were not stopped.
 *
 * Usage: abort_deep sync|busy
 * The aborting process is p/2; it aborts in the third superstep, with puts and messages of
 * that superstep still pending. */
#include <string.h>

#include "check.h"

#define DEPTH 40
#define BUSY_SECONDS 20.0

static double pivot_of(int level) { return level < DEPTH ? 1.0 / (level + 1) : -0.125; }

/* A recursive "factorisation" that finds a bad pivot at the bottom (bsp_abort does not return;
 * the depth guard only keeps the recursion finite for the compiler). */
static double eliminate(int level, const char *matrix_name, double accumulated) {
  if (level > 2 * DEPTH) return accumulated;
  double pivot = pivot_of(level);
  if (pivot < 0.0)
    bsp_abort("abort_deep: process %d: negative pivot %.3f at depth %d of matrix '%s' (sum %.2f)\n",
              bsp_pid(), pivot, level, matrix_name, accumulated);
  return eliminate(level + 1, matrix_name, accumulated + pivot);
}

int main(int argc, char **argv) {
  bsp_begin(bsp_nprocs());
  check_program = "abort_deep";
  int p = bsp_nprocs(), s = bsp_pid();
  int busy = argc > 1 && strcmp(argv[1], "busy") == 0;
  int victim = p / 2;

  long inbox[4] = {0, 0, 0, 0};
  bsp_push_reg(inbox, (int)sizeof inbox);
  bsp_sync();
  for (int step = 0; step < 3; step++) {
    long value = 100L * step + s;
    bsp_put((s + 1) % p, &value, inbox, step * (int)sizeof(long), (int)sizeof(long));
    bsp_send((s + p - 1) % p, NULL, &value, (int)sizeof value);
    if (step == 2 && s == victim) {
      double result = eliminate(0, "west-grid", 0.0);
      printf("FAIL: abort_deep: process %d: bsp_abort returned (%g)\n", s, result);
      return 1;
    }
    if (step == 2 && busy) {
      /* Compute without communicating: the abort has to reach this process anyway. */
      double start = bsp_time(), sink = 0.0;
      while (bsp_time() - start < BUSY_SECONDS)
        for (int i = 0; i < 100000; i++) sink += 1e-9 * i;
      printf("FAIL: abort_deep: process %d was not stopped by bsp_abort within %.0f s (%g)\n", s,
             BUSY_SECONDS, sink);
      fflush(stdout);
    }
    bsp_sync();
    CHECK_LONG(inbox[step], 100L * step + (s + p - 1) % p, "inbox[%d]", step);
  }
  bsp_pop_reg(inbox);
  bsp_sync();
  bsp_end();
  printf("PASS abort_deep\n");
  return 0;
}
