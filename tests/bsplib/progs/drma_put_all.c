/* bsp_put to every process including itself, two rounds (the second overwrites the first). */
#include "bsptest.h"

int main(void) {
  test_begin(bsp_nprocs());
  int p = bsp_nprocs(), me = bsp_pid();
  int *area = test_alloc(sizeof(int) * (size_t)p);
  int *values = test_alloc(sizeof(int) * (size_t)p);
  for (int i = 0; i < p; ++i) area[i] = -1;
  bsp_push_reg(area, (int)sizeof(int) * p);
  bsp_sync();
  for (int round = 0; round < 2; ++round) {
    for (int d = 0; d < p; ++d) {
      values[d] = round * 1000000 + me * 1000 + d;
      bsp_put(d, &values[d], area, me * (int)sizeof(int), (int)sizeof(int));
    }
    bsp_sync();
    for (int s = 0; s < p; ++s)
      EXPECT_INT(area[s], round * 1000000 + s * 1000 + me, "round %d: value put by process %d",
                 round, s);
  }
  bsp_pop_reg(area);
  bsp_sync();
  free(values);
  free(area);
  test_end();
  printf("PASS drma_put_all\n");
  return 0;
}
