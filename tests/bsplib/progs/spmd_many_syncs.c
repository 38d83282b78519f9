/* Hundreds of supersteps: each one moves a value around a ring, checked every superstep. */
#include "bsptest.h"

int main(void) {
  test_begin(bsp_nprocs());
  int p = bsp_nprocs(), me = bsp_pid();
  int left = (me + p - 1) % p, right = (me + 1) % p;
  int from_left = -1;
  bsp_push_reg(&from_left, (int)sizeof from_left);
  bsp_sync();
  const int supersteps = 500;
  for (int s = 0; s < supersteps; ++s) {
    int value = s * 1000 + me;
    bsp_put(right, &value, &from_left, 0, (int)sizeof value);
    bsp_sync();
    EXPECT_INT(from_left, s * 1000 + left, "value from the left neighbour in superstep %d", s);
  }
  /* Empty supersteps too. */
  for (int s = 0; s < 200; ++s) bsp_sync();
  bsp_pop_reg(&from_left);
  bsp_sync();
  test_end();
  printf("PASS spmd_many_syncs\n");
  return 0;
}
