/* leave_early nprocs|init STATUS: a program that ends without an SPMD section, as programs do
 * when their arguments are wrong: it calls bsp_nprocs() (every process runs main) or
 * bsp_init(spmd, argc, argv) (only process 0 runs main, the others wait in bsp_begin), prints a
 * usage line and calls exit(STATUS). The run must end with STATUS and without a word from
 * Open MPI. */
#include "bsptest.h"

static void spmd(void) {
  bsp_begin(bsp_nprocs());
  printf("FAIL: leave_early: process %d entered the SPMD section\n", bsp_pid());
  bsp_end();
}

int main(int argc, char **argv) {
  if (argc != 3 || (strcmp(argv[1], "nprocs") != 0 && strcmp(argv[1], "init") != 0)) {
    printf("FAIL: usage: leave_early nprocs|init STATUS\n");
    return 2;
  }
  if (strcmp(argv[1], "init") == 0) bsp_init(spmd, argc, argv);
  printf("leave_early: usage: leave_early P (%d processes available)\n", bsp_nprocs());
  exit(atoi(argv[2]));
}
