/* recover_init STEPS EVERY MS: a BSP job in the bsp_init style (process 0 runs main; the others
 * run the SPMD function only) for the recovery-in-place tests. main fills a global table, which
 * reaches the others at bsp_begin, and counts its own runs in a global: a recovery in place puts
 * the globals back, so process 0 prints "main run 1" every time main starts. Each superstep every
 * process mixes what reached it (a put and a message) into its persisted state and the table;
 * every EVERY supersteps ends with bspg_checkpoint; each sleeps MS ms. Process 0 prints
 * "checkpoint C at step S", "resumed from checkpoint C at step S" and, after bsp_end,
 * "RESULT <hash> after S steps". */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "bspg.h"

#define WORDS 256

static long steps, every, pause_ms;
static unsigned long table[64];
static int main_runs;
static unsigned long answer;

static void spmd(void) {
  bsp_begin(bsp_nprocs());
  int p = bsp_nprocs(), me = bsp_pid(), right = (me + 1) % p;
  unsigned long *x = malloc(WORDS * sizeof *x);
  unsigned long in = 0, out = 0;
  long step = 0;
  bsp_push_reg(&in, sizeof in);
  bsp_push_reg(&out, sizeof out);
  bsp_sync();
  bspg_persist(x, WORDS * sizeof *x);
  bspg_persist(&in, sizeof in);
  bspg_persist(&step, sizeof step);
  int from = bspg_resume();
  if (from == 0)
    for (int i = 0; i < WORDS; ++i) x[i] = (unsigned long)(me * 7919 + i) ^ table[i % 64];
  else if (me == 0)
    printf("resumed from checkpoint %d at step %ld\n", from, step);
  while (step < steps) {
    x[5] += in * 13;
    int n = 0, bytes = 0;
    bsp_qsize(&n, &bytes);
    for (int m = 0; m < n; ++m) {
      unsigned long v = 0;
      bsp_move(&v, sizeof v);
      x[9] ^= v + (unsigned long)step;
    }
    for (int i = 0; i < WORDS; ++i) x[i] = x[i] * 6364136223846793005UL + table[(i + step) % 64];
    bsp_put(right, &x[3], &in, 0, sizeof in);
    bsp_send(right, NULL, &x[7], sizeof x[7]);
    ++step;
    usleep((useconds_t)pause_ms * 1000);
    if (step % every == 0) {
      int c = bspg_checkpoint();
      if (me == 0) {
        printf("checkpoint %d at step %ld\n", c, step);
        fflush(stdout); /* tests wait for this line to act */
      }
    } else
      bsp_sync();
  }
  for (int i = 0; i < WORDS; ++i) out = out * 31 + x[i];
  bsp_sync();
  unsigned long sum = 0;
  for (int q = 0; q < p; ++q) {
    unsigned long theirs = 0;
    bsp_get(q, &out, 0, &theirs, sizeof theirs);
    bsp_sync();
    sum = sum * 1000003 + theirs;
  }
  if (me == 0) answer = sum;
  free(x);
  bsp_end();
}

int main(int argc, char **argv) {
  ++main_runs;
  if (argc != 4) {
    fprintf(stderr, "usage: recover_init STEPS EVERY MS\n");
    return 2;
  }
  steps = atol(argv[1]);
  every = atol(argv[2]);
  pause_ms = atol(argv[3]);
  for (int i = 0; i < 64; ++i) table[i] = (unsigned long)i * 2654435761UL + 17;
  printf("main run %d\n", main_runs);
  bsp_init(spmd, argc, argv);
  spmd();
  printf("RESULT %lu after %ld steps\n", answer, steps);
  return 0;
}
