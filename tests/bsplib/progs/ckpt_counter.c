/* ckpt_counter STEPS EVERY [crash STEP | bigger | slow MS]...: a computation whose answer any
 * lost, repeated or wrongly restored superstep changes. Every superstep each process folds in what
 * arrived at the last sync (a put into xin and a message), updates its persisted array, puts one
 * word and sends one message to its right neighbour; every EVERY supersteps it ends with
 * bspg_checkpoint instead of bsp_sync. The put and the message of a checkpoint's superstep arrive
 * at its sync, so a resumed run needs the persisted xin and the restored message queue.
 * "crash STEP": the last process kills itself (SIGKILL) in superstep STEP. "bigger": declares a
 * larger area (a resume must refuse it). "slow MS": every process sleeps MS milliseconds each
 * superstep (a job that stays a while). Process 0 prints "resumed from checkpoint N" and, at the
 * end, "RESULT <hash>". */
#include <bspg.h>
#include <signal.h>
#include <unistd.h>

#include "bsptest.h"

#define WORDS 1000

int main(int argc, char **argv) {
  if (argc < 3) {
    printf("FAIL: usage: ckpt_counter STEPS EVERY [crash STEP | bigger | slow MS]...\n");
    return 2;
  }
  long steps = atol(argv[1]), every = atol(argv[2]), crash_at = -1, slow_ms = 0;
  int bigger = 0;
  for (int a = 3; a < argc; ++a) {
    if (strcmp(argv[a], "crash") == 0 && a + 1 < argc) {
      crash_at = atol(argv[++a]);
    } else if (strcmp(argv[a], "slow") == 0 && a + 1 < argc) {
      slow_ms = atol(argv[++a]);
    } else if (strcmp(argv[a], "bigger") == 0) {
      bigger = 1;
    } else {
      printf("FAIL: ckpt_counter: unknown argument '%s'\n", argv[a]);
      return 2;
    }
  }
  test_begin(bsp_nprocs());
  int p = bsp_nprocs(), me = bsp_pid(), right = (me + 1) % p;
  unsigned long *x = test_alloc((WORDS + 1) * sizeof *x);
  unsigned long xin = 0, results[64];
  long step = 0;
  bsp_push_reg(&xin, (int)sizeof xin);
  bsp_push_reg(results, (int)sizeof results);
  bsp_sync();
  bspg_persist(x, (WORDS + (bigger ? 1 : 0)) * sizeof *x);
  bspg_persist(&xin, sizeof xin);
  bspg_persist(&step, sizeof step);
  int from = bspg_resume();
  if (from == 0) {
    for (int i = 0; i < WORDS; ++i) x[i] = (unsigned long)(me * 1000 + i);
  } else if (me == 0) {
    printf("resumed from checkpoint %d at step %ld\n", from, step);
  }
  for (;;) {
    /* What the last sync brought. */
    x[3] += xin;
    int n = 0, bytes = 0;
    bsp_qsize(&n, &bytes);
    EXPECT_INT(n, step == 0 ? 0 : 1, "messages at step %ld", step);
    for (int m = 0; m < n; ++m) {
      unsigned long v = 0;
      bsp_move(&v, (int)sizeof v);
      x[1] += v * 3;
    }
    if (step == steps) break;
    for (int i = 0; i < WORDS; ++i) x[i] = x[i] * 31 + (unsigned long)(i + step * 7 + me);
    bsp_put(right, &x[2], &xin, 0, (int)sizeof x[2]);
    bsp_send(right, NULL, &x[0], (int)sizeof x[0]);
    ++step;
    if (slow_ms > 0) usleep((useconds_t)slow_ms * 1000);
    if (step == crash_at && me == p - 1) {
      fflush(stdout);
      kill(getpid(), SIGKILL);
    }
    if (step % every == 0) {
      int c = bspg_checkpoint();
      if (me == 0) {
        printf("checkpoint %d at step %ld\n", c, step);
        fflush(stdout); /* tests wait for this line to act */
      }
    } else {
      bsp_sync();
    }
  }
  unsigned long hash = 1469598103934665603ul;
  for (int i = 0; i < WORDS; ++i) hash = (hash ^ x[i]) * 1099511628211ul;
  bsp_put(0, &hash, results, me * (int)sizeof hash, (int)sizeof hash);
  bsp_sync();
  if (me == 0) {
    unsigned long all = 0;
    for (int q = 0; q < p; ++q) all = all * 1000003ul + results[q];
    printf("RESULT %lu after %ld steps\n", all, step);
  }
  bsp_pop_reg(results);
  bsp_pop_reg(&xin);
  bsp_sync();
  test_end();
  free(x);
  return 0;
}
