/* broadcast_tree - collective building blocks written by hand, as Oxford-style codes do:
 *   - a two-phase broadcast (scatter blocks from the root, then every process sends its block
 *     to all others) with bsp_hpput, for many roots and lengths (n < p, n not a multiple of p);
 *   - a binary-tree reduction with bsp_hpget followed by a tree broadcast with bsp_put;
 *   - a shift with bsp_get at offsets into a registered array, in the same superstep as puts
 *     into the region it reads (the get must see the values from before the puts);
 *   - the registration stack: a scratch area re-registered with a different size in every
 *     iteration (pop of the old and push of the new registration in the same superstep, on the
 *     same address), a stack of registrations of differing sizes popped one per superstep, and
 *     the same variable registered twice (a put must use the newest registration, pop_reg
 *     removes the newest and the older one is used again). */
#include <string.h>

#include "check.h"

#define NMAX 1200
#define K 5
#define DEPTH 6

static double value(int root, int round, int i) { return root * 1e6 + round * 1e3 + i * 0.5; }

static void two_phase(double *x, int root, int round, int n) {
  int p = bsp_nprocs(), s = bsp_pid();
  int b = (n + p - 1) / p; /* block size; the last blocks may be short or empty */
  for (int i = 0; i < NMAX; i++) x[i] = -1.0;
  if (s == root)
    for (int i = 0; i < n; i++) x[i] = value(root, round, i);
  if (s == root)
    for (int q = 0; q < p; q++) {
      int lo = q * b, len = n - lo < b ? n - lo : b;
      if (len > 0 && q != root)
        bsp_hpput(q, x + lo, x, lo * (int)sizeof(double), len * (int)sizeof(double));
    }
  bsp_sync();
  int lo = s * b, len = n - lo < b ? n - lo : b;
  for (int q = 0; q < p; q++)
    if (len > 0 && q != s)
      bsp_hpput(q, x + lo, x, lo * (int)sizeof(double), len * (int)sizeof(double));
  bsp_sync();
  for (int i = 0; i < n; i++)
    CHECK(x[i] == value(root, round, i), "broadcast root %d n %d: x[%d] = %g", root, n, i, x[i]);
  for (int i = n; i < NMAX; i++)
    CHECK(x[i] == -1.0, "broadcast root %d n %d: x[%d] written", root, n, i);
}

static void tree_reduce(long *partial, long *incoming, int round) {
  int p = bsp_nprocs(), s = bsp_pid();
  for (int k = 0; k < K; k++) partial[k] = (long)(s + 1) * (k + 1) + round * s;
  for (int d = 1; d < p; d *= 2) {
    int receiving = s % (2 * d) == 0 && s + d < p;
    if (receiving) bsp_hpget(s + d, partial, 0, incoming, K * (int)sizeof(long));
    bsp_sync();
    if (receiving)
      for (int k = 0; k < K; k++) partial[k] += incoming[k];
  }
  int top = 1;
  while (top < p) top *= 2;
  for (int d = top / 2; d >= 1; d /= 2) {
    if (s % (2 * d) == 0 && s + d < p) bsp_put(s + d, partial, partial, 0, K * (int)sizeof(long));
    bsp_sync();
  }
  for (int k = 0; k < K; k++) {
    long want = 0;
    for (int q = 0; q < p; q++) want += (long)(q + 1) * (k + 1) + round * q;
    CHECK_LONG(partial[k], want, "tree reduction round %d, component %d", round, k);
  }
}

static void shift_with_gets(int *arr, int len, int round) {
  int p = bsp_nprocs(), s = bsp_pid();
  for (int i = 0; i < len; i++) arr[i] = s * 10000 + round * 100 + i;
  bsp_sync(); /* everyone's arr is initialised */
  int right = (s + 1) % p, left = (s + p - 1) % p;
  int got[8], overwrite[8];
  int off = (s + round) % (len - 8);
  bsp_get(right, arr, off * (int)sizeof(int), got, 8 * (int)sizeof(int));
  /* The left neighbour reads my arr at offset (left + round) % (len - 8): overwrite it. */
  int loff = (left + round) % (len - 8);
  for (int i = 0; i < 8; i++) overwrite[i] = -7;
  bsp_put(s, overwrite, arr, loff * (int)sizeof(int), 8 * (int)sizeof(int));
  bsp_sync();
  for (int i = 0; i < 8; i++)
    CHECK_LONG(got[i], right * 10000 + round * 100 + off + i, "shift round %d: got[%d]", round, i);
  for (int i = 0; i < 8; i++)
    CHECK_LONG(arr[loff + i], -7, "shift round %d: the put into arr[%d]", round, loff + i);
}

static int pool[4096];

static void registration_stack(void) {
  int p = bsp_nprocs(), s = bsp_pid();
  int right = (s + 1) % p;
  /* One scratch area re-registered each iteration with another size (growing, then shrinking),
   * differing per process; the old registration is popped in the same superstep. */
  int sizes[7] = {10, 40, 200, 1000, 3000, 50, 12};
  for (int it = 0; it < 7; it++) {
    int mine = sizes[it] + s, theirs = sizes[it] + right;
    bsp_push_reg(pool, mine * (int)sizeof(int));
    bsp_sync();
    for (int i = 0; i < mine; i++) pool[i] = -1;
    int marker[2] = {it, s};
    bsp_put(right, marker, pool, (theirs - 2) * (int)sizeof(int), 2 * (int)sizeof(int));
    bsp_sync();
    int left = (s + p - 1) % p;
    CHECK(pool[mine - 2] == it && pool[mine - 1] == left, "scratch iteration %d: tail %d %d", it,
          pool[mine - 2], pool[mine - 1]);
    bsp_pop_reg(pool); /* takes effect at the next sync, together with the next push */
  }
  bsp_sync();

  /* A stack of registrations of differing sizes, popped newest first, one per superstep, and
   * the rest still usable after each pop. */
  int *bufs[DEPTH];
  int len[DEPTH];
  for (int d = 0; d < DEPTH; d++) {
    len[d] = 3 + 7 * d + (s % 2) * 5;
    bufs[d] = check_malloc((size_t)len[d] * sizeof(int));
    for (int i = 0; i < len[d]; i++) bufs[d][i] = 0;
    bsp_push_reg(bufs[d], len[d] * (int)sizeof(int));
  }
  bsp_sync();
  for (int top = DEPTH - 1; top >= 0; top--) {
    for (int d = 0; d <= top; d++) {
      int rlen = 3 + 7 * d + (right % 2) * 5;
      int v = 100 * top + d;
      bsp_put(right, &v, bufs[d], (rlen - 1) * (int)sizeof(int), (int)sizeof(int));
    }
    bsp_sync();
    for (int d = 0; d <= top; d++)
      CHECK_LONG(bufs[d][len[d] - 1], 100 * top + d, "stack depth %d, buffer %d", top, d);
    bsp_pop_reg(bufs[top]);
    bsp_sync();
    free(bufs[top]);
  }

  /* The same variable registered twice, with another registration in between. */
  int x[4] = {0, 0, 0, 0}, y[3] = {0, 0, 0};
  bsp_push_reg(x, 2 * (int)sizeof(int));
  bsp_push_reg(y, 3 * (int)sizeof(int));
  bsp_sync();
  bsp_push_reg(x, 4 * (int)sizeof(int));
  bsp_sync();
  int two[2] = {s + 1, s + 2};
  bsp_put(right, two, x, 2 * (int)sizeof(int),
          2 * (int)sizeof(int)); /* only the newest allows this */
  bsp_put(right, two, y, 1 * (int)sizeof(int), 2 * (int)sizeof(int));
  bsp_sync();
  int left = (s + p - 1) % p;
  CHECK(x[0] == 0 && x[1] == 0 && x[2] == left + 1 && x[3] == left + 2,
        "x after put via newest registration: %d %d %d %d", x[0], x[1], x[2], x[3]);
  CHECK(y[0] == 0 && y[1] == left + 1 && y[2] == left + 2, "y: %d %d %d", y[0], y[1], y[2]);
  bsp_pop_reg(x); /* removes the newest registration of x */
  bsp_sync();
  int three[2] = {s + 10, s + 20};
  bsp_put(right, three, x, 0, 2 * (int)sizeof(int)); /* the older registration (8 bytes) */
  bsp_get(right, y, 0, two, 2 * (int)sizeof(int));
  bsp_sync();
  CHECK(x[0] == left + 10 && x[1] == left + 20 && x[2] == left + 1,
        "x via the older registration: %d %d %d", x[0], x[1], x[2]);
  CHECK(two[0] == 0 && two[1] == s + 1, "get of y after popping x: %d %d", two[0], two[1]);
  bsp_pop_reg(y);
  bsp_pop_reg(x);
  bsp_sync();
}

int main(void) {
  bsp_begin(bsp_nprocs());
  check_program = "broadcast_tree";
  int p = bsp_nprocs();
  double *x = check_malloc(NMAX * sizeof(double));
  long partial[K], incoming[K];
  int *arr = check_malloc(64 * sizeof(int));
  bsp_push_reg(x, NMAX * (int)sizeof(double));
  bsp_push_reg(partial, K * (int)sizeof(long));
  bsp_push_reg(arr, 64 * (int)sizeof(int));
  bsp_sync();

  int lengths[6] = {1, p > 1 ? p - 1 : 1, p, 37, NMAX - 1, NMAX};
  int round = 0;
  for (int root = 0; root < p; root++)
    for (int l = 0; l < 6; l++, round++) {
      two_phase(x, root, round, lengths[l]);
      tree_reduce(partial, incoming, round);
      shift_with_gets(arr, 64, round);
    }
  registration_stack();
  /* The first registrations are still in place after all that. */
  two_phase(x, p - 1, round, 100);
  bsp_pop_reg(arr);
  bsp_pop_reg(partial);
  bsp_pop_reg(x);
  bsp_sync();
  bsp_end();
  printf("PASS broadcast_tree\n");
  return 0;
}
