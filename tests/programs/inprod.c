/* inprod - the classic first BSP program (after BSPedupack's bspinprod), started with bsp_init:
 * main runs on process 0 alone before the SPMD part, reads how many processes to use (P) and
 * the vector length (n) from its arguments and keeps them in globals that only process 0 has.
 * The SPMD part is a separate function that calls bsp_begin(P); process 0 then broadcasts n.
 *
 * Usage: inprod n [P]    (P = 0 or missing: every available process)
 *        inprod -         (BSPedupack style: main reads P from standard input, and process 0
 *                          reads n from it inside the SPMD part, after bsp_begin)
 * x is distributed cyclically, x[i] = i + 1; the program computes x.x and x.y with
 * y[i] = (-1)^i in one communication superstep and checks both against closed forms. */
#include <string.h>

#include "check.h"

static int P;            /* processes wanted: set by main, so only valid on process 0 */
static long n_input;     /* vector length: likewise only on process 0 */
static int n_from_stdin; /* process 0 reads n from stdin inside the SPMD part */
static int available_before_begin;

/* Number of vector entries process s owns under the cyclic distribution. */
static long nloc(int p, int s, long n) { return (n + p - s - 1) / p; }

static void bspinprod(void) {
  bsp_begin(P);
  check_program = "inprod"; /* main set it on process 0 only */
  int p = bsp_nprocs(), s = bsp_pid();

  long n = 0;
  bsp_push_reg(&n, (int)sizeof n);
  bsp_sync();
  if (s == 0) {
    if (n_from_stdin) {
      printf("Please enter n:\n");
      fflush(stdout);
      if (scanf("%ld", &n_input) != 1) n_input = -1;
    }
    n = n_input;
    for (int t = 1; t < p; t++) bsp_put(t, &n, &n, 0, (int)sizeof n);
  }
  bsp_sync();
  bsp_pop_reg(&n);
  CHECK(n > 0, "n = %ld after the broadcast from process 0", n);

  /* Every process knows P only through process 0's choice: bsp_nprocs() must agree with it. */
  int wanted = P;
  bsp_push_reg(&wanted, (int)sizeof wanted);
  bsp_sync();
  if (s == 0)
    for (int t = 1; t < p; t++) bsp_put(t, &wanted, &wanted, 0, (int)sizeof wanted);
  bsp_sync();
  bsp_pop_reg(&wanted);
  int expected_p = wanted < available_before_begin && wanted > 0 ? wanted : available_before_begin;
  if (s == 0) CHECK_LONG(p, expected_p, "bsp_nprocs() after bsp_begin(%d)", wanted);

  long mine = nloc(p, s, n);
  double *x = check_malloc((size_t)mine * sizeof *x);
  for (long i = 0; i < mine; i++) x[i] = (double)(i * p + s + 1);

  /* Two partial sums per process, gathered on every process: sums[2*t], sums[2*t+1]. */
  double *sums = check_malloc((size_t)(2 * p) * sizeof *sums);
  bsp_push_reg(sums, 2 * p * (int)sizeof *sums);
  bsp_sync();

  double start = bsp_time();
  double local[2] = {0.0, 0.0};
  for (long i = 0; i < mine; i++) {
    long global = i * p + s;
    local[0] += x[i] * x[i];
    local[1] += (global % 2 == 0 ? 1.0 : -1.0) * x[i];
  }
  for (int t = 0; t < p; t++)
    bsp_put(t, local, sums, 2 * s * (int)sizeof(double), 2 * (int)sizeof(double));
  bsp_sync();

  double xx = 0.0, xy = 0.0;
  for (int t = 0; t < p; t++) {
    xx += sums[2 * t];
    xy += sums[2 * t + 1];
  }
  double elapsed = bsp_time() - start;
  CHECK(elapsed >= 0.0, "bsp_time went backwards by %g s", -elapsed);

  /* Closed forms: sum (i+1)^2 and the alternating sum 1 - 2 + 3 - ... (exact in double here). */
  double want_xx = (double)n * (double)(n + 1) * (double)(2 * n + 1) / 6.0;
  double want_xy = n % 2 == 0 ? -(double)(n / 2) : (double)((n + 1) / 2);
  CHECK(xx == want_xx, "x.x = %.0f, expected %.0f (n = %ld, p = %d)", xx, want_xx, n, p);
  CHECK(xy == want_xy, "x.y = %.0f, expected %.0f (n = %ld, p = %d)", xy, want_xy, n, p);

  bsp_pop_reg(sums);
  bsp_sync();
  free(sums);
  free(x);
  if (s == 0) printf("inprod: n = %ld, p = %d, x.x = %.0f\n", n, p, xx);
  bsp_end();
}

int main(int argc, char **argv) {
  bsp_init(bspinprod, argc, argv);
  check_program = "inprod";
  available_before_begin = bsp_nprocs();
  if (argc > 1 && strcmp(argv[1], "-") == 0) {
    printf("How many processors do you want to use?\n");
    fflush(stdout);
    if (scanf("%d", &P) != 1) P = 0;
    n_from_stdin = 1;
  } else {
    n_input = argc > 1 ? atol(argv[1]) : 0;
    P = argc > 2 ? atoi(argv[2]) : 0;
  }
  if (P <= 0) P = available_before_begin;
  bspinprod();
  printf("PASS inprod\n");
  return 0;
}
