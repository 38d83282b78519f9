/* spmv - repeated sparse matrix-vector multiplication v <- A v with bulk synchronous message
 * passing, the way irregular codes fetch remote vector components.
 *
 * Rows of the n x n sparse matrix are block distributed (uneven blocks); the vector is cyclic
 * (v[j] on process j mod p). The tag size is set to sizeof(int) and every message carries a
 * global index as its tag. One iteration is three supersteps:
 *   A every process sends one request per distinct column it needs (tag j, payload its pid)
 *     to the owner of v[j];
 *   B owners check the queue (bsp_qsize: the exact count, which they know by regenerating
 *     the others' sparsity patterns) and answer each with (tag j, payload v[j]);
 *   C requesters read the answers (bsp_get_tag + bsp_move, or bsp_hpmove on alternate
 *     iterations), multiply, and send u[i] (tag i) to the owner of v[i];
 * and the owners store the arriving components at the start of the next iteration.
 * Finally process 0 reads the distributed v with bsp_get and compares with a sequential run. */
#include <math.h>
#include <string.h>

#include "check.h"

#define ITER 6

static int row_lo(int s, int p, int n) { return (int)((long)s * n / p); }
static int nloc(int p, int s, int n) { return (n + p - s - 1) / p; }

/* Row i: its nonzero columns (may repeat: repeats are summed) and values. Returns the count. */
static int row(int i, int n, int *col, double *val) {
  uint64_t state = rng_seed(i, 23);
  int nz = 1 + i % 7;
  col[0] = i;
  val[0] = 0.5;
  for (int k = 1; k < nz; k++) {
    col[k] = (int)(rng_next(&state) % (uint64_t)n);
    val[k] = ((double)(rng_next(&state) >> 11) / 9007199254740992.0 - 0.5) / nz;
  }
  return nz;
}

/* Distinct columns needed by process q, marked in need[0..n) (cleared first). Returns count. */
static int needed(int q, int p, int n, char *need) {
  int col[8] = {0};
  double val[8] = {0};
  int count = 0;
  memset(need, 0, (size_t)n);
  for (int i = row_lo(q, p, n); i < row_lo(q + 1, p, n); i++) {
    int nz = row(i, n, col, val);
    for (int k = 0; k < nz; k++)
      if (!need[col[k]]) {
        need[col[k]] = 1;
        count++;
      }
  }
  return count;
}

static double v0(int j) { return 1.0 + (j % 13) * 0.25; }

int main(void) {
  bsp_begin(bsp_nprocs());
  check_program = "spmv";
  int p = bsp_nprocs(), s = bsp_pid();
  int n = 997 + 3 * p;
  int lo = row_lo(s, p, n), hi = row_lo(s + 1, p, n), nv = nloc(p, s, n);

  int tagsize = (int)sizeof(int);
  bsp_set_tagsize(&tagsize);
  CHECK_LONG(tagsize, 0, "initial tag size");
  double *v = check_malloc((size_t)nv * sizeof(double));
  for (int l = 0; l < nv; l++) v[l] = v0(l * p + s);
  bsp_push_reg(v, nv * (int)sizeof(double));
  bsp_sync();

  char *need = check_malloc((size_t)n);
  /* How many requests I will receive each iteration: the needs of every process q of my columns. */
  int expect_requests = 0;
  for (int q = 0; q < p; q++) {
    needed(q, p, n, need);
    for (int j = s; j < n; j += p) expect_requests += need[j];
  }
  int nneed = needed(s, p, n, need);
  double *vfull = check_malloc((size_t)n * sizeof(double));

  for (int it = 0; it < ITER; it++) {
    /* A: requests. */
    for (int j = 0; j < n; j++) vfull[j] = NAN;
    for (int j = 0; j < n; j++)
      if (need[j]) bsp_send(j % p, &j, &s, (int)sizeof(int));
    bsp_sync();

    /* B: answer. */
    int nmsg = -1, nbytes = -1;
    bsp_qsize(&nmsg, &nbytes);
    CHECK_LONG(nmsg, expect_requests, "iteration %d: requests queued", it);
    CHECK_LONG(nbytes, expect_requests * (int)sizeof(int), "iteration %d: request bytes", it);
    for (int m = 0; m < expect_requests; m++) {
      int status = -2, j = -1, who = -1;
      bsp_get_tag(&status, &j);
      CHECK_LONG(status, (int)sizeof(int), "iteration %d: request payload size", it);
      CHECK(j >= 0 && j < n && j % p == s, "iteration %d: request for component %d", it, j);
      bsp_move(&who, (int)sizeof(int));
      CHECK(who >= 0 && who < p, "iteration %d: requester %d", it, who);
      bsp_send(who, &j, &v[j / p], (int)sizeof(double));
    }
    bsp_qsize(&nmsg, &nbytes);
    CHECK(nmsg == 0 && nbytes == 0, "iteration %d: queue not empty after reading (%d, %d)", it,
          nmsg, nbytes);
    bsp_sync();

    /* C: read the answers, multiply, send the results to the owners. */
    bsp_qsize(&nmsg, &nbytes);
    CHECK_LONG(nmsg, nneed, "iteration %d: answers queued", it);
    CHECK_LONG(nbytes, nneed * (int)sizeof(double), "iteration %d: answer bytes", it);
    for (int m = 0; m < nneed; m++) {
      int j = -1;
      if (it % 2 == 0) {
        int status = -2;
        bsp_get_tag(&status, &j);
        CHECK_LONG(status, (int)sizeof(double), "iteration %d: answer size", it);
        CHECK(j >= 0 && j < n && need[j] && isnan(vfull[j]), "iteration %d: answer for %d", it, j);
        bsp_move(&vfull[j], (int)sizeof(double));
      } else {
        void *tagp = NULL, *payp = NULL;
        int size = bsp_hpmove(&tagp, &payp);
        CHECK_LONG(size, (int)sizeof(double), "iteration %d: hpmove answer size", it);
        memcpy(&j, tagp, sizeof(int));
        CHECK(j >= 0 && j < n && need[j] && isnan(vfull[j]), "iteration %d: answer for %d", it, j);
        memcpy(&vfull[j], payp, sizeof(double));
      }
    }
    int col[8] = {0};
    double val[8] = {0};
    for (int i = lo; i < hi; i++) {
      int nz = row(i, n, col, val);
      double sum = 0.0;
      for (int k = 0; k < nz; k++) {
        CHECK(!isnan(vfull[col[k]]), "iteration %d: component %d never arrived", it, col[k]);
        sum += val[k] * vfull[col[k]];
      }
      bsp_send(i % p, &i, &sum, (int)sizeof(double));
    }
    bsp_sync();

    /* D: store my components of the new vector. */
    bsp_qsize(&nmsg, &nbytes);
    CHECK_LONG(nmsg, nv, "iteration %d: result components queued", it);
    for (int l = 0; l < nv; l++) v[l] = NAN;
    for (int m = 0; m < nv; m++) {
      int status = -2, i = -1;
      bsp_get_tag(&status, &i);
      CHECK(status == (int)sizeof(double) && i >= 0 && i < n && i % p == s && isnan(v[i / p]),
            "iteration %d: result message status %d tag %d", it, status, i);
      bsp_move(&v[i / p], (int)sizeof(double));
    }
    int status = 0, dummy;
    bsp_get_tag(&status, &dummy);
    CHECK_LONG(status, -1, "iteration %d: bsp_get_tag on the empty queue", it);
  }

  /* Check against a sequential computation on process 0. */
  double *got = NULL;
  if (s == 0) {
    got = check_malloc((size_t)n * sizeof(double));
    /* Each process's cyclic components land in one block, unscrambled below. */
    int off = 0;
    for (int q = 0; q < p; q++) {
      bsp_get(q, v, 0, got + off, nloc(p, q, n) * (int)sizeof(double));
      off += nloc(p, q, n);
    }
  }
  bsp_sync();
  if (s == 0) {
    double *x = check_malloc((size_t)n * sizeof(double)),
           *y = check_malloc((size_t)n * sizeof(double));
    for (int j = 0; j < n; j++) x[j] = v0(j);
    int col[8] = {0};
    double val[8] = {0};
    for (int it = 0; it < ITER; it++) {
      for (int i = 0; i < n; i++) {
        int nz = row(i, n, col, val);
        y[i] = 0.0;
        for (int k = 0; k < nz; k++) y[i] += val[k] * x[col[k]];
      }
      memcpy(x, y, (size_t)n * sizeof(double));
    }
    int off = 0;
    for (int q = 0; q < p; q++) {
      for (int l = 0; l < nloc(p, q, n); l++) {
        int j = l * p + q;
        CHECK(fabs(got[off + l] - x[j]) <= 1e-13 * (1.0 + fabs(x[j])),
              "v[%d] = %.17g, sequential %.17g", j, got[off + l], x[j]);
      }
      off += nloc(p, q, n);
    }
    free(x);
    free(y);
    free(got);
  }
  bsp_pop_reg(v);
  bsp_sync();
  bsp_end();
  printf("PASS spmv\n");
  return 0;
}
