/* bsp_abort from every process at once: the job stops with a non-zero exit and the message. */
#include "bsptest.h"

int main(void) {
  test_begin(bsp_nprocs());
  int me = bsp_pid();
  bsp_sync();
  bsp_abort("abort_all: process %d gives up\n", me);
  printf("FAIL: abort_all: process %d returned from bsp_abort\n", me);
  test_end();
  return 0;
}
