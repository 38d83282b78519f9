/* Large puts superstep after superstep, as a program that moves blocks of megabytes does: sizes
 * that outgrow the shared-memory regions bspg starts with on one node (which then grow at the
 * sync), several large puts to one process in a superstep, small puts overlapping large ones, a
 * source changed right after its put, bsp_hpput, and a group's sync in between. Every word that
 * arrives is checked, every superstep. */
#include <bspg.h>

#include "bsptest.h"

#define AREA_WORDS (6 << 20) /* 24 MiB of uint32_t */

static uint32_t value(int round, int from, size_t i) {
  return test_pattern((uint32_t)(round * 64 + from), (uint32_t)i);
}

int main(void) {
  test_begin(bsp_nprocs());
  int p = bsp_nprocs(), me = bsp_pid();
  int right = (me + 1) % p, left = (me + p - 1) % p;
  uint32_t *area = test_alloc(AREA_WORDS * sizeof(uint32_t));
  uint32_t *src = test_alloc(AREA_WORDS * sizeof(uint32_t));
  uint32_t *want = test_alloc(AREA_WORDS * sizeof(uint32_t));
  bsp_push_reg(area, AREA_WORDS * (int)sizeof(uint32_t));
  bsp_sync();
  int group = bspg_group_split(0);
  /* Words of each round's first and second large put, and whether a group syncs it. */
  static const size_t first[] = {16 << 10, 300 << 10, 1 << 20, 3 << 20, 3 << 20, 5 << 20, 64 << 10};
  static const size_t second[] = {0, 0, 1 << 20, 0, 1 << 20, 0, 2 << 20};
  static const int by_group[] = {0, 0, 1, 0, 0, 1, 0};
  for (int round = 0; round < (int)(sizeof first / sizeof first[0]); ++round) {
    size_t n1 = first[round], n2 = second[round];
    for (size_t i = 0; i < AREA_WORDS; ++i) area[i] = 0xdeadbeefu, want[i] = 0xdeadbeefu;
    bsp_sync();
    for (size_t i = 0; i < n1 + n2; ++i) src[i] = value(round, me, i);
    /* The first put at the area's start; the second after a gap; a word over the first put's
     * middle, put after it, lands after it; the source changes once bsp_put returned. */
    bsp_put(right, src, area, 0, (int)(n1 * sizeof(uint32_t)));
    for (size_t i = 0; i < n1; i += 4099) src[i] = ~src[i];
    if (n2 > 0) {
      if (round % 2)
        bsp_hpput(right, src + n1, area, (int)((n1 + 100) * sizeof(uint32_t)),
                  (int)(n2 * sizeof(uint32_t)));
      else
        bsp_put(right, src + n1, area, (int)((n1 + 100) * sizeof(uint32_t)),
                (int)(n2 * sizeof(uint32_t)));
    }
    uint32_t marker = 0x5eed0000u + (uint32_t)round;
    bsp_put(right, &marker, area, (int)(n1 / 2 * sizeof(uint32_t)), (int)sizeof marker);
    if (by_group[round])
      bspg_group_sync(group);
    else
      bsp_sync();
    for (size_t i = 0; i < n1; ++i) want[i] = value(round, left, i);
    for (size_t i = 0; i < n2; ++i) want[n1 + 100 + i] = value(round, left, n1 + i);
    want[n1 / 2] = 0x5eed0000u + (uint32_t)round;
    for (size_t i = 0; i < AREA_WORDS; ++i)
      if (area[i] != want[i])
        EXPECT(0, "round %d (puts of %zu and %zu words from process %d): word %zu is %#x, not %#x",
               round, n1, n2, left, i, area[i], want[i]);
  }
  bsp_pop_reg(area);
  bsp_sync();
  free(want);
  free(src);
  free(area);
  test_end();
  printf("PASS drma_large_series\n");
  return 0;
}
