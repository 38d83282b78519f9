/* bsp_get reads the value as it was at the sync before any put of the same superstep:
 * put and get on the same area of the same process in one superstep, to the right
 * neighbour and to itself. */
#include "bsptest.h"

int main(void) {
  test_begin(bsp_nprocs());
  int p = bsp_nprocs(), me = bsp_pid();
  int right = (me + 1) % p, left = (me + p - 1) % p;
  int x = 100 + me, y = 500 + me;
  bsp_push_reg(&x, (int)sizeof x);
  bsp_push_reg(&y, (int)sizeof y);
  bsp_sync();
  for (int round = 0; round < 3; ++round) {
    int old_y = y;
    int new_x = 1000 * (round + 1) + me, new_y = 2000 * (round + 1) + me;
    int got_right = -1, got_self = -1, got_right_after = -1;
    /* Put first, then get: the get still sees the old value. */
    bsp_put(right, &new_x, &x, 0, (int)sizeof new_x);
    bsp_get(right, &x, 0, &got_right, (int)sizeof got_right);
    /* Get first, then put on y of self. */
    bsp_get(me, &y, 0, &got_self, (int)sizeof got_self);
    bsp_put(me, &new_y, &y, 0, (int)sizeof new_y);
    bsp_get(right, &y, 0, &got_right_after, (int)sizeof got_right_after);
    int right_old_x = round == 0 ? 100 + right : 1000 * round + me; /* written last round by me */
    int right_old_y = round == 0 ? 500 + right : 2000 * round + right;
    bsp_sync();
    EXPECT_INT(got_right, right_old_x, "round %d: get of x from process %d after a put to it",
               round, right);
    EXPECT_INT(got_self, old_y, "round %d: get of y from itself before a put to it", round);
    EXPECT_INT(got_right_after, right_old_y, "round %d: get of y from process %d", round, right);
    EXPECT_INT(x, 1000 * (round + 1) + left, "round %d: x after the sync (put by process %d)",
               round, left);
    EXPECT_INT(y, new_y, "round %d: y after the sync (put by itself)", round);
  }
  bsp_pop_reg(&y);
  bsp_pop_reg(&x);
  bsp_sync();
  test_end();
  printf("PASS drma_get_before_put\n");
  return 0;
}
