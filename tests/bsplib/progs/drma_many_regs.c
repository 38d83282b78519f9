/* Hundreds of registrations (300 malloc'd areas) live at once; puts and gets reach the right one.
 *   round 0: all 300 registered (2 ints each); the first half is popped in the same superstep
 *            as puts into it (a pop takes effect at the sync, so those puts are fine)
 *   round 1: the second half still works after the first half was popped in push order
 *   round 2: the first half pushed again at the same addresses with 3 ints: offset 2 ints is
 *            valid there now; the second half keeps its 2-int registrations
 * Finally everything is popped in the order it was pushed. */
#include "bsptest.h"

#define NREGS 300
#define HALF (NREGS / 2)

static int values[NREGS], got[NREGS];

int main(void) {
  test_begin(bsp_nprocs());
  int p = bsp_nprocs(), me = bsp_pid();
  int right = (me + 1) % p, left = (me + p - 1) % p;
  int *areas[NREGS];
  for (int k = 0; k < NREGS; ++k) {
    areas[k] = test_alloc(3 * sizeof(int));
    areas[k][0] = -1;
    areas[k][1] = 10000 * me + k;
    areas[k][2] = -1;
    bsp_push_reg(areas[k], 2 * (int)sizeof(int));
  }
  bsp_sync();
  for (int round = 0; round < 3; ++round) {
    int first = round == 1 ? HALF : 0;
    for (int k = first; k < NREGS; ++k) {
      int index = round == 2 && k < HALF ? 2 : 0;
      values[k] = round * 1000000 + 1000 * me + k;
      bsp_put(right, &values[k], areas[k], index * (int)sizeof(int), (int)sizeof(int));
      got[k] = -1;
      bsp_get(right, areas[k], (int)sizeof(int), &got[k], (int)sizeof(int));
    }
    if (round == 0)
      for (int k = 0; k < HALF; ++k) bsp_pop_reg(areas[k]);
    bsp_sync();
    for (int k = first; k < NREGS; ++k) {
      int index = round == 2 && k < HALF ? 2 : 0;
      EXPECT_INT(areas[k][index], round * 1000000 + 1000 * left + k,
                 "round %d: int %d of registration %d, put by process %d", round, index, k, left);
      EXPECT_INT(got[k], 10000 * right + k, "round %d: registration %d, got from process %d", round,
                 k, right);
    }
    if (round == 1) {
      for (int k = 0; k < HALF; ++k) bsp_push_reg(areas[k], 3 * (int)sizeof(int));
      bsp_sync();
    }
  }
  for (int k = HALF; k < NREGS; ++k) bsp_pop_reg(areas[k]);
  for (int k = 0; k < HALF; ++k) bsp_pop_reg(areas[k]);
  bsp_sync();
  for (int k = 0; k < NREGS; ++k) free(areas[k]);
  test_end();
  printf("PASS drma_many_regs\n");
  return 0;
}
