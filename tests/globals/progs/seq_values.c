/* seq_values - a MulticoreBSP-style program: main's sequential part puts the problem into global
 * variables (n from argv; the values from standard input, which only process 0 can read; numbers
 * derived from both), then the SPMD part computes with them on every process.
 *
 * Usage: printf 'k v1 ... vk' | seq_values init|begin n
 *   init:  main calls bsp_init first, then runs the sequential part, then the SPMD function (the
 *          processes other than 0 go from bsp_init straight to the SPMD function)
 *   begin: main runs the sequential part, then bsp_begin (every process runs main; only process
 *          0 reads the values)
 * Every process prints "pid s: n = N, k values, mean M" as it sees them; process 0 checks the
 * sum that the processes computed together and prints "PASS seq_values". */
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define MAX_VALUES 64

static int n = 0;
static int nvalues = 0;
static double values[MAX_VALUES];
static double mean = 0.0;      /* derived from the values */
static int values_per_process; /* derived from n and nvalues */

static void sequential_part(char **argv) {
  n = atoi(argv[2]);
  if (scanf("%d", &nvalues) != 1 || nvalues < 1 || nvalues > MAX_VALUES) nvalues = 0;
  double sum = 0.0;
  for (int i = 0; i < nvalues; i++) {
    if (scanf("%lf", &values[i]) != 1) values[i] = 0.0;
    sum += values[i];
  }
  if (nvalues > 0) {
    mean = sum / nvalues;
    values_per_process = n / nvalues;
  }
}

static void spmd(void) {
  bsp_begin(bsp_nprocs());
  const int p = bsp_nprocs(), s = bsp_pid();
  CHECK("seq_values", nvalues > 0, "no values (nvalues = %d, n = %d)", nvalues, n);
  CHECK("seq_values", values_per_process == n / nvalues, "values_per_process = %d",
        values_per_process);
  /* Each process adds n times the values i with i % p == s; process 0 gathers the parts. */
  double *parts = calloc((size_t)p, sizeof *parts);
  bsp_push_reg(parts, p * (int)sizeof *parts);
  bsp_sync();
  double mine = 0.0;
  for (int i = s; i < nvalues; i += p) mine += n * values[i];
  bsp_put(0, &mine, parts, s * (int)sizeof mine, (int)sizeof mine);
  bsp_sync();
  if (s == 0) {
    double total = 0.0;
    for (int q = 0; q < p; q++) total += parts[q];
    const double expected = n * mean * nvalues;
    CHECK("seq_values", total > expected - 1e-9 && total < expected + 1e-9, "total %g, expected %g",
          total, expected);
  }
  printf("pid %d: n = %d, %d values, mean %g\n", s, n, nvalues, mean);
  bsp_pop_reg(parts);
  bsp_sync();
  free(parts);
  bsp_end();
}

int main(int argc, char **argv) {
  if (argc != 3 || (strcmp(argv[1], "init") != 0 && strcmp(argv[1], "begin") != 0)) {
    printf("FAIL: usage: printf 'k v1 .. vk' | seq_values init|begin n\n");
    return 2;
  }
  if (strcmp(argv[1], "init") == 0) bsp_init(spmd, argc, argv);
  sequential_part(argv);
  spmd();
  printf("PASS seq_values\n");
  return 0;
}
