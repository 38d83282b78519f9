/* bsp_get from every process including itself, single ints and a whole array. */
#include "bsptest.h"

int main(void) {
  test_begin(bsp_nprocs());
  int p = bsp_nprocs(), me = bsp_pid();
  int *area = test_alloc(sizeof(int) * (size_t)p);
  int *got = test_alloc(sizeof(int) * (size_t)p);
  int *whole = test_alloc(sizeof(int) * (size_t)p * (size_t)p);
  for (int i = 0; i < p; ++i) area[i] = 100 * me + i;
  bsp_push_reg(area, (int)sizeof(int) * p);
  bsp_sync();
  for (int s = 0; s < p; ++s) {
    got[s] = -1;
    bsp_get(s, area, me * (int)sizeof(int), &got[s], (int)sizeof(int));
    bsp_get(s, area, 0, &whole[s * p], (int)sizeof(int) * p);
  }
  bsp_sync();
  for (int s = 0; s < p; ++s) {
    EXPECT_INT(got[s], 100 * s + me, "int got from process %d", s);
    for (int i = 0; i < p; ++i)
      EXPECT_INT(whole[s * p + i], 100 * s + i, "element %d of the array got from process %d", i,
                 s);
  }
  bsp_pop_reg(area);
  bsp_sync();
  free(whole);
  free(got);
  free(area);
  test_end();
  printf("PASS drma_get_all\n");
  return 0;
}
