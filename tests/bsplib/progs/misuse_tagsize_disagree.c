/* misuse_tagsize_disagree [partial]: process 0 sets tag size 4, the others 8 (with "partial":
 * the others do not call bsp_set_tagsize), in the same superstep.
 * Expected: "bsp_set_tagsize: processes disagree", once. Needs p >= 2. */
#include "misuse.h"

int main(int argc, char **argv) {
  int partial = argc > 1 && strcmp(argv[1], "partial") == 0;
  test_begin(bsp_nprocs());
  int p = bsp_nprocs(), me = bsp_pid();
  EXPECT(p >= 2, "misuse_tagsize_disagree needs at least 2 processes, has %d", p);
  int size = me == 0 ? 4 : 8;
  if (me == 0 || !partial) bsp_set_tagsize(&size);
  bsp_sync();
  MISUSE_NOT_CAUGHT("processes set different tag sizes and the sync accepted it");
}
