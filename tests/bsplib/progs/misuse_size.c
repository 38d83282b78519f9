/* misuse_size CALL: the last process calls bsp_CALL (put, get, hpput, hpget, send) with a size
 * of -4 bytes. Expected: "bsp_CALL: negative size", once. */
#include "misuse.h"

int main(int argc, char **argv) {
  if (argc < 2 || !is_transfer_call(argv[1])) {
    printf("FAIL: usage: misuse_size put|get|hpput|hpget|direct_get|send|hpsend\n");
    return 2;
  }
  test_begin(bsp_nprocs());
  int p = bsp_nprocs(), me = bsp_pid();
  int area[4] = {0, 0, 0, 0}, local[4] = {1, 2, 3, 4};
  bsp_push_reg(area, (int)sizeof area);
  bsp_sync();
  if (me == p - 1) transfer(argv[1], 0, local, area, 0, -4);
  bsp_sync();
  MISUSE_NOT_CAUGHT("bsp_%s with size -4 was accepted", argv[1]);
}
