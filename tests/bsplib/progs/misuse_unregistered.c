/* misuse_unregistered CALL: the last process calls bsp_CALL (put, get, hpput, hpget) naming an
 * address that was never registered (another one is). Expected: "bsp_CALL: ... not
 * registered", once. */
#include "misuse.h"

int main(int argc, char **argv) {
  if (argc < 2 || !is_drma_call(argv[1])) {
    printf("FAIL: usage: misuse_unregistered put|get|hpput|hpget|direct_get\n");
    return 2;
  }
  test_begin(bsp_nprocs());
  int p = bsp_nprocs(), me = bsp_pid();
  int area[4] = {0, 0, 0, 0}, other[4] = {0, 0, 0, 0}, local[4] = {1, 2, 3, 4};
  bsp_push_reg(area, (int)sizeof area);
  bsp_sync();
  if (me == p - 1) transfer(argv[1], 0, local, other, 0, (int)sizeof(int));
  bsp_sync();
  MISUSE_NOT_CAUGHT("bsp_%s to an unregistered address was accepted", argv[1]);
}
