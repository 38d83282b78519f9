/* bsp_bcast from every root (also with src == dst and with 0 bytes), bsp_gather and bsp_scatter
 * to and from every root: the values every process sees afterwards. */
#include <bsp_level1.h>

#include "bsptest.h"

#define N 5

int main(void) {
  test_begin(bsp_nprocs());
  const int p = bsp_nprocs(), s = bsp_pid();
  for (int root = 0; root < p; ++root) {
    /* Separate src and dst; dst of the others starts with junk. */
    uint32_t src[N], dst[N];
    for (int i = 0; i < N; ++i) {
      src[i] = s == root ? test_pattern(root, i) : 0xdeadbeefu;
      dst[i] = 0x12345678u;
    }
    bsp_bcast(root, s == root ? src : NULL, dst, sizeof dst);
    for (int i = 0; i < N; ++i)
      EXPECT_INT(dst[i], test_pattern(root, i), "bcast from %d, word %d", root, i);
    /* src == dst, as bsp_fold's Oxford implementation uses it. */
    double x = s == root ? 1.5 + root : -1.0;
    bsp_bcast(root, &x, &x, sizeof x);
    EXPECT(x == 1.5 + root, "bcast in place from %d: got %g", root, x);
    /* Nothing to move. */
    bsp_bcast(root, NULL, NULL, 0);

    /* Gather: block q of the root's dst comes from process q. */
    uint32_t mine[N], *all = NULL;
    for (int i = 0; i < N; ++i) mine[i] = test_pattern(100 + s, i);
    if (s == root) {
      all = test_alloc(sizeof(uint32_t) * N * p);
      memset(all, 0, sizeof(uint32_t) * N * p);
    }
    bsp_gather(root, mine, all, sizeof mine);
    if (s == root) {
      for (int q = 0; q < p; ++q)
        for (int i = 0; i < N; ++i)
          EXPECT_INT(all[q * N + i], test_pattern(100 + q, i), "gather to %d, block %d word %d",
                     root, q, i);
    }

    /* Scatter: block q of the root's src goes to process q. */
    if (s == root)
      for (int q = 0; q < p; ++q)
        for (int i = 0; i < N; ++i) all[q * N + i] = test_pattern(200 + q + root, i);
    uint32_t part[N];
    memset(part, 0, sizeof part);
    bsp_scatter(root, all, part, sizeof part);
    for (int i = 0; i < N; ++i)
      EXPECT_INT(part[i], test_pattern(200 + s + root, i), "scatter from %d, word %d", root, i);
    free(all);
  }
  test_end();
  printf("PASS l1_collectives\n");
  return 0;
}
