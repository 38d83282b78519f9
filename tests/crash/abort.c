/* abort.c - the last process calls abort() after the first superstep, while the others wait in
 * bsp_sync. The job must stop within seconds, with one line naming that process and SIGABRT. */
#include <bsp.h>
#include <stdlib.h>

int main(void) {
  bsp_begin(bsp_nprocs());
  bsp_sync();
  if (bsp_pid() == bsp_nprocs() - 1) abort();
  for (int s = 0; s < 1000; ++s) bsp_sync();
  printf("SURVIVED %d\n", bsp_pid());
  bsp_end();
  return 0;
}
