/* begin_then_init: a first SPMD section started by bsp_begin in main (no bsp_init: every process
 * runs main up to there), then two later sections through bsp_init (MulticoreBSP's hello world
 * habit), each with its data checked; bsp_nprocs() after each section is that section's P until
 * the next bsp_init, then what is available. Process 0 prints "PASS begin_then_init". */
#include <bsp.h>
#include <stdio.h>
#include <stdlib.h>

static int wanted;

static void later(void) {
  bsp_begin(wanted);
  const int p = bsp_nprocs(), s = bsp_pid();
  int sum = 0;
  bsp_push_reg(&sum, sizeof sum);
  bsp_sync();
  const int mine = s + 1;
  for (int q = 0; q < p; ++q) bsp_put(q, &mine, &sum, 0, 0); /* size 0: allowed, no effect */
  bsp_send(0, NULL, &mine, sizeof mine);
  bsp_sync();
  if (s == 0) {
    int messages = 0, bytes = 0, total = 0;
    bsp_qsize(&messages, &bytes);
    for (int m = 0; m < messages; ++m) {
      int v = 0;
      bsp_move(&v, sizeof v);
      total += v;
    }
    if (total != p * (p + 1) / 2) bsp_abort("FAIL begin_then_init: sum %d on %d\n", total, p);
    printf("later section: %d processes\n", p);
  }
  bsp_pop_reg(&sum);
  bsp_end();
}

int main(int argc, char **argv) {
  bsp_begin(bsp_nprocs());
  const int first = bsp_nprocs();
  printf("first section: %d of %d\n", bsp_pid(), first);
  bsp_end();
  if (bsp_nprocs() != first) {
    printf("FAIL begin_then_init: bsp_nprocs() after the first section is %d, not %d\n",
           bsp_nprocs(), first);
    return 1;
  }
  for (int round = 0; round < 2; ++round) {
    bsp_init(later, argc, argv);
    wanted = round == 0 ? (bsp_nprocs() > 1 ? bsp_nprocs() - 1 : 1) : bsp_nprocs();
    later();
    if (bsp_nprocs() != wanted) {
      printf("FAIL begin_then_init: bsp_nprocs() after a later section is %d, not %d\n",
             bsp_nprocs(), wanted);
      return 1;
    }
  }
  printf("PASS begin_then_init\n");
  return 0;
}
