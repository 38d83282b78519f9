/* Zero-byte puts and gets (also at offset == size, the end of the area) change nothing and are
 * no error; puts and gets to the process itself work. */
#include "bsptest.h"

int main(void) {
  test_begin(bsp_nprocs());
  int p = bsp_nprocs(), me = bsp_pid();
  int area[4] = {10 * me, 10 * me + 1, 10 * me + 2, 10 * me + 3};
  int source[4] = {-5, -6, -7, -8};
  int sink[4] = {-1, -1, -1, -1};
  bsp_push_reg(area, (int)sizeof area);
  bsp_sync();
  for (int d = 0; d < p; ++d) {
    bsp_put(d, source, area, 0, 0);
    bsp_put(d, source, area, (int)sizeof area, 0);
    bsp_get(d, area, 0, sink, 0);
    bsp_get(d, area, (int)sizeof area, sink, 0);
    bsp_hpput(d, source, area, 2 * (int)sizeof(int), 0);
    bsp_hpget(d, area, 2 * (int)sizeof(int), sink, 0);
  }
  bsp_sync();
  for (int i = 0; i < 4; ++i) {
    EXPECT_INT(area[i], 10 * me + i, "area[%d] after zero-byte puts", i);
    EXPECT_INT(sink[i], -1, "sink[%d] after zero-byte gets", i);
  }
  /* To itself: a put into the middle and a get of the whole area (old values). */
  int pair[2] = {700 + me, 800 + me};
  bsp_put(me, pair, area, (int)sizeof(int), (int)sizeof pair);
  bsp_get(me, area, 0, sink, (int)sizeof sink);
  bsp_sync();
  int want_area[4] = {10 * me, 700 + me, 800 + me, 10 * me + 3};
  for (int i = 0; i < 4; ++i) {
    EXPECT_INT(area[i], want_area[i], "area[%d] after a put to itself", i);
    EXPECT_INT(sink[i], 10 * me + i, "element %d got from itself", i);
  }
  bsp_pop_reg(area);
  bsp_sync();
  test_end();
  printf("PASS drma_zero_self\n");
  return 0;
}
