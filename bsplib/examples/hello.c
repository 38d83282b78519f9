/* hello.c - every process says hello; process 0 then collects all pids with bsp_put. */
#include <stdio.h>
#include <stdlib.h>

#include "bsp.h"

int main(void) {
  bsp_begin(bsp_nprocs());
  int p = bsp_nprocs(), s = bsp_pid();
  int *pids = calloc((size_t)p, sizeof(int));
  bsp_push_reg(pids, p * (int)sizeof(int));
  bsp_sync();
  bsp_put(0, &s, pids, s * (int)sizeof(int), (int)sizeof(int));
  printf("hello from process %d of %d\n", s, p);
  bsp_sync();
  if (s == 0) {
    int sum = 0;
    for (int i = 0; i < p; i++) sum += pids[i];
    printf("process 0 collected pids summing to %d (expected %d)\n", sum, p * (p - 1) / 2);
  }
  bsp_pop_reg(pids);
  free(pids);
  bsp_end();
  return 0;
}
