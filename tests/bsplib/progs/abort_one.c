/* bsp_abort from one process (the last) while the others wait in bsp_sync: every process stops,
 * the job exits non-zero and the message appears once. */
#include "bsptest.h"

int main(void) {
  test_begin(bsp_nprocs());
  int p = bsp_nprocs(), me = bsp_pid();
  bsp_sync();
  if (me == p - 1) bsp_abort("abort_one: process %d gives up, code %d\n", me, 42);
  for (int s = 0; s < 100; ++s) bsp_sync();
  printf("FAIL: abort_one: process %d went on after process %d called bsp_abort\n", me, p - 1);
  test_end();
  printf("PASS abort_one (must not be printed)\n");
  return 0;
}
