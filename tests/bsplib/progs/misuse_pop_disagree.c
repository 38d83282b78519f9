/* misuse_pop_disagree [partial]: processes pop different registrations in the same superstep
 * (process 0 pops the first, the others the second), or with "partial" only process 0 pops.
 * Expected: "bsp_pop_reg: processes disagree", once. Needs p >= 2. */
#include "misuse.h"

int main(int argc, char **argv) {
  int partial = argc > 1 && strcmp(argv[1], "partial") == 0;
  test_begin(bsp_nprocs());
  int p = bsp_nprocs(), me = bsp_pid();
  EXPECT(p >= 2, "misuse_pop_disagree needs at least 2 processes, has %d", p);
  int first[4], second[4];
  bsp_push_reg(first, (int)sizeof first);
  bsp_push_reg(second, (int)sizeof second);
  bsp_sync();
  if (me == 0) bsp_pop_reg(first);
  else if (!partial) bsp_pop_reg(second);
  bsp_sync();
  MISUSE_NOT_CAUGHT("processes popped different registrations and the sync accepted it");
}
