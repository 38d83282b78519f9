/* A plain BSPlib program (no bspg extras, no test helpers), compiled by the test with bspcc:
 * the inner product of x with itself, x[i] = i + 1 for i < n, block-distributed; every process
 * gets the partial sums of all others with bsp_get and checks the total n(n+1)(2n+1)/6. */
#include <bsp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 1000;
  bsp_begin(bsp_nprocs());
  int p = bsp_nprocs(), s = bsp_pid();
  long lo = n * s / p, hi = n * (s + 1) / p;
  long long partial = 0;
  for (long i = lo; i < hi; ++i) partial += (long long)(i + 1) * (i + 1);
  long long *sums = malloc(sizeof(long long) * (size_t)p);
  bsp_push_reg(&partial, sizeof partial);
  bsp_sync();
  for (int t = 0; t < p; ++t) bsp_get(t, &partial, 0, &sums[t], sizeof partial);
  bsp_sync();
  long long total = 0;
  for (int t = 0; t < p; ++t) total += sums[t];
  long long want = (long long)n * (n + 1) * (2 * n + 1) / 6;
  if (total != want)
    bsp_abort("FAIL: inprod on process %d: expected %lld, got %lld\n", s, want, total);
  bsp_pop_reg(&partial);
  bsp_sync();
  free(sums);
  bsp_end();
  printf("PASS inprod %lld\n", total);
  return 0;
}
