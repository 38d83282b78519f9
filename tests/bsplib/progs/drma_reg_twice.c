/* The same address registered twice (4 ints, then 8 ints): puts use the most recent
 * registration (offset 6 ints is fine), and bsp_pop_reg removes the most recent one: after
 * it, offset 2 still works (4-int registration left).
 *   drma_reg_twice          the above; prints PASS
 *   drma_reg_twice misuse   then process 0 puts at offset 6 ints, beyond the 4-int
 *                           registration left: must stop with "bsp_put: ... beyond". */
#include "bsptest.h"

int main(int argc, char **argv) {
  int misuse = argc > 1 && strcmp(argv[1], "misuse") == 0;
  test_begin(bsp_nprocs());
  int p = bsp_nprocs(), me = bsp_pid();
  int right = (me + 1) % p, left = (me + p - 1) % p;
  int area[8];
  for (int i = 0; i < 8; ++i) area[i] = -1;
  bsp_push_reg(area, 4 * (int)sizeof(int));
  bsp_push_reg(area, 8 * (int)sizeof(int));
  bsp_sync();
  int value = 600 + me;
  bsp_put(right, &value, area, 6 * (int)sizeof(int), (int)sizeof value);
  bsp_sync();
  EXPECT_INT(area[6], 600 + left, "area[6] put through the 8-int registration");

  bsp_pop_reg(area);
  bsp_sync();
  value = 200 + me;
  bsp_put(right, &value, area, 2 * (int)sizeof(int), (int)sizeof value);
  bsp_sync();
  EXPECT_INT(area[2], 200 + left, "area[2] put through the 4-int registration left after the pop");

  if (misuse) {
    if (me == 0) bsp_put(right, &value, area, 6 * (int)sizeof(int), (int)sizeof value);
    bsp_sync();
    EXPECT(0, "a put at offset 24 into a 16-byte registration was accepted");
  }
  bsp_pop_reg(area);
  bsp_sync();
  test_end();
  printf("PASS drma_reg_twice\n");
  return 0;
}
