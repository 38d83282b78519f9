/* bsp_direct_get reads remote registered memory at once and returns with the data: values the
 * neighbours wrote before the last sync, from the right, the left and itself, at an offset, and
 * 1 MiB from the left; process 0 reads from every process while they already wait in bsp_sync. */
#include "bsptest.h"

#define BIGWORDS (1 << 18) /* 1 MiB */

int main(void) {
  test_begin(bsp_nprocs());
  int p = bsp_nprocs(), me = bsp_pid();
  int right = (me + 1) % p, left = (me + p - 1) % p;
  int area[4];
  int *big = test_alloc(BIGWORDS * sizeof(int)), *copy = test_alloc(BIGWORDS * sizeof(int));
  bsp_push_reg(area, (int)sizeof area);
  bsp_push_reg(big, BIGWORDS * (int)sizeof(int));
  bsp_sync();
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 4; ++i) area[i] = 1000 * round + 10 * me + i;
    for (int i = 0; i < BIGWORDS; ++i) big[i] = round + me * 7 + i;
    bsp_sync();
    int got = -1, pair[2] = {-1, -1};
    bsp_direct_get(right, area, 0, &got, (int)sizeof got);
    EXPECT_INT(got, 1000 * round + 10 * right, "round %d: area[0] of process %d", round, right);
    bsp_direct_get(left, area, 2 * (int)sizeof(int), pair, (int)sizeof pair);
    EXPECT_INT(pair[0], 1000 * round + 10 * left + 2, "round %d: area[2] of process %d", round,
               left);
    EXPECT_INT(pair[1], 1000 * round + 10 * left + 3, "round %d: area[3] of process %d", round,
               left);
    bsp_direct_get(me, area, (int)sizeof(int), &got, (int)sizeof got);
    EXPECT_INT(got, 1000 * round + 10 * me + 1, "round %d: own area[1]", round);
    bsp_direct_get(left, big, 0, copy, BIGWORDS * (int)sizeof(int));
    for (int i = 0; i < BIGWORDS; ++i)
      EXPECT_INT(copy[i], round + left * 7 + i, "round %d: big[%d] of process %d", round, i, left);
    bsp_sync();
    /* Everyone but process 0 goes straight on to the next sync; process 0 reads from all. */
    if (me == 0)
      for (int q = 0; q < p; ++q) {
        bsp_direct_get(q, area, 3 * (int)sizeof(int), &got, (int)sizeof got);
        EXPECT_INT(got, 1000 * round + 10 * q + 3,
                   "round %d: area[3] of process %d read during its sync", round, q);
      }
    bsp_sync();
  }
  bsp_pop_reg(big);
  bsp_pop_reg(area);
  bsp_sync();
  test_end();
  free(big);
  free(copy);
  printf("PASS drma_direct_get\n");
  return 0;
}
