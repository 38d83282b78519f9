/* segv.c - one process writes through a null pointer after the first superstep, while the others
 * wait in bsp_sync. Argument: which process, "first" (0) or "last" (p - 1); "last-computing": the
 * last, while the others compute for a minute; "last-lent": the last, right after a bsp_put of
 * 1 MiB whose pages may be lent (BSPG_LEND_PUTS). The job must stop within seconds, with one line
 * naming that process and SIGSEGV. */
#include <bsp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int main(int argc, char **argv) {
  if (argc != 2 || (strcmp(argv[1], "first") != 0 && strcmp(argv[1], "last") != 0 &&
                    strcmp(argv[1], "last-computing") != 0 && strcmp(argv[1], "last-lent") != 0)) {
    fprintf(stderr, "usage: segv first|last|last-computing|last-lent\n");
    return 2;
  }
  bsp_begin(bsp_nprocs());
  int crasher = strcmp(argv[1], "first") == 0 ? 0 : bsp_nprocs() - 1;
  const size_t bytes = (size_t)1 << 20;
  char *area = malloc(bytes), *source = aligned_alloc(4096, bytes);
  if (area == NULL || source == NULL) return 1;
  memset(source, 1, bytes);
  bsp_push_reg(area, (int)bytes);
  bsp_sync();
  if (bsp_pid() == crasher && strcmp(argv[1], "last-lent") == 0)
    bsp_put((crasher + 1) % bsp_nprocs(), source, area, 0, (int)bytes);
  if (bsp_pid() == crasher) {
    volatile int *volatile nowhere = NULL;
    *nowhere = 1;
  }
  if (strcmp(argv[1], "last-computing") == 0) {
    const time_t until = time(NULL) + 60;
    volatile unsigned long spins = 0;
    while (time(NULL) < until) ++spins;
  }
  for (int s = 0; s < 1000; ++s) bsp_sync();
  printf("SURVIVED %d\n", bsp_pid());
  bsp_end();
  return 0;
}
