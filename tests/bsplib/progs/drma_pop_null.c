/* Processes with even pids have no arrays: they register NULL (size 0) for both x and y, while
 * odd ones register real arrays. Popping in the order of registration (x first) is no
 * disagreement: a process that pops NULL pops the registration the others pop, even though its
 * most recent NULL registration is y's. Afterwards y still works: an even process puts through
 * NULL into y of the odd one after it, and x is untouched. Then both pops in one superstep, x
 * first. */
#include "bsptest.h"

static int has_arrays(int pid) { return pid % 2 == 1; }

int main(void) {
  test_begin(bsp_nprocs());
  int p = bsp_nprocs(), me = bsp_pid();
  int x[2] = {-1, -1}, y[2] = {-1, -1};
  for (int round = 0; round < 2; ++round) {
    int together = round == 1;
    bsp_push_reg(has_arrays(me) ? x : NULL, has_arrays(me) ? (int)sizeof x : 0);
    bsp_push_reg(has_arrays(me) ? y : NULL, has_arrays(me) ? (int)sizeof y : 0);
    bsp_sync();
    bsp_pop_reg(has_arrays(me) ? x : NULL);
    if (together) bsp_pop_reg(has_arrays(me) ? y : NULL);
    bsp_sync();
    if (together) continue;
    /* Only y is left: each even process puts through NULL into y of the odd process after it. */
    int value = 100 + me;
    if (!has_arrays(me) && me + 1 < p) bsp_put(me + 1, &value, NULL, 0, (int)sizeof value);
    bsp_sync();
    if (has_arrays(me)) {
      EXPECT_INT(y[0], 100 + me - 1, "y[0] put by process %d through NULL", me - 1);
      EXPECT_INT(x[0], -1, "x[0]: x was popped and must not be written");
    }
    bsp_pop_reg(has_arrays(me) ? y : NULL);
    bsp_sync();
  }
  test_end();
  printf("PASS drma_pop_null\n");
  return 0;
}
