/* 50000 single-int puts per process in one superstep, spread over all processes: put k goes
 * to process (k + pid) mod p at index k, so each index of each process has exactly one writer. */
#include "bsptest.h"

#define NPUTS 50000

int main(void) {
  test_begin(bsp_nprocs());
  int p = bsp_nprocs(), me = bsp_pid();
  int *area = test_alloc(sizeof(int) * NPUTS);
  for (int k = 0; k < NPUTS; ++k) area[k] = -1;
  bsp_push_reg(area, (int)sizeof(int) * NPUTS);
  bsp_sync();
  for (int k = 0; k < NPUTS; ++k) {
    int value = me * 1000000 + k; /* the put copies it now: one variable is enough */
    bsp_put((k + me) % p, &value, area, k * (int)sizeof(int), (int)sizeof value);
  }
  bsp_sync();
  for (int k = 0; k < NPUTS; ++k) {
    int writer = ((me - k) % p + p) % p;
    EXPECT_INT(area[k], writer * 1000000 + k, "index %d, put by process %d", k, writer);
  }
  bsp_pop_reg(area);
  bsp_sync();
  free(area);
  test_end();
  printf("PASS drma_many_small\n");
  return 0;
}
