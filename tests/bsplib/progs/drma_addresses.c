/* Local addresses and sizes differ per process (malloc'd arrays of (pid+1)*1000 ints at
 * different offsets); a put names the slot by the caller's own address and is bounded by the
 * destination's size, which may be larger than the caller's. */
#include "bsptest.h"

int main(void) {
  test_begin(bsp_nprocs());
  int p = bsp_nprocs(), me = bsp_pid();
  int n = (me + 1) * 1000;
  char *block = test_alloc(sizeof(int) * (size_t)n + 64 * (size_t)(me + 1));
  int *area = (int *)(void *)(block + 64 * me); /* a different offset into each process's block */
  for (int i = 0; i < n; ++i) area[i] = 100000 * me + i;
  bsp_push_reg(area, (int)sizeof(int) * n);
  bsp_sync();

  int *values = test_alloc(sizeof(int) * 2 * (size_t)p);
  int *got = test_alloc(sizeof(int) * (size_t)p);
  for (int d = 0; d < p; ++d) {
    int dn = (d + 1) * 1000;
    values[2 * d] = 10 * me + d;
    values[2 * d + 1] = 7000 + d;
    bsp_put(d, &values[2 * d], area, me * (int)sizeof(int), (int)sizeof(int));
    /* The last int of the destination: beyond the caller's own area when d > me. */
    if (me == 0)
      bsp_put(d, &values[2 * d + 1], area, (dn - 1) * (int)sizeof(int), (int)sizeof(int));
    got[d] = -2;
    bsp_get(d, area, (dn - 2) * (int)sizeof(int), &got[d], (int)sizeof(int));
  }
  bsp_sync();
  for (int s = 0; s < p; ++s) EXPECT_INT(area[s], 10 * s + me, "value put by process %d", s);
  EXPECT_INT(area[n - 1], 7000 + me, "last int, put by process 0");
  for (int i = p; i < n - 1; ++i) EXPECT_INT(area[i], 100000 * me + i, "untouched element %d", i);
  for (int d = 0; d < p; ++d) {
    int index = (d + 1) * 1000 - 2;
    EXPECT_INT(got[d], 100000 * d + index, "element %d got from process %d", index, d);
  }
  bsp_pop_reg(area);
  bsp_sync();
  free(got);
  free(values);
  free(block);
  test_end();
  printf("PASS drma_addresses\n");
  return 0;
}
