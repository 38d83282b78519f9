/* misuse_end_vs_sync first|last: one process (0 or the last) calls bsp_end while the others
 * call bsp_sync. Expected: one line with "processes disagree" naming bsp_end. Needs p >= 2. */
#include "misuse.h"

int main(int argc, char **argv) {
  if (argc < 2 || (strcmp(argv[1], "first") != 0 && strcmp(argv[1], "last") != 0)) {
    printf("FAIL: usage: misuse_end_vs_sync first|last\n");
    return 2;
  }
  test_begin(bsp_nprocs());
  int p = bsp_nprocs(), me = bsp_pid();
  EXPECT(p >= 2, "misuse_end_vs_sync needs at least 2 processes, has %d", p);
  int early = strcmp(argv[1], "first") == 0 ? 0 : p - 1;
  bsp_sync();
  if (me == early) {
    bsp_end();
    MISUSE_NOT_CAUGHT("process %d's bsp_end returned while the others were in bsp_sync", me);
  }
  bsp_sync();
  MISUSE_NOT_CAUGHT("process %d's bsp_sync returned while process %d was in bsp_end", me, early);
}
