/* leave_early nprocs|init|spawned STATUS: a program that ends without an SPMD section, as
 * programs do when their arguments are wrong: it calls bsp_nprocs() or
 * bsp_init(spmd, argc, argv) (either way only process 0 runs main; the others wait), prints a
 * usage line and calls exit(STATUS). The run must end with STATUS and without a word from
 * Open MPI. spawned, for master mode: the master calls bsp_begin(2), and the process it spawns
 * (which finds BSPG_SUBJOB_SIZES=2 from the start) is the one that ends, while the master waits
 * for it: that is an error, which must stop the master rather than leave it waiting. */
#include "bsptest.h"

int main(int argc, char **argv) {
  if (argc != 3 || (strcmp(argv[1], "nprocs") != 0 && strcmp(argv[1], "init") != 0 &&
                    strcmp(argv[1], "spawned") != 0)) {
    printf("FAIL: usage: leave_early nprocs|init|spawned STATUS\n");
    return 2;
  }
  if (strcmp(argv[1], "init") == 0) bsp_init(test_spmd_not_reached, argc, argv);
  if (strcmp(argv[1], "spawned") == 0) test_master_waits_in_begin();
  printf("leave_early: usage: leave_early P (%d processes available)\n", bsp_nprocs());
  exit(atoi(argv[2]));
}
