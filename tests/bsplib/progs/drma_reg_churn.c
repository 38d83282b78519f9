/* Registrations come and go every superstep, the way a loop that reallocates a buffer does it:
 * pop the old buffer, free it, malloc a new one (often at the same address) and push it, all in
 * one superstep; then put into it. Sizes change every iteration, so a stale registration (old
 * size) or a stale slot is caught. A long-lived registration pushed before the loop keeps
 * working throughout. */
#include "bsptest.h"

#define ITERATIONS 150

int main(void) {
  test_begin(bsp_nprocs());
  int p = bsp_nprocs(), me = bsp_pid();
  int right = (me + 1) % p, left = (me + p - 1) % p;
  int steady = -1;
  bsp_push_reg(&steady, (int)sizeof steady);
  int nints = 4;
  int *buffer = test_alloc(sizeof(int) * (size_t)nints);
  bsp_push_reg(buffer, (int)sizeof(int) * nints);
  bsp_sync();
  for (int it = 0; it < ITERATIONS; ++it) {
    /* Write the last int of the right neighbour's buffer (all have nints ints now). */
    int value = it * 1000 + me;
    bsp_put(right, &value, buffer, (nints - 1) * (int)sizeof(int), (int)sizeof value);
    bsp_put(right, &value, &steady, 0, (int)sizeof value);
    bsp_sync();
    EXPECT_INT(buffer[nints - 1], it * 1000 + left, "iteration %d: last int of the %d-int buffer",
               it, nints);
    EXPECT_INT(steady, it * 1000 + left, "iteration %d: long-lived registration", it);
    /* Replace the buffer: pop, free, allocate the new size, push, in one superstep. */
    bsp_pop_reg(buffer);
    free(buffer);
    nints = 4 + (it * 7) % 13;
    buffer = test_alloc(sizeof(int) * (size_t)nints);
    for (int i = 0; i < nints; ++i) buffer[i] = -1;
    bsp_push_reg(buffer, (int)sizeof(int) * nints);
    bsp_sync();
  }
  bsp_pop_reg(buffer);
  bsp_pop_reg(&steady);
  bsp_sync();
  free(buffer);
  test_end();
  printf("PASS drma_reg_churn\n");
  return 0;
}
