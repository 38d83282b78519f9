/* abort_before_begin plain|init|spawned: bsp_abort before bsp_begin, as programs do when their
 * input is wrong: every process runs main and aborts (plain), or process 0 aborts in main while
 * the others wait in bsp_begin (init, the SPMD part being another function). The message must
 * appear once and every process stop. spawned, for master mode: the master calls bsp_begin(2);
 * the process it spawns, which finds BSPG_SUBJOB_SIZES=2 in its environment from the start (the
 * master had 1 before bsp_begin), calls bsp_pid() first thing, a misuse before its bsp_begin,
 * while the master waits for it in bsp_begin: the message must name it as process 1. */
#include "bsptest.h"

int main(int argc, char **argv) {
  if (argc != 2 || (strcmp(argv[1], "plain") != 0 && strcmp(argv[1], "init") != 0 &&
                    strcmp(argv[1], "spawned") != 0)) {
    printf("FAIL: usage: abort_before_begin plain|init|spawned\n");
    return 2;
  }
  if (strcmp(argv[1], "init") == 0) bsp_init(test_spmd_not_reached, argc, argv);
  if (strcmp(argv[1], "spawned") == 0) {
    test_master_waits_in_begin();
    printf("FAIL: abort_before_begin: bsp_pid() = %d before bsp_begin\n", bsp_pid());
  }
  bsp_abort("abort_before_begin: cannot start: the input is wrong (%s)\n", argv[1]);
}
