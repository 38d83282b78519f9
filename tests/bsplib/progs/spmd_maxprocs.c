/* bsp_begin(maxprocs) starts min(maxprocs, available) processes.
 *   spmd_maxprocs fewer : maxprocs = available - 1 (1 when only one is available); the
 *                         processes left out exit 0 and print nothing.
 *   spmd_maxprocs more  : maxprocs = available + 3; every available process takes part.
 * Each process inside prints one INSIDE line; the CMake test counts them and all lines. */
#include "bsptest.h"

int main(int argc, char **argv) {
  if (argc < 2 || (strcmp(argv[1], "fewer") != 0 && strcmp(argv[1], "more") != 0)) {
    printf("FAIL: usage: spmd_maxprocs fewer|more\n");
    return 1;
  }
  int fewer = strcmp(argv[1], "fewer") == 0;
  int available = bsp_nprocs();
  int maxprocs = fewer ? (available > 1 ? available - 1 : 1) : available + 3;
  int want = fewer ? maxprocs : available;

  test_begin(maxprocs);
  int p = bsp_nprocs(), me = bsp_pid();
  EXPECT_INT(p, want, "bsp_nprocs() after bsp_begin(%d) with %d available", maxprocs, available);
  EXPECT(me >= 0 && me < p, "bsp_pid() = %d is not in [0, %d)", me, p);
  printf("INSIDE %d\n", me);

  /* The started processes communicate among themselves: a ring of puts and a sum via gets. */
  int left = -1;
  bsp_push_reg(&left, (int)sizeof left);
  bsp_sync();
  bsp_put((me + 1) % p, &me, &left, 0, (int)sizeof me);
  bsp_sync();
  EXPECT_INT(left, (me + p - 1) % p, "value put by the left neighbour");
  int *all = test_alloc(sizeof(int) * (size_t)p);
  for (int s = 0; s < p; ++s) bsp_get(s, &left, 0, &all[s], (int)sizeof(int));
  bsp_sync();
  for (int s = 0; s < p; ++s) EXPECT_INT(all[s], (s + p - 1) % p, "value got from process %d", s);
  bsp_pop_reg(&left);
  bsp_sync();
  free(all);
  test_end();

  printf("AFTER_END\n");
  printf("PASS spmd_maxprocs\n");
  return 0;
}
