/* segv.c - one process writes through a null pointer after the first superstep, while the others
 * wait in bsp_sync. Argument: which process, "first" (0) or "last" (p - 1). The job must stop
 * within seconds, with one line naming that process and SIGSEGV. */
#include <bsp.h>
#include <string.h>

int main(int argc, char **argv) {
  if (argc != 2 || (strcmp(argv[1], "first") != 0 && strcmp(argv[1], "last") != 0)) {
    fprintf(stderr, "usage: segv first|last\n");
    return 2;
  }
  bsp_begin(bsp_nprocs());
  int crasher = strcmp(argv[1], "first") == 0 ? 0 : bsp_nprocs() - 1;
  bsp_sync();
  if (bsp_pid() == crasher) {
    volatile int *volatile nowhere = NULL;
    *nowhere = 1;
  }
  for (int s = 0; s < 1000; ++s) bsp_sync();
  printf("SURVIVED %d\n", bsp_pid());
  bsp_end();
  return 0;
}
