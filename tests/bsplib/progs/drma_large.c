/* Large transfers in one superstep: a 32 MiB put to the right neighbour and a 16 MiB get from
 * the left one, checked word by word. */
#include "bsptest.h"

#define PUT_BYTES (32 << 20)
#define GET_BYTES (16 << 20)

int main(void) {
  test_begin(bsp_nprocs());
  int p = bsp_nprocs(), me = bsp_pid();
  int right = (me + 1) % p, left = (me + p - 1) % p;
  size_t put_words = PUT_BYTES / 4, get_words = GET_BYTES / 4;
  uint32_t *put_src = test_alloc(PUT_BYTES), *put_dst = test_alloc(PUT_BYTES);
  uint32_t *get_src = test_alloc(GET_BYTES), *get_dst = test_alloc(GET_BYTES);
  for (size_t i = 0; i < put_words; ++i) {
    put_src[i] = test_pattern((uint32_t)me, (uint32_t)i);
    put_dst[i] = 0;
  }
  for (size_t i = 0; i < get_words; ++i) {
    get_src[i] = test_pattern((uint32_t)me + 1000u, (uint32_t)i);
    get_dst[i] = 0;
  }
  bsp_push_reg(put_dst, PUT_BYTES);
  bsp_push_reg(get_src, GET_BYTES);
  bsp_sync();
  double t0 = bsp_time();
  bsp_put(right, put_src, put_dst, 0, PUT_BYTES);
  bsp_get(left, get_src, 0, get_dst, GET_BYTES);
  bsp_sync();
  double seconds = bsp_time() - t0;
  for (size_t i = 0; i < put_words; ++i)
    if (put_dst[i] != test_pattern((uint32_t)left, (uint32_t)i))
      EXPECT(0, "word %zu of the 32 MiB put from process %d: expected %u, got %u", i, left,
             test_pattern((uint32_t)left, (uint32_t)i), put_dst[i]);
  for (size_t i = 0; i < get_words; ++i)
    if (get_dst[i] != test_pattern((uint32_t)left + 1000u, (uint32_t)i))
      EXPECT(0, "word %zu of the 16 MiB get from process %d: expected %u, got %u", i, left,
             test_pattern((uint32_t)left + 1000u, (uint32_t)i), get_dst[i]);
  bsp_pop_reg(get_src);
  bsp_pop_reg(put_dst);
  bsp_sync();
  if (me == 0) printf("drma_large: superstep with 48 MiB per process took %.3f s\n", seconds);
  free(get_dst);
  free(get_src);
  free(put_dst);
  free(put_src);
  test_end();
  printf("PASS drma_large\n");
  return 0;
}
