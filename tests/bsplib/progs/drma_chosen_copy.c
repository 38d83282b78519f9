/* Puts of half a megabyte to four megabytes, superstep after superstep: on one node bspg times
 * the copies of such puts (at the call, and the receiver's at the sync), takes the cheaper of a
 * copy through the cache and one around it, and tries the other one copy in sixteen, so over
 * these supersteps both ways carry data at both places. Sizes and offsets that end on no cache
 * line, bsp_put and bsp_hpput in turn, a source changed right after bsp_put returned, and a
 * small put over a large one's middle; every byte that arrives is checked. */
#include <bsp.h>

#include "bsptest.h"

#define AREA_BYTES (5 << 20)
#define SUPERSTEPS 48

static unsigned char byte_of(int step, int from, size_t i) {
  return (unsigned char)(test_pattern((uint32_t)(step * 64 + from), (uint32_t)(i / 4)) >>
                         (8 * (i % 4)));
}

int main(void) {
  test_begin(bsp_nprocs());
  int p = bsp_nprocs(), me = bsp_pid();
  int right = (me + 1) % p, left = (me + p - 1) % p;
  unsigned char *area = test_alloc(AREA_BYTES), *src = test_alloc(AREA_BYTES);
  bsp_push_reg(area, AREA_BYTES);
  bsp_sync();
  static const size_t sizes[] = {512 << 10, (600 << 10) + 3, 1 << 20, (2 << 20) - 5, (7 << 19) + 1};
  for (int step = 0; step < SUPERSTEPS; ++step) {
    size_t n = sizes[step % 5], offset = (size_t)(step % 7) * 13;
    for (size_t i = 0; i < AREA_BYTES; ++i) area[i] = 0xA5;
    for (size_t i = 0; i < n; ++i) src[i] = byte_of(step, me, i);
    bsp_sync();
    if (step % 2) {
      bsp_hpput(right, src, area, (int)offset, (int)n);
    } else {
      bsp_put(right, src, area, (int)offset, (int)n);
      for (size_t i = 0; i < n; i += 4093) src[i] = (unsigned char)~src[i];
    }
    unsigned char marker = (unsigned char)(0x40 + step);
    bsp_put(right, &marker, area, (int)(offset + n / 2), 1);
    bsp_sync();
    for (size_t i = 0; i < AREA_BYTES; ++i) {
      unsigned char want = 0xA5;
      if (i == offset + n / 2)
        want = marker;
      else if (i >= offset && i < offset + n)
        want = byte_of(step, left, i - offset);
      if (area[i] != want)
        EXPECT(0,
               "superstep %d (a put of %zu bytes at %zu from process %d): byte %zu is %#x, "
               "not %#x",
               step, n, offset, left, i, area[i], want);
    }
  }
  bsp_pop_reg(area);
  bsp_sync();
  free(src);
  free(area);
  test_end();
  printf("PASS drma_chosen_copy\n");
  return 0;
}
