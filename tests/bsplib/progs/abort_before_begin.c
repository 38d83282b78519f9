/* abort_before_begin plain|init: bsp_abort before bsp_begin, as programs do when their input is
 * wrong: every process runs main and aborts (plain), or process 0 aborts in main while the
 * others wait in bsp_begin (init, the SPMD part being another function). The message must
 * appear once and every process stop. */
#include "bsptest.h"

static void spmd(void) {
  bsp_begin(bsp_nprocs());
  printf("FAIL: abort_before_begin: process %d entered the SPMD section\n", bsp_pid());
  bsp_end();
}

int main(int argc, char **argv) {
  if (argc != 2 || (strcmp(argv[1], "plain") != 0 && strcmp(argv[1], "init") != 0)) {
    printf("FAIL: usage: abort_before_begin plain|init\n");
    return 2;
  }
  if (strcmp(argv[1], "init") == 0) bsp_init(spmd, argc, argv);
  bsp_abort("abort_before_begin: cannot start: the input is wrong (%s)\n", argv[1]);
}
