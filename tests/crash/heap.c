/* heap.c - the last process frees a 4 KiB block twice after the first superstep, while the others
 * wait in bsp_sync. glibc finds the corruption inside free, with the heap's lock held, and aborts
 * ("double free or corruption"): a SIGABRT handler that allocates then waits for ever on that
 * lock. The job must stop within seconds, with one line naming that process and SIGABRT. */
#include <bsp.h>
#include <stdlib.h>
#include <string.h>

/* Called through a volatile pointer: the compiler does not see (or warn about) the second free. */
static void (*volatile release)(void *) = free;

int main(void) {
  bsp_begin(bsp_nprocs());
  bsp_sync();
  if (bsp_pid() == bsp_nprocs() - 1) {
    /* Too large for glibc's per-thread cache, and kept from the top of the heap by a block after
     * it: the second free takes the locked path and finds the block already free. */
    char *block = malloc(4096);
    char *after = malloc(64);
    memset(block, 1, 4096);
    memset(after, 2, 64);
    release(block);
    release(block);
    printf("heap: the double free went unnoticed (%d)\n", after[0]);
  }
  for (int s = 0; s < 1000; ++s) bsp_sync();
  printf("SURVIVED %d\n", bsp_pid());
  bsp_end();
  return 0;
}
