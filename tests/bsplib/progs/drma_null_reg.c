/* Registering NULL with size 0. Slots, in order:
 *   0: NULL on every process
 *   A: a p-int array on even pids, NULL on odd pids (a process that has no such array)
 *   B: a p-int array everywhere
 * Every process puts into slot A of every even process (odd processes name the slot by
 * NULL, their most recent NULL registration) and into slot B of every process. The NULL
 * registrations must not shift the slots. Pops: B, A, then slot 0. */
#include "bsptest.h"

int main(void) {
  test_begin(bsp_nprocs());
  int p = bsp_nprocs(), me = bsp_pid();
  int has_a = me % 2 == 0;
  int *a = has_a ? test_alloc(sizeof(int) * (size_t)p) : NULL;
  int *b = test_alloc(sizeof(int) * (size_t)p);
  for (int i = 0; i < p; ++i) {
    if (has_a) a[i] = -1;
    b[i] = -1;
  }
  bsp_push_reg(NULL, 0);
  bsp_push_reg(a, has_a ? (int)sizeof(int) * p : 0);
  bsp_push_reg(b, (int)sizeof(int) * p);
  bsp_sync();

  int *va = test_alloc(sizeof(int) * (size_t)p);
  int *vb = test_alloc(sizeof(int) * (size_t)p);
  for (int d = 0; d < p; ++d) {
    va[d] = 1000 + 100 * me + d;
    vb[d] = 2000 + 100 * me + d;
    if (d % 2 == 0) bsp_put(d, &va[d], a, me * (int)sizeof(int), (int)sizeof(int));
    bsp_put(d, &vb[d], b, me * (int)sizeof(int), (int)sizeof(int));
  }
  bsp_sync();
  for (int s = 0; s < p; ++s) {
    if (has_a) EXPECT_INT(a[s], 1000 + 100 * s + me, "slot A value put by process %d", s);
    EXPECT_INT(b[s], 2000 + 100 * s + me, "slot B value put by process %d", s);
  }
  /* Gets through the same slots. */
  int got = -1;
  bsp_get(0, a, 0, &got, (int)sizeof got);
  bsp_sync();
  EXPECT_INT(got, 1000, "slot A element 0 got from process 0");

  bsp_pop_reg(b);
  bsp_pop_reg(a);
  bsp_sync();
  bsp_pop_reg(NULL);
  bsp_sync();
  free(vb);
  free(va);
  free(b);
  free(a);
  test_end();
  printf("PASS drma_null_reg\n");
  return 0;
}
