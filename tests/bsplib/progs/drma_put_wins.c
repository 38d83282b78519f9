/* Where a bsp_get and a bsp_put write the same memory in one superstep, the get's result is
 * written first and the put wins (the standard's order), in either program order and whichever
 * way the put travels: one word (a stream), 32 KiB (a mailbox on one node), 128 KiB by bsp_put
 * (a call-time copy moved straight into registered memory) and by bsp_hpput (no copy).
 * Process 0 gets process p-1's src into x while process p-1 puts into process 0's x; at p = 1 it
 * is one process doing both. */
#include "bsptest.h"

#define MAXWORDS (128 * 1024 / (int)sizeof(int))

int main(void) {
  test_begin(bsp_nprocs());
  int p = bsp_nprocs(), me = bsp_pid();
  int *src = test_alloc(MAXWORDS * sizeof(int)), *x = test_alloc(MAXWORDS * sizeof(int));
  int *v = test_alloc(MAXWORDS * sizeof(int));
  for (int i = 0; i < MAXWORDS; ++i) src[i] = 100 + me;
  bsp_push_reg(src, MAXWORDS * (int)sizeof(int));
  bsp_push_reg(x, MAXWORDS * (int)sizeof(int));
  bsp_sync();

  const int words[] = {1, 8 * 1024, MAXWORDS, MAXWORDS};
  const int unbuffered[] = {0, 0, 0, 1};
  for (int c = 0; c < 4; ++c) {
    for (int put_first = 0; put_first <= 1; ++put_first) {
      int n = words[c];
      for (int i = 0; i < MAXWORDS; ++i) x[i] = -1;
      for (int i = 0; i < n; ++i) v[i] = 200 + me + i % 7;
      for (int step = 0; step < 2; ++step) {
        int do_put = step == 0 ? put_first : !put_first;
        if (do_put && me == p - 1) {
          if (unbuffered[c])
            bsp_hpput(0, v, x, 0, n * (int)sizeof(int));
          else
            bsp_put(0, v, x, 0, n * (int)sizeof(int));
        }
        if (!do_put && me == 0) bsp_get(p - 1, src, 0, x, n * (int)sizeof(int));
      }
      bsp_sync();
      if (me == 0)
        for (int i = 0; i < n; ++i)
          EXPECT_INT(x[i], 200 + (p - 1) + i % 7,
                     "x[%d] after a get and a %d-word %s (%s first) to it", i, n,
                     unbuffered[c] ? "bsp_hpput" : "bsp_put", put_first ? "put" : "get");
    }
  }
  bsp_pop_reg(x);
  bsp_pop_reg(src);
  bsp_sync();
  test_end();
  free(src);
  free(x);
  free(v);
  printf("PASS drma_put_wins\n");
  return 0;
}
