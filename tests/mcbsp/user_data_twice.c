/* user_data_twice.c - a second bsp_init_with_user_data (a second SPMD section with user data,
 * as a Bulk program that spawns twice makes): the other processes cannot see process 0's new data,
 * so bspg stops the job with one line that names the call and says why. */
#include <mcbsp.h>
#include <stdio.h>

static void spmd(void *data) {
  bsp_begin(bsp_nprocs());
  if (bsp_pid() == 0) *(int *)data += 1;
  bsp_end();
}

int main(int argc, char **argv) {
  int sections = 0;
  bsp_init_with_user_data(spmd, argc, argv, &sections);
  spmd(&sections);
  /* On stderr, like bspg's line after it: an MPI starter may interleave the two streams. */
  fprintf(stderr, "first section done (%d)\n", sections);
  bsp_init_with_user_data(spmd, argc, argv, &sections);
  spmd(&sections);
  printf("FAIL: a second section with user data ran\n");
  return 0;
}
