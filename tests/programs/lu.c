/* lu - LU decomposition with partial pivoting, BSPedupack style, on a cyclic 2D distribution.
 *
 * The n x n matrix is spread over an M x N process grid: A(i,j) lives on process P(i mod M,
 * j mod N) = pid (i mod M) + (j mod N) * M, at local position (i div M, j div N), stored row by
 * row in one malloc'd block. Stage k takes five supersteps:
 *   0 the processes of column k mod N put their local absolute maximum of column k (and its
 *     row) to every process of their column;
 *   1 they pick the pivot row r and put r to every process of their process row;
 *   2 rows k and r are swapped with bsp_put (or locally when one process holds both);
 *   3 the column owners bsp_get the pivot a(k,k) straight out of the matrix of its owner;
 *   4 column k is divided by the pivot and put along the process rows; row k is read with
 *     bsp_get (at an offset into the remote matrix) along the process columns;
 * then the rank-1 update is local. The decomposition runs once for every grid shape M x N = p
 * (registrations are popped and pushed anew between runs). Process 0 finally reads every
 * local matrix with bsp_get and checks L*U == P*A entry by entry. */
#include <math.h>
#include <string.h>

#include "check.h"

static double entry(int i, int j, int n) {
  uint64_t state = rng_seed(i * n + j, 11);
  rng_next(&state);
  return (double)(rng_next(&state) >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

/* Number of i in [0, n) with i mod m == s. */
static int nloc(int m, int s, int n) { return (n + m - s - 1) / m; }

static void lu_run(int M, int N, int n) {
  int p = bsp_nprocs(), pid = bsp_pid();
  int s = pid % M, t = pid / M;
  int nlr = nloc(M, s, n), nlc = nloc(N, t, n);

  double *a = check_malloc((size_t)nlr * nlc * sizeof(double));
  for (int il = 0; il < nlr; il++)
    for (int jl = 0; jl < nlc; jl++) a[il * nlc + jl] = entry(il * M + s, jl * N + t, n);
  double *pmax = check_malloc((size_t)M * sizeof(double));
  int *pidx = check_malloc((size_t)M * sizeof(int));
  double *lk = check_malloc((size_t)nlr * sizeof(double));
  double *uk = check_malloc((size_t)nlc * sizeof(double));
  int *pi = check_malloc((size_t)n * sizeof(int));
  for (int i = 0; i < n; i++) pi[i] = i;
  int r_reg = -1;
  double pivot = 0.0;

  bsp_push_reg(a, nlr * nlc * (int)sizeof(double));
  bsp_push_reg(pmax, M * (int)sizeof(double));
  bsp_push_reg(pidx, M * (int)sizeof(int));
  bsp_push_reg(&r_reg, (int)sizeof(int));
  bsp_push_reg(lk, nlr * (int)sizeof(double));
  bsp_sync();

  for (int k = 0; k < n; k++) {
    int kr = k % M, kc = k % N;   /* process row / column owning row / column k */
    int klr = k / M, klc = k / N; /* local index of row k on process row kr, column k on kc */
    int i0 = nloc(M, s, k), i1 = nloc(M, s, k + 1), j1 = nloc(N, t, k + 1);

    /* Superstep 0: local maxima of column k. */
    if (t == kc) {
      double best = -1.0;
      int bi = -1;
      for (int il = i0; il < nlr; il++) {
        double v = fabs(a[il * nlc + klc]);
        if (v > best) {
          best = v;
          bi = il * M + s;
        }
      }
      for (int s2 = 0; s2 < M; s2++) {
        bsp_put(s2 + t * M, &best, pmax, s * (int)sizeof(double), (int)sizeof(double));
        bsp_put(s2 + t * M, &bi, pidx, s * (int)sizeof(int), (int)sizeof(int));
      }
    }
    bsp_sync();

    /* Superstep 1: the pivot row, to every process of my process row. */
    if (t == kc) {
      double best = -1.0;
      int r = -1;
      for (int s2 = 0; s2 < M; s2++)
        if (pidx[s2] >= 0 && (pmax[s2] > best || (pmax[s2] == best && pidx[s2] < r))) {
          best = pmax[s2];
          r = pidx[s2];
        }
      CHECK(r >= k && r < n, "stage %d: pivot row %d out of range", k, r);
      for (int t2 = 0; t2 < N; t2++) bsp_put(s + t2 * M, &r, &r_reg, 0, (int)sizeof(int));
    }
    bsp_sync();

    /* Superstep 2: swap rows k and r. */
    int r = r_reg;
    CHECK(r >= k && r < n, "stage %d: received pivot row %d", k, r);
    int tmp = pi[k];
    pi[k] = pi[r];
    pi[r] = tmp;
    if (r != k) {
      int rr = r % M, rlr = r / M;
      if (s == kr && s == rr) {
        for (int jl = 0; jl < nlc; jl++) {
          double x = a[klr * nlc + jl];
          a[klr * nlc + jl] = a[rlr * nlc + jl];
          a[rlr * nlc + jl] = x;
        }
      } else if (s == kr) {
        bsp_put(rr + t * M, &a[klr * nlc], a, rlr * nlc * (int)sizeof(double),
                nlc * (int)sizeof(double));
      } else if (s == rr) {
        bsp_put(kr + t * M, &a[rlr * nlc], a, klr * nlc * (int)sizeof(double),
                nlc * (int)sizeof(double));
      }
    }
    bsp_sync();

    /* Superstep 3: the column owners fetch the pivot. */
    pivot = 0.0;
    if (t == kc)
      bsp_get(kr + kc * M, a, (klr * nlc + klc) * (int)sizeof(double), &pivot, (int)sizeof(double));
    bsp_sync();

    /* Superstep 4: scale column k and spread it along rows; fetch row k along columns. */
    if (t == kc) {
      CHECK(fabs(pivot) > 1e-12, "stage %d: pivot %g is zero", k, pivot);
      if (s == kr)
        CHECK(pivot == a[klr * nlc + klc], "stage %d: fetched pivot %g != local %g", k, pivot,
              a[klr * nlc + klc]);
      for (int il = i1; il < nlr; il++) {
        a[il * nlc + klc] /= pivot;
        lk[il] = a[il * nlc + klc];
      }
      for (int t2 = 0; t2 < N; t2++)
        bsp_put(s + t2 * M, lk + i1, lk, i1 * (int)sizeof(double),
                (nlr - i1) * (int)sizeof(double));
    }
    for (int jl = 0; jl < nlc; jl++) uk[jl] = NAN;
    if (nlc > j1)
      bsp_get(kr + t * M, a, (klr * nlc + j1) * (int)sizeof(double), uk + j1,
              (nlc - j1) * (int)sizeof(double));
    bsp_sync();

    /* Rank-1 update. */
    for (int il = i1; il < nlr; il++)
      for (int jl = j1; jl < nlc; jl++) a[il * nlc + jl] -= lk[il] * uk[jl];
  }

  /* Check: process 0 collects every local matrix with bsp_get. */
  double **parts = NULL;
  if (pid == 0) {
    parts = check_malloc((size_t)p * sizeof *parts);
    for (int q = 0; q < p; q++) {
      int qs = q % M, qt = q / M;
      int sz = nloc(M, qs, n) * nloc(N, qt, n);
      parts[q] = check_malloc((size_t)sz * sizeof(double));
      bsp_get(q, a, 0, parts[q], sz * (int)sizeof(double));
    }
  }
  bsp_sync();
  if (pid == 0) {
    double *lu = check_malloc((size_t)n * n * sizeof(double));
    for (int q = 0; q < p; q++) {
      int qs = q % M, qt = q / M, qc = nloc(N, qt, n);
      for (int il = 0; il < nloc(M, qs, n); il++)
        for (int jl = 0; jl < qc; jl++)
          lu[(il * M + qs) * n + jl * N + qt] = parts[q][il * qc + jl];
      free(parts[q]);
    }
    free(parts);
    double maxerr = 0.0;
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) {
        double sum = 0.0;
        for (int m = 0; m <= i && m <= j; m++)
          sum += (m == i ? 1.0 : lu[i * n + m]) * lu[m * n + j];
        double err = fabs(sum - entry(pi[i], j, n));
        if (err > maxerr) maxerr = err;
      }
    CHECK(maxerr < 1e-9, "grid %d x %d, n = %d: max |LU - PA| = %g", M, N, n, maxerr);
    /* pi must be a permutation */
    int *seen = check_malloc((size_t)n * sizeof(int));
    memset(seen, 0, (size_t)n * sizeof(int));
    for (int i = 0; i < n; i++) {
      CHECK(pi[i] >= 0 && pi[i] < n && !seen[pi[i]], "pi[%d] = %d", i, pi[i]);
      seen[pi[i]] = 1;
    }
    free(seen);
    free(lu);
  }
  /* Pop in registration order (any order is allowed as long as all processes agree). */
  bsp_pop_reg(a);
  bsp_pop_reg(pmax);
  bsp_pop_reg(pidx);
  bsp_pop_reg(&r_reg);
  bsp_pop_reg(lk);
  bsp_sync();
  free(a);
  free(pmax);
  free(pidx);
  free(lk);
  free(uk);
  free(pi);
}

int main(void) {
  bsp_begin(bsp_nprocs());
  check_program = "lu";
  int p = bsp_nprocs();
  int sizes[2] = {61, 96};
  for (int z = 0; z < 2; z++)
    for (int M = 1; M <= p; M++)
      if (p % M == 0) lu_run(M, p / M, sizes[z]);
  bsp_end();
  printf("PASS lu\n");
  return 0;
}
