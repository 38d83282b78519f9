/* output.c - every process prints a whole line and an unfinished one ("result so far: 42 on
 * P", no newline, no fflush), then the last process stops the job after the first superstep
 * while the others wait in bsp_sync or compute:
 *   output abort sync|busy   the last process calls bsp_abort
 *   output pop sync|busy     the last process pops an address it never registered (a misuse)
 *   output exit sync|busy    the last process calls exit(3)
 * Every process's output, the unfinished lines included, must come out before the job ends.
 * stdout is made fully buffered as a pipe's is (MPICH's MPI_Init makes it unbuffered). */
#include <bsp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
  const char *how = argc > 1 ? argv[1] : "abort";
  const int busy = argc > 2 && strcmp(argv[2], "busy") == 0;
  bsp_begin(bsp_nprocs());
  static char buffer[1 << 16];
  setvbuf(stdout, buffer, _IOFBF, sizeof buffer);
  const int p = bsp_nprocs(), s = bsp_pid();
  printf("whole line on %d\n", s);
  printf("result so far: 42 on %d", s);
  bsp_sync();
  if (s == p - 1) {
    sleep(1); /* the others are in their next sync, or deep in their loop, by now */
    if (strcmp(how, "pop") == 0) {
      int local = 0;
      bsp_pop_reg(&local);
    } else if (strcmp(how, "exit") == 0) {
      exit(3);
    } else {
      bsp_abort("output: process %d stops the job\n", s);
    }
  } else if (busy) {
    /* Computing, never calling bspg, for at most 60 s. */
    const time_t until = time(NULL) + 60;
    volatile unsigned long spins = 0;
    while (time(NULL) < until) ++spins;
  }
  for (int i = 0; i < 1000; ++i) bsp_sync();
  printf("\nSURVIVED %d\n", s);
  bsp_end();
  return 0;
}
