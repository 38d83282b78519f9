/* The standard's bsp_init example: main (process 0 only) decides how many processes to use
 * (here from argv[1]) and stores it in a global that spmd() passes to bsp_begin; on the other
 * processes that global is still 0. Process 0's value decides: inside, bsp_nprocs() is that
 * number, and the processes left out exit 0 without output. The CMake test counts SPMD lines. */
#include "bsptest.h"

static int nprocs_wanted; /* set by main, so only on process 0 */

static void spmd(void) {
  test_begin(nprocs_wanted);
  int p = bsp_nprocs(), me = bsp_pid();
  printf("SPMD %d\n", me);
  int wanted = nprocs_wanted;
  bsp_push_reg(&wanted, (int)sizeof wanted);
  bsp_sync();
  if (me == 0)
    for (int d = 1; d < p; ++d) bsp_put(d, &wanted, &wanted, 0, (int)sizeof wanted);
  bsp_sync();
  EXPECT_INT(p, wanted, "bsp_nprocs() after bsp_begin(%d) chosen by process 0", wanted);
  bsp_pop_reg(&wanted);
  bsp_sync();
  test_end();
}

int main(int argc, char **argv) {
  bsp_init(spmd, argc, argv);
  nprocs_wanted = argc > 1 ? atoi(argv[1]) : 1;
  spmd();
  printf("PASS spmd_init_maxprocs\n");
  return 0;
}
