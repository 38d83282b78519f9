/* fft - a parallel discrete Fourier transform of length n = n1 * n2 by the four-step method,
 * with the data redistributed by bsp_put / bsp_hpput between the steps.
 *
 * Input x[j] is block distributed (process s holds j in [s n/p, (s+1) n/p)). Writing
 * j = j1 n2 + j2 and k = k1 + n1 k2:
 *   X[k1 + n1 k2] = sum_j2 w_n2^(j2 k2) w_n^(j2 k1) sum_j1 x[j1 n2 + j2] w_n1^(j1 k1).
 *   1 redistribute (bsp_put of single complex numbers) so that process s holds whole columns
 *     j2 in a block of n2/p, each stored contiguously over j1;
 *   2 local DFTs of length n1 (recursive radix 2, direct DFT for odd lengths), twiddle;
 *   3 transpose (bsp_hpput) so that process s holds k1 in a block of n1/p, contiguous in j2;
 *   4 local DFTs of length n2;
 *   5 redistribute the result back to the block distribution of k (bsp_put).
 * Then the inverse transform is done the same way (sign +1) and must give n x back.
 * Process 0 regenerates the input, computes the DFT directly (O(n^2)), reads the parallel
 * result with bsp_get and compares within a tolerance. Sizes: n1, n2 multiples of p. */
#include <math.h>
#include <string.h>

#include "check.h"

static const double PI = 3.14159265358979323846;

static void input(int j, double *z) {
  uint64_t state = rng_seed(j, 5);
  z[0] = (double)(rng_next(&state) >> 11) / 9007199254740992.0 - 0.5;
  z[1] = (double)(rng_next(&state) >> 11) / 9007199254740992.0 - 0.5;
}

/* out[k] = sum_j in[j*stride] exp(sign 2 pi i j k / n); in and out are complex (double pairs). */
static void dft_rec(const double *in, int stride, double *out, int n, int sign) {
  if (n == 1) {
    out[0] = in[0];
    out[1] = in[1];
    return;
  }
  if (n % 2 == 0) {
    int h = n / 2;
    dft_rec(in, 2 * stride, out, h, sign);
    dft_rec(in + 2 * stride, 2 * stride, out + 2 * h, h, sign);
    for (int k = 0; k < h; k++) {
      double c = cos(2 * PI * k / n), sn = sign * sin(2 * PI * k / n);
      double *e = out + 2 * k, *o = out + 2 * (h + k);
      double tr = c * o[0] - sn * o[1], ti = c * o[1] + sn * o[0];
      double er = e[0], ei = e[1];
      e[0] = er + tr;
      e[1] = ei + ti;
      o[0] = er - tr;
      o[1] = ei - ti;
    }
    return;
  }
  for (int k = 0; k < n; k++) {
    double sr = 0, si = 0;
    for (int j = 0; j < n; j++) {
      double ang = sign * 2 * PI * (double)((long)j * k % n) / n;
      const double *x = in + 2 * (long)j * stride;
      sr += x[0] * cos(ang) - x[1] * sin(ang);
      si += x[0] * sin(ang) + x[1] * cos(ang);
    }
    out[2 * k] = sr;
    out[2 * k + 1] = si;
  }
}

/* Transform the block-distributed xb (n/p complex) in place. cols, rows, tmp: work arrays,
 * all registered, of n/p complex each. */
static void parallel_dft(double *xb, double *cols, double *rows, int n1, int n2, int sign) {
  int p = bsp_nprocs(), s = bsp_pid(), n = n1 * n2;
  int nb = n / p, c2 = n2 / p, c1 = n1 / p;
  const int Z = 2 * (int)sizeof(double);
  /* 1: element j -> owner of column j2 = j % n2, at (j2 - base) * n1 + j1. */
  for (int l = 0; l < nb; l++) {
    int j = s * nb + l, j1 = j / n2, j2 = j % n2;
    bsp_put(j2 / c2, xb + 2 * l, cols, ((j2 % c2) * n1 + j1) * Z, Z);
  }
  bsp_sync();
  /* 2: length-n1 DFTs of my columns, then twiddle w_n^(j2 k1). */
  double *work = check_malloc((size_t)n1 * Z);
  for (int c = 0; c < c2; c++) {
    int j2 = s * c2 + c;
    dft_rec(cols + 2 * c * n1, 1, work, n1, sign);
    for (int k1 = 0; k1 < n1; k1++) {
      double ang = sign * 2 * PI * (double)((long)j2 * k1 % n) / n;
      double wr = cos(ang), wi = sin(ang);
      cols[2 * (c * n1 + k1)] = work[2 * k1] * wr - work[2 * k1 + 1] * wi;
      cols[2 * (c * n1 + k1) + 1] = work[2 * k1] * wi + work[2 * k1 + 1] * wr;
    }
  }
  free(work);
  /* 3: transpose with hpput: (j2, k1) -> owner of k1 at (k1 - base) * n2 + j2. cols is not
   * touched again before the sync. */
  for (int c = 0; c < c2; c++) {
    int j2 = s * c2 + c;
    for (int k1 = 0; k1 < n1; k1++)
      bsp_hpput(k1 / c1, cols + 2 * (c * n1 + k1), rows, ((k1 % c1) * n2 + j2) * Z, Z);
  }
  bsp_sync();
  /* 4: length-n2 DFTs over j2; result X[k1 + n1 k2] at (k1 - base) * n2 + k2. */
  work = check_malloc((size_t)n2 * Z);
  for (int r = 0; r < c1; r++) {
    dft_rec(rows + 2 * r * n2, 1, work, n2, sign);
    memcpy(rows + 2 * r * n2, work, (size_t)n2 * Z);
  }
  free(work);
  /* 5: back to the block distribution of k. */
  for (int r = 0; r < c1; r++) {
    int k1 = s * c1 + r;
    for (int k2 = 0; k2 < n2; k2++) {
      int k = k1 + n1 * k2;
      bsp_put(k / nb, rows + 2 * (r * n2 + k2), xb, (k % nb) * Z, Z);
    }
  }
  bsp_sync();
}

static void run(int n1, int n2) {
  int p = bsp_nprocs(), s = bsp_pid(), n = n1 * n2, nb = n / p;
  const int Z = 2 * (int)sizeof(double);
  double *xb = check_malloc((size_t)nb * Z), *cols = check_malloc((size_t)nb * Z),
         *rows = check_malloc((size_t)nb * Z);
  for (int l = 0; l < nb; l++) input(s * nb + l, xb + 2 * l);
  bsp_push_reg(xb, nb * Z);
  bsp_push_reg(cols, nb * Z);
  bsp_push_reg(rows, nb * Z);
  bsp_sync();

  parallel_dft(xb, cols, rows, n1, n2, -1);

  /* Process 0 checks the forward transform against a direct DFT. */
  double *all = NULL;
  if (s == 0) {
    all = check_malloc((size_t)n * Z);
    for (int q = 0; q < p; q++) bsp_get(q, xb, 0, all + 2 * q * nb, nb * Z);
  }
  bsp_sync();
  if (s == 0) {
    double *x = check_malloc((size_t)n * Z);
    for (int j = 0; j < n; j++) input(j, x + 2 * j);
    double maxerr = 0;
    for (int k = 0; k < n; k++) {
      double sr = 0, si = 0;
      for (int j = 0; j < n; j++) {
        double ang = -2 * PI * (double)((long)j * k % n) / n;
        sr += x[2 * j] * cos(ang) - x[2 * j + 1] * sin(ang);
        si += x[2 * j] * sin(ang) + x[2 * j + 1] * cos(ang);
      }
      double e = hypot(sr - all[2 * k], si - all[2 * k + 1]);
      if (e > maxerr) maxerr = e;
    }
    CHECK(maxerr < 1e-9 * n, "n = %d x %d: forward transform max error %g", n1, n2, maxerr);
    free(x);
    free(all);
  }

  /* Inverse (sign +1) must give n * x back, locally checked everywhere. */
  parallel_dft(xb, cols, rows, n1, n2, +1);
  double maxerr = 0;
  for (int l = 0; l < nb; l++) {
    double z[2];
    input(s * nb + l, z);
    double e = hypot(xb[2 * l] / n - z[0], xb[2 * l + 1] / n - z[1]);
    if (e > maxerr) maxerr = e;
  }
  CHECK(maxerr < 1e-12 * n, "n = %d x %d: inverse transform max error %g", n1, n2, maxerr);

  bsp_pop_reg(rows);
  bsp_pop_reg(cols);
  bsp_pop_reg(xb);
  bsp_sync();
  free(xb);
  free(cols);
  free(rows);
}

int main(void) {
  bsp_begin(bsp_nprocs());
  check_program = "fft";
  int p = bsp_nprocs();
  run(24, 36);        /* 864 points, divisible by p = 1..4 */
  run(8 * p, 16 * p); /* powers of two times p */
  run(5 * p, 7 * p);  /* odd factors: direct DFTs inside */
  run(p, p);          /* one column / row per process */
  bsp_end();
  printf("PASS fft\n");
  return 0;
}
