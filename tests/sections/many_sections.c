/* many_sections N: N SPMD sections in a loop from one bsp_init'ed function, section k asking for
 * 1 + k % available processes, each one summing its pids with bsp_put and checking the sum.
 * Between sections main checks what the section left in a global. The processes that are not
 * needed in a section must be there again for the next larger one. */
#include <bsp.h>
#include <stdio.h>
#include <stdlib.h>

static int want;
static long result;

static void section(void) {
  bsp_begin(want);
  int p = bsp_nprocs(), s = bsp_pid();
  long *sums = calloc((size_t)p, sizeof *sums);
  bsp_push_reg(sums, (int)(p * sizeof *sums));
  bsp_sync();
  long mine = s + 1;
  for (int t = 0; t < p; ++t) bsp_put(t, &mine, sums, (int)(s * sizeof mine), sizeof mine);
  bsp_sync();
  long sum = 0;
  for (int t = 0; t < p; ++t) sum += sums[t];
  if (sum != (long)p * (p + 1) / 2) bsp_abort("FAIL many_sections: process %d: sum %ld\n", s, sum);
  if (s == 0) result = sum;
  bsp_pop_reg(sums);
  bsp_sync();
  free(sums);
  bsp_end();
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 10;
  bsp_init(section, argc, argv);
  int available = bsp_nprocs();
  for (int k = 0; k < n; ++k) {
    want = 1 + k % available;
    result = -1;
    section();
    if (result != (long)want * (want + 1) / 2) {
      printf("FAIL many_sections: section %d with %d processes gave %ld\n", k, want, result);
      return 1;
    }
  }
  printf("PASS many_sections\n");
  return 0;
}
