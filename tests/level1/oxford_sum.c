/* An Oxford-toolset style program, built by the test with bspcc alone: process 0 reads n (here
 * from the command line) and broadcasts it with bsp_bcast; every process sums its block of
 * 1..n; bsp_sumI gives the total everywhere. */
#include <stdio.h>
#include <stdlib.h>
#include "bsp.h"
#include "bsp_level1.h"

int main(int argc, char *argv[]) {
  int n = 0, i, lo, hi, partial = 0, total;
  bsp_begin(bsp_nprocs());
  if (bsp_pid() == 0) n = argc > 1 ? atoi(argv[1]) : 100;
  bsp_bcast(0, &n, &n, sizeof(int));
  lo = (int)((long)n * bsp_pid() / bsp_nprocs());
  hi = (int)((long)n * (bsp_pid() + 1) / bsp_nprocs());
  for (i = lo + 1; i <= hi; i++) partial += i;
  total = bsp_sumI(partial);
  if (total != n * (n + 1) / 2)
    bsp_abort("FAIL: oxford_sum on process %d: %d instead of %d\n", bsp_pid(), total,
              n * (n + 1) / 2);
  if (bsp_pid() == 0) printf("PASS oxford_sum %d on %d processes\n", total, bsp_nprocs());
  bsp_end();
  return 0;
}
