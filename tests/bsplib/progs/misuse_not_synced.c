/* misuse_not_synced CALL: every process registers an area and, in the same superstep, the last
 * process calls bsp_CALL (put, get, hpput, hpget) on it, before the registration took effect.
 * Expected: "bsp_CALL: ... takes effect at the next bsp_sync", once. */
#include "misuse.h"

int main(int argc, char **argv) {
  if (argc < 2 || !is_drma_call(argv[1])) {
    printf("FAIL: usage: misuse_not_synced put|get|hpput|hpget|direct_get\n");
    return 2;
  }
  test_begin(bsp_nprocs());
  int p = bsp_nprocs(), me = bsp_pid();
  int area[4] = {0, 0, 0, 0}, fresh[4] = {0, 0, 0, 0}, local[4] = {1, 2, 3, 4};
  bsp_push_reg(area, (int)sizeof area);
  bsp_sync();
  bsp_push_reg(fresh, (int)sizeof fresh);
  if (me == p - 1) transfer(argv[1], 0, local, fresh, 0, (int)sizeof(int));
  bsp_sync();
  MISUSE_NOT_CAUGHT("bsp_%s on a registration made in the same superstep was accepted", argv[1]);
}
