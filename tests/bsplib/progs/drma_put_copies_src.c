/* bsp_put copies the source when it is called: changing or freeing the source before the
 * sync must not change what arrives. */
#include "bsptest.h"

int main(void) {
  test_begin(bsp_nprocs());
  int p = bsp_nprocs(), me = bsp_pid();
  int *area = test_alloc(sizeof(int) * (size_t)p);
  for (int i = 0; i < p; ++i) area[i] = -1;
  int block[64];
  bsp_push_reg(area, (int)sizeof(int) * p);
  bsp_push_reg(block, (int)sizeof block);
  bsp_sync();

  /* One variable reused as the source of p puts, changed after each. */
  int value = 0;
  for (int d = 0; d < p; ++d) {
    value = 1000 * me + d;
    bsp_put(d, &value, area, me * (int)sizeof(int), (int)sizeof value);
  }
  value = -7;
  /* A heap block put to the right neighbour, then overwritten and freed before the sync. */
  int *source = test_alloc(sizeof block);
  for (int i = 0; i < 64; ++i) source[i] = me * 100 + i;
  bsp_put((me + 1) % p, source, block, 0, (int)sizeof block);
  for (int i = 0; i < 64; ++i) source[i] = -1;
  free(source);
  bsp_sync();

  int left = (me + p - 1) % p;
  for (int s = 0; s < p; ++s) EXPECT_INT(area[s], 1000 * s + me, "value put by process %d", s);
  for (int i = 0; i < 64; ++i)
    EXPECT_INT(block[i], left * 100 + i, "block element %d from process %d", i, left);
  bsp_pop_reg(block);
  bsp_pop_reg(area);
  bsp_sync();
  free(area);
  test_end();
  printf("PASS drma_put_copies_src\n");
  return 0;
}
