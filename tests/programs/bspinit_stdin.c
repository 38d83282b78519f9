/* bspinit_stdin - the BSPedupack way of starting: main calls bsp_init(spmd, argc, argv) first,
 * then, on process 0 only, asks for the number of processes P and the problem size n (from
 * argv[1], argv[2] if given, otherwise from standard input), checks P against bsp_nprocs()
 * (the processes available, before bsp_begin), and calls the SPMD function itself. The other
 * processes enter the SPMD function straight from bsp_init, with the global P never set
 * (still 0), and call bsp_begin(P) with it.
 *
 * Usage: bspinit_stdin [P [n [available]]]   (P may be less than, or more than, what mpirun
 * started; bsp_begin then uses min(P, available) processes and the others exit with status 0).
 *
 * Inside: process 0 distributes n with bsp_put, every process sums i^2 over its cyclic share,
 * the partial sums go to process 0 (bsp_put), the total comes back to everyone (bsp_get).
 * bsp_time must start near 0, never go backwards, and see real time pass. Only process 0
 * prints (apart from failures). */
#include <string.h>
#include <time.h>

#include "check.h"

int P; /* set on process 0 by main only, as in BSPedupack */
static int n_asked, avail_expected = -1, avail_seen = -1;

static double wall(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void spmd(void) {
  bsp_begin(P);
  check_program = "bspinit_stdin";
  int p = bsp_nprocs(), s = bsp_pid();
  double t_first = bsp_time();
  CHECK(t_first >= 0.0 && t_first < 10.0, "bsp_time right after bsp_begin is %g", t_first);
  CHECK(s >= 0 && s < p, "bsp_pid %d of %d", s, p);

  int n = -1, P_on0 = -1;
  long total = -1;
  long *partial = check_malloc((size_t)p * sizeof(long));
  bsp_push_reg(&n, (int)sizeof n);
  bsp_push_reg(&P_on0, (int)sizeof P_on0);
  bsp_push_reg(partial, p * (int)sizeof(long));
  bsp_push_reg(&total, (int)sizeof total);
  bsp_sync();

  if (s == 0) {
    int want = P < avail_seen ? P : avail_seen;
    CHECK_LONG(p, want, "bsp_nprocs() inside: P = %d, available %d", P, avail_seen);
    for (int q = 0; q < p; q++) {
      bsp_put(q, &n_asked, &n, 0, (int)sizeof(int));
      bsp_put(q, &p, &P_on0, 0, (int)sizeof(int));
    }
  }
  bsp_sync();
  CHECK_LONG(P_on0, p, "bsp_nprocs() on process 0 as seen here");
  CHECK(n >= 0, "n = %d from process 0", n);

  long sum = 0;
  for (long i = s; i < n; i += p) sum += i * i;
  bsp_put(0, &sum, partial, s * (int)sizeof(long), (int)sizeof(long));
  bsp_sync();
  if (s == 0) {
    total = 0;
    for (int q = 0; q < p; q++) total += partial[q];
  }
  bsp_sync();
  long got = -2;
  bsp_get(0, &total, 0, &got, (int)sizeof(long));
  bsp_sync();
  long nn = n;
  CHECK_LONG(got, nn * (nn - 1) * (2 * nn - 1) / 6, "sum of i^2 for i < %d", n);

  /* bsp_time: non-decreasing across many supersteps, and follows real time. */
  double last = bsp_time();
  CHECK(last >= t_first, "bsp_time went back from %g to %g", t_first, last);
  for (int k = 0; k < 50; k++) {
    bsp_sync();
    double now = bsp_time();
    CHECK(now >= last, "bsp_time went back from %.9f to %.9f after sync %d", last, now, k);
    last = now;
  }
  double w0 = wall(), b0 = bsp_time();
  while (wall() - w0 < 0.05) {
  }
  double elapsed = bsp_time() - b0;
  CHECK(elapsed > 0.04 && elapsed < 5.0, "bsp_time advanced %g s during a 0.05 s busy wait",
        elapsed);

  bsp_pop_reg(&total);
  bsp_pop_reg(partial);
  bsp_pop_reg(&P_on0);
  bsp_pop_reg(&n);
  bsp_sync();
  free(partial);
  bsp_end();
  /* Only process 0 gets here. */
  printf("used %d of %d processes, n = %d\n", p, avail_seen, n);
  printf("PASS bspinit_stdin\n");
}

int main(int argc, char **argv) {
  bsp_init(spmd, argc, argv);
  /* Process 0 only from here on. */
  check_program = "bspinit_stdin";
  avail_seen = bsp_nprocs();
  if (argc > 1) {
    P = atoi(argv[1]);
  } else {
    printf("How many processes do you want to use?\n");
    fflush(stdout);
    if (scanf("%d", &P) != 1) {
      printf("FAIL: bspinit_stdin: no P on stdin\n");
      return 1;
    }
  }
  if (argc > 2) {
    n_asked = atoi(argv[2]);
  } else {
    printf("Please enter n:\n");
    fflush(stdout);
    if (scanf("%d", &n_asked) != 1) {
      printf("FAIL: bspinit_stdin: no n on stdin\n");
      return 1;
    }
  }
  if (argc > 3) avail_expected = atoi(argv[3]);
  if (avail_seen < 1 || (avail_expected > 0 && avail_seen != avail_expected)) {
    printf("FAIL: bspinit_stdin: bsp_nprocs() before bsp_begin is %d, expected %d\n", avail_seen,
           avail_expected);
    return 1;
  }
  if (P < 1) {
    printf("Sorry, P must be at least 1\n");
    return 1;
  }
  spmd();
  exit(0);
}
