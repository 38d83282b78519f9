/* bsp_init with the SPMD part outside main: main's sequential part before spmd() and after
 * bsp_end runs only on process 0 (the CMake test counts SEQ_BEFORE/SEQ_AFTER/SPMD lines), and
 * a value computed there by process 0 reaches every process through a put. */
#include "bsptest.h"

static int value_from_main = -1;

static void spmd(void) {
  test_begin(bsp_nprocs());
  int p = bsp_nprocs(), me = bsp_pid();
  printf("SPMD %d\n", me);
  int value = me == 0 ? value_from_main : -1;
  bsp_push_reg(&value, (int)sizeof value);
  bsp_sync();
  if (me == 0)
    for (int d = 1; d < p; ++d) bsp_put(d, &value, &value, 0, (int)sizeof value);
  bsp_sync();
  EXPECT_INT(value, 4321, "value set in main's sequential part, broadcast by process 0");
  bsp_pop_reg(&value);
  bsp_sync();
  test_end();
}

int main(int argc, char **argv) {
  bsp_init(spmd, argc, argv);
  printf("SEQ_BEFORE\n");
  value_from_main = argc > 1 ? atoi(argv[1]) : 0;
  spmd();
  printf("SEQ_AFTER\n");
  printf("PASS spmd_init\n");
  return 0;
}
