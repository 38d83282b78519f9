/* SPMD basics: bsp_nprocs() before bsp_begin equals the processes started (argv[1]); inside,
 * bsp_nprocs() is that number and the pids are distinct and in range; after bsp_end only
 * process 0 continues (the CMake test counts the AFTER_END lines). */
#include "bsptest.h"

int main(int argc, char **argv) {
  if (argc < 2) {
    printf("FAIL: usage: spmd_begin_end <processes started>\n");
    return 1;
  }
  int started = atoi(argv[1]);
  int available = bsp_nprocs();
  EXPECT_INT(available, started, "bsp_nprocs() before bsp_begin");

  test_begin(available);
  int p = bsp_nprocs(), me = bsp_pid();
  EXPECT_INT(p, available, "bsp_nprocs() inside the SPMD section");
  EXPECT(me >= 0 && me < p, "bsp_pid() = %d is not in [0, %d)", me, p);
  printf("INSIDE %d\n", me);

  /* Every process writes its pid into slot [its pid] on every process: each slot must end up
   * holding its own index exactly once, which proves the pids are distinct. */
  int *seen = test_alloc(sizeof(int) * (size_t)p);
  for (int i = 0; i < p; ++i) seen[i] = -1;
  bsp_push_reg(seen, (int)sizeof(int) * p);
  bsp_sync();
  for (int d = 0; d < p; ++d) bsp_put(d, &me, seen, me * (int)sizeof(int), (int)sizeof(int));
  bsp_sync();
  for (int i = 0; i < p; ++i) EXPECT_INT(seen[i], i, "pid written into slot %d", i);
  EXPECT_INT(bsp_pid(), me, "bsp_pid() changed during the run");
  bsp_pop_reg(seen);
  bsp_sync();
  free(seen);
  test_end();

  printf("AFTER_END\n");
  printf("PASS spmd_begin_end\n");
  return 0;
}
