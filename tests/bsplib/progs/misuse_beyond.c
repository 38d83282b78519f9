/* misuse_beyond CALL [null]: process 1 registers 4 bytes (with "null": NULL with size 0), every
 * other process 64 bytes (same slot); process 0 calls bsp_CALL (put, get, hpput, hpget) for 8
 * bytes of process 1's area: fine by its own registration, beyond the destination's.
 * Expected: "bsp_CALL: ... beyond", once. Needs at least 2 processes. */
#include "misuse.h"

int main(int argc, char **argv) {
  if (argc < 2 || !is_drma_call(argv[1])) {
    printf("FAIL: usage: misuse_beyond put|get|hpput|hpget|direct_get [null]\n");
    return 2;
  }
  int null_on_1 = argc > 2 && strcmp(argv[2], "null") == 0;
  test_begin(bsp_nprocs());
  int p = bsp_nprocs(), me = bsp_pid();
  EXPECT(p >= 2, "misuse_beyond needs at least 2 processes, has %d", p);
  char area[64], local[64];
  memset(area, 0, sizeof area);
  memset(local, 1, sizeof local);
  if (me == 1)
    bsp_push_reg(null_on_1 ? NULL : area, null_on_1 ? 0 : 4);
  else
    bsp_push_reg(area, (int)sizeof area);
  bsp_sync();
  /* Within the destination's 4 bytes: fine. */
  if (me == 0 && !null_on_1) transfer(argv[1], 1, local, area, 0, 4);
  bsp_sync();
  if (me == 0) transfer(argv[1], 1, local, area, 0, 8);
  bsp_sync();
  MISUSE_NOT_CAUGHT("bsp_%s of 8 bytes into a %d-byte registration was accepted", argv[1],
                    null_on_1 ? 0 : 4);
}
