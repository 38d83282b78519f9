/* bsp_hpput / bsp_hpget to and from every process including itself: values are right after
 * the sync. Puts and gets use different areas (unbuffered transfers may happen any time up to
 * the sync). */
#include "bsptest.h"

int main(void) {
  test_begin(bsp_nprocs());
  int p = bsp_nprocs(), me = bsp_pid();
  int *put_area = test_alloc(sizeof(int) * (size_t)p);
  int *get_area = test_alloc(sizeof(int) * 4);
  int *sources = test_alloc(sizeof(int) * (size_t)p);
  int *got = test_alloc(sizeof(int) * 4 * (size_t)p);
  for (int i = 0; i < p; ++i) put_area[i] = -1;
  for (int i = 0; i < 4; ++i) get_area[i] = 100 * me + i;
  bsp_push_reg(put_area, (int)sizeof(int) * p);
  bsp_push_reg(get_area, (int)sizeof(int) * 4);
  bsp_sync();
  for (int round = 0; round < 3; ++round) {
    for (int d = 0; d < p; ++d) {
      sources[d] = round * 100000 + 1000 * me + d;
      bsp_hpput(d, &sources[d], put_area, me * (int)sizeof(int), (int)sizeof(int));
      for (int i = 0; i < 4; ++i) got[4 * d + i] = -1;
      bsp_hpget(d, get_area, (int)sizeof(int), &got[4 * d + 1], 3 * (int)sizeof(int));
    }
    bsp_sync();
    for (int s = 0; s < p; ++s) {
      EXPECT_INT(put_area[s], round * 100000 + 1000 * s + me, "round %d: value hpput by process %d",
                 round, s);
      EXPECT_INT(got[4 * s], -1, "round %d: hpget wrote before its destination", round);
      for (int i = 1; i < 4; ++i)
        EXPECT_INT(got[4 * s + i], 100 * s + i, "round %d: int %d hpget from process %d", round, i,
                   s);
    }
  }
  bsp_pop_reg(get_area);
  bsp_pop_reg(put_area);
  bsp_sync();
  free(got);
  free(sources);
  free(get_area);
  free(put_area);
  test_end();
  printf("PASS drma_hp\n");
  return 0;
}
