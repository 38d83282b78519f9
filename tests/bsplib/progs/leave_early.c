/* leave_early nprocs|init|spawned STATUS: a program that ends without an SPMD section, as
 * programs do when their arguments are wrong: it calls bsp_nprocs() (every process runs main) or
 * bsp_init(spmd, argc, argv) (only process 0 runs main, the others wait in bsp_begin), prints a
 * usage line and calls exit(STATUS). The run must end with STATUS and without a word from
 * Open MPI. spawned, for master mode: the master calls bsp_begin(2), and the process it spawns
 * (which finds BSPG_SUBJOB_SIZES=2 from the start) is the one that ends, while the master waits
 * for it: that is an error, which must stop the master rather than leave it waiting. */
#include "bsptest.h"

static void spmd(void) {
  bsp_begin(bsp_nprocs());
  printf("FAIL: leave_early: process %d entered the SPMD section\n", bsp_pid());
  bsp_end();
}

int main(int argc, char **argv) {
  if (argc != 3 || (strcmp(argv[1], "nprocs") != 0 && strcmp(argv[1], "init") != 0 &&
                    strcmp(argv[1], "spawned") != 0)) {
    printf("FAIL: usage: leave_early nprocs|init|spawned STATUS\n");
    return 2;
  }
  if (strcmp(argv[1], "init") == 0) bsp_init(spmd, argc, argv);
  const char *sizes = getenv("BSPG_SUBJOB_SIZES");
  if (strcmp(argv[1], "spawned") == 0 && (sizes == NULL || strcmp(sizes, "2") != 0)) {
    bsp_begin(2);
    printf("FAIL: leave_early: process %d went on without the spawned process\n", bsp_pid());
    bsp_end();
    return 1;
  }
  printf("leave_early: usage: leave_early P (%d processes available)\n", bsp_nprocs());
  exit(atoi(argv[2]));
}
