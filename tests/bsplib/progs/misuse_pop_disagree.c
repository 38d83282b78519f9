/* misuse_pop_disagree [partial|order]: processes pop different registrations in the same
 * superstep (process 0 pops the first, the others the second); with "partial" only process 0
 * pops; with "order" process 0 pushes then pops while the others pop then push.
 * Expected: "bsp_pop_reg: processes disagree", once. Needs p >= 2. */
#include "misuse.h"

int main(int argc, char **argv) {
  int partial = argc > 1 && strcmp(argv[1], "partial") == 0;
  int order = argc > 1 && strcmp(argv[1], "order") == 0;
  test_begin(bsp_nprocs());
  int p = bsp_nprocs(), me = bsp_pid();
  EXPECT(p >= 2, "misuse_pop_disagree needs at least 2 processes, has %d", p);
  int first[4], second[4];
  bsp_push_reg(first, (int)sizeof first);
  bsp_push_reg(second, (int)sizeof second);
  bsp_sync();
  if (order) {
    int third[4];
    if (me == 0) {
      bsp_push_reg(third, (int)sizeof third);
      bsp_pop_reg(first);
    } else {
      bsp_pop_reg(first);
      bsp_push_reg(third, (int)sizeof third);
    }
  } else if (me == 0) {
    bsp_pop_reg(first);
  } else if (!partial) {
    bsp_pop_reg(second);
  }
  bsp_sync();
  MISUSE_NOT_CAUGHT("processes popped different registrations and the sync accepted it");
}
