/* misuse_outside pid|put|sync before|after: the call outside the SPMD section, before bsp_begin
 * (every process) or after bsp_end (process 0 only, the others have exited).
 * Expected: "bsp_CALL: called outside the SPMD section", once. */
#include "misuse.h"

static void call_outside(const char *call) {
  int x = 1, y = 0;
  if (strcmp(call, "pid") == 0)
    printf("bsp_pid() = %d\n", bsp_pid());
  else if (strcmp(call, "put") == 0)
    bsp_put(0, &x, &y, 0, (int)sizeof x);
  else if (strcmp(call, "sync") == 0)
    bsp_sync();
  fflush(stdout);
}

int main(int argc, char **argv) {
  if (argc < 3 ||
      (strcmp(argv[1], "pid") != 0 && strcmp(argv[1], "put") != 0 &&
       strcmp(argv[1], "sync") != 0) ||
      (strcmp(argv[2], "before") != 0 && strcmp(argv[2], "after") != 0)) {
    printf("FAIL: usage: misuse_outside pid|put|sync before|after\n");
    return 2;
  }
  if (strcmp(argv[2], "before") == 0) {
    call_outside(argv[1]);
    MISUSE_NOT_CAUGHT("bsp_%s before bsp_begin was accepted", argv[1]);
  }
  test_begin(bsp_nprocs());
  bsp_sync();
  test_end();
  call_outside(argv[1]);
  MISUSE_NOT_CAUGHT("bsp_%s after bsp_end was accepted", argv[1]);
}
