/* stack.c - the last process recurses without end after the first superstep (4 KiB a level),
 * while the others wait in bsp_sync. The fault on the stack's guard page leaves no stack to run
 * a handler on but an alternate one. The job must stop within seconds, with one line naming that
 * process and SIGSEGV. */
#include <bsp.h>

/* Far more levels than any stack holds; a variable, so that the compiler sees an end. */
static volatile long deepest = 1L << 40;

static long dive(long depth) {
  volatile char frame[4096];
  frame[0] = (char)depth;
  if (depth >= deepest) return frame[0];
  return dive(depth + 1) + frame[0];
}

int main(void) {
  bsp_begin(bsp_nprocs());
  bsp_sync();
  if (bsp_pid() == bsp_nprocs() - 1) printf("stack: %ld\n", dive(0));
  for (int s = 0; s < 1000; ++s) bsp_sync();
  printf("SURVIVED %d\n", bsp_pid());
  bsp_end();
  return 0;
}
