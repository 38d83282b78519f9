/* spawned_end_early: bsp_begin in main without bsp_init, after main reads P from standard input.
 * In master mode the processes bsp_begin spawns run main too, read end-of-file and end before
 * their bsp_begin, which the master waits in: the job must stop with one line that says so and a
 * non-zero status, never crash (two or more such processes crashed in Open MPI's abort). */
#include <bsp.h>
#include <stdio.h>

int main(void) {
  int P = 0;
  if (scanf("%d", &P) != 1) {
    printf("no input here\n");
    return 0;
  }
  bsp_begin(P);
  printf("FAIL spawned_end_early: process %d reached the section\n", bsp_pid());
  bsp_end();
  return 0;
}
