/* inprod.c - inner product of two distributed vectors of length n (default 1000000), the
 * classic first BSP program: local sums, then every process gets all partial sums (bsp_put),
 * and adds them. Usage: inprod [n] */
#include <stdio.h>
#include <stdlib.h>

#include "bsp.h"

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 1000000;
  bsp_begin(bsp_nprocs());
  int p = bsp_nprocs(), s = bsp_pid();
  if (n < 1) bsp_abort("inprod: n must be positive, got %ld\n", n);
  /* Cyclic distribution: process s holds x[i] = y[i] = i for i = s, s+p, ... */
  long long local = 0;
  for (long i = s; i < n; i += p) local += (long long)i * i;
  long long *partial = calloc((size_t)p, sizeof(long long));
  bsp_push_reg(partial, p * (int)sizeof(long long));
  bsp_sync();
  for (int t = 0; t < p; t++)
    bsp_put(t, &local, partial, s * (int)sizeof(long long), (int)sizeof(long long));
  bsp_sync();
  long long total = 0;
  for (int t = 0; t < p; t++) total += partial[t];
  long long expected = (long long)(n - 1) * n * (2 * n - 1) / 6;
  if (s == 0)
    printf("inner product of length %ld on %d processes: %lld (expected %lld)\n", n, p, total,
           expected);
  bsp_pop_reg(partial);
  free(partial);
  bsp_end();
  return 0;
}
