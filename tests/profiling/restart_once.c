/* restart_once.c - a checkpointed BSP program that loses a process once, for the profiler's
 * restart test: 8 supersteps, each process puts 200 bytes to its right neighbour in each; a
 * checkpoint after superstep 3; in the first run (nothing to resume) process 1 kills itself
 * (SIGKILL, as a lost host would end it) in superstep 5. bsprun --restarts 1 restarts the job
 * from the checkpoint, and process 0 prints "PASS restart_once resumed from 1". */
#include <bsp.h>
#include <bspg.h>
#include <signal.h>
#include <stdio.h>

static char in[200], out[200];

int main(void) {
  bsp_begin(bsp_nprocs());
  const int p = bsp_nprocs(), s = bsp_pid();
  int step = 0;
  bspg_persist(&step, sizeof step);
  bsp_push_reg(in, sizeof in);
  bsp_sync();
  const int resumed = bspg_resume();
  while (step < 8) {
    if (!resumed && step == 5 && s == 1 % p && p > 1) raise(SIGKILL);
    bsp_put((s + 1) % p, out, in, 0, sizeof out);
    ++step;
    if (step == 3) bspg_checkpoint();
    else bsp_sync();
  }
  if (s == 0) printf("PASS restart_once resumed from %d\n", resumed);
  bsp_end();
  return 0;
}
