/* Process 0 registers two areas, the others one, in the same superstep.
 * Expected: "bsp_push_reg: processes disagree", once. Needs p >= 2. */
#include "misuse.h"

int main(void) {
  test_begin(bsp_nprocs());
  int p = bsp_nprocs(), me = bsp_pid();
  EXPECT(p >= 2, "misuse_push_disagree needs at least 2 processes, has %d", p);
  int first[4], second[4];
  bsp_push_reg(first, (int)sizeof first);
  if (me == 0) bsp_push_reg(second, (int)sizeof second);
  bsp_sync();
  MISUSE_NOT_CAUGHT("processes made different numbers of registrations and the sync accepted it");
}
