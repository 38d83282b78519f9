// Misuse of a nested run: its pid 0 puts to an address registered only in the outer section (or,
// with the argument "get", gets from one). One line says so, and the job ends with a non-zero
// status.
#include <bsp.h>
#include <stdio.h>
#include <string.h>

static int outer_only;
static int by_get;

static void nested(void) {
  bsp_begin(2);
  int x = 5;
  if (bsp_pid() == 0 && by_get) bsp_get(1, &outer_only, 0, &x, sizeof x);
  if (bsp_pid() == 0 && !by_get) bsp_put(1, &x, &outer_only, 0, sizeof x);
  bsp_sync();
  printf("FAIL nested_misuse: the misuse went through\n");
  bsp_end();
}

static void outer(void) {
  bsp_begin(bsp_nprocs());
  bsp_push_reg(&outer_only, sizeof outer_only);
  bsp_sync();
  if (bsp_pid() == 0) {
    bsp_init(nested, 0, NULL);
    nested();
  }
  bsp_sync();
  printf("FAIL nested_misuse: the outer section went on\n");
  bsp_end();
}

int main(int argc, char** argv) {
  by_get = argc > 1 && strcmp(argv[1], "get") == 0;
  bsp_init(outer, argc, argv);
  outer();
  return 0;
}
