/* bsp_vabort through a varargs wrapper, called by process 0 only. */
#include <stdarg.h>

#include "bsptest.h"

static void give_up(const char *format, ...) {
  va_list args;
  va_start(args, format);
  bsp_vabort(format, args);
  va_end(args);
}

int main(void) {
  test_begin(bsp_nprocs());
  int me = bsp_pid();
  bsp_sync();
  if (me == 0) give_up("abort_vabort: %s %d %.1f\n", "wrapper says", 7, 2.5);
  for (int s = 0; s < 100; ++s) bsp_sync();
  printf("FAIL: abort_vabort: process %d went on after bsp_vabort\n", me);
  test_end();
  return 0;
}
