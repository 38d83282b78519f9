/* misuse_pid CALL high|negative: the last process calls bsp_CALL (put, get, hpput, hpget, send)
 * with pid = bsp_nprocs() or -1. Expected: "bsp_CALL: pid N is out of range", once. */
#include "misuse.h"

int main(int argc, char **argv) {
  if (argc < 3 || !is_transfer_call(argv[1])) {
    printf("FAIL: usage: misuse_pid put|get|hpput|hpget|direct_get|send|hpsend high|negative\n");
    return 2;
  }
  test_begin(bsp_nprocs());
  int p = bsp_nprocs(), me = bsp_pid();
  int area[4] = {0, 0, 0, 0}, local[4] = {1, 2, 3, 4};
  bsp_push_reg(area, (int)sizeof area);
  bsp_sync();
  int bad = strcmp(argv[2], "negative") == 0 ? -1 : p;
  if (me == p - 1) transfer(argv[1], bad, local, area, 0, (int)sizeof(int));
  bsp_sync();
  MISUSE_NOT_CAUGHT("bsp_%s with pid %d (of %d processes) was accepted", argv[1], bad, p);
}
