/* group_outside.c - a put to a process outside the group, ended by a group sync, is misuse. */
#include "bspg.h"

int main(void) {
  bsp_begin(bsp_nprocs());
  int s = bsp_pid(), x = 0;
  bsp_push_reg(&x, sizeof x);
  bsp_sync();
  int alone = bspg_group_split(s); /* every process its own group */
  if (s == 0) bsp_put(1, &s, &x, 0, sizeof s);
  bspg_group_sync(alone);
  bsp_end();
  return 0;
}
