/* jacobi - Jacobi iteration for the 2D Laplace equation on an N x M grid, distributed by blocks
 * of rows (uneven sizes), with halo rows exchanged by bsp_put every superstep for ITERATIONS
 * iterations. The two grids are both registered and their pointers swapped every iteration,
 * as in most stencil codes: a put names the local address of the grid that is "current" on
 * every process, which is the same registration slot everywhere.
 *
 * Every CHECK_EVERY iterations the largest change is reduced to all processes with bsp_put.
 * At the end the grid is gathered on process 0 (which registered the whole grid; the others
 * registered NULL with size 0) and compared bit for bit, together with the residuals, with a
 * sequential computation done on process 0 in the same operation order. */
#include <math.h>
#include <string.h>

#include "check.h"

#define N 30
#define M 17
#define ITERATIONS 200
#define CHECK_EVERY 20
#define TOP 100.0    /* fixed value above the grid */
#define BOTTOM -20.0 /* fixed value below it */

static int first_row(int s, int p) { return (int)((long)s * N / p); }

static double initial(int i, int j) { return (double)((i * 31 + j * 17) % 11) - 5.0; }

/* One Jacobi sweep over rows 1..rows of a (rows+2) x M array with ghost rows 0 and rows+1;
 * columns 0 and M-1 are held fixed. Returns the largest change. */
static double sweep(const double *u, double *unew, int rows) {
  double change = 0.0;
  for (int i = 1; i <= rows; i++) {
    unew[i * M] = u[i * M];
    unew[i * M + M - 1] = u[i * M + M - 1];
    for (int j = 1; j < M - 1; j++) {
      unew[i * M + j] =
          0.25 * (u[(i - 1) * M + j] + u[(i + 1) * M + j] + u[i * M + j - 1] + u[i * M + j + 1]);
      double d = fabs(unew[i * M + j] - u[i * M + j]);
      if (d > change) change = d;
    }
  }
  return change;
}

static void fill_ghosts(double *u, int rows, int top, int bottom) {
  if (top)
    for (int j = 0; j < M; j++) u[j] = TOP;
  if (bottom)
    for (int j = 0; j < M; j++) u[(rows + 1) * M + j] = BOTTOM;
}

/* The whole computation on one process: final grid (N x M) and residuals. */
static void sequential(double *grid, double *residuals) {
  double *u = check_malloc((size_t)(N + 2) * M * sizeof *u);
  double *unew = check_malloc((size_t)(N + 2) * M * sizeof *unew);
  for (int i = 0; i < N; i++)
    for (int j = 0; j < M; j++) u[(i + 1) * M + j] = initial(i, j);
  fill_ghosts(u, N, 1, 1);
  fill_ghosts(unew, N, 1, 1);
  for (int it = 1; it <= ITERATIONS; it++) {
    double change = sweep(u, unew, N);
    double *swap = u;
    u = unew;
    unew = swap;
    if (it % CHECK_EVERY == 0) residuals[it / CHECK_EVERY - 1] = change;
  }
  memcpy(grid, u + M, (size_t)N * M * sizeof *grid);
  free(unew);
  free(u);
}

int main(void) {
  bsp_begin(bsp_nprocs());
  check_program = "jacobi";
  int p = bsp_nprocs(), s = bsp_pid();
  int lo = first_row(s, p), rows = first_row(s + 1, p) - lo;

  double *u = check_malloc((size_t)(rows + 2) * M * sizeof *u);
  double *unew = check_malloc((size_t)(rows + 2) * M * sizeof *unew);
  for (int i = 0; i < rows; i++)
    for (int j = 0; j < M; j++) u[(i + 1) * M + j] = initial(lo + i, j);
  fill_ghosts(u, rows, s == 0, s == p - 1);
  fill_ghosts(unew, rows, s == 0, s == p - 1);
  double *changes = check_malloc((size_t)p * sizeof *changes);
  double *whole = s == 0 ? check_malloc((size_t)N * M * sizeof *whole) : NULL;

  bsp_push_reg(u, (rows + 2) * M * (int)sizeof(double));
  bsp_push_reg(unew, (rows + 2) * M * (int)sizeof(double));
  bsp_push_reg(changes, p * (int)sizeof(double));
  bsp_push_reg(whole, s == 0 ? N * M * (int)sizeof(double) : 0);
  bsp_sync();

  double residuals[ITERATIONS / CHECK_EVERY];
  for (int it = 1; it <= ITERATIONS; it++) {
    /* Halo exchange: my first row is the bottom ghost of the process above, my last row the
     * top ghost of the process below. */
    if (s > 0) {
      int above_rows = first_row(s, p) - first_row(s - 1, p);
      bsp_put(s - 1, u + M, u, (above_rows + 1) * M * (int)sizeof(double), M * (int)sizeof(double));
    }
    if (s < p - 1) bsp_put(s + 1, u + rows * M, u, 0, M * (int)sizeof(double));
    bsp_sync();

    double change = sweep(u, unew, rows);
    double *swap = u;
    u = unew;
    unew = swap;

    if (it % CHECK_EVERY == 0) {
      for (int t = 0; t < p; t++)
        bsp_put(t, &change, changes, s * (int)sizeof(double), (int)sizeof(double));
      bsp_sync();
      double largest = 0.0;
      for (int t = 0; t < p; t++)
        if (changes[t] > largest) largest = changes[t];
      residuals[it / CHECK_EVERY - 1] = largest;
    }
  }

  bsp_put(0, u + M, whole, lo * M * (int)sizeof(double), rows * M * (int)sizeof(double));
  bsp_sync();

  if (s == 0) {
    double *reference = check_malloc((size_t)N * M * sizeof *reference);
    double reference_residuals[ITERATIONS / CHECK_EVERY];
    sequential(reference, reference_residuals);
    for (int k = 0; k < ITERATIONS / CHECK_EVERY; k++)
      CHECK(residuals[k] == reference_residuals[k],
            "residual after %d iterations: %.17g, sequential %.17g", (k + 1) * CHECK_EVERY,
            residuals[k], reference_residuals[k]);
    for (int i = 0; i < N; i++)
      for (int j = 0; j < M; j++)
        CHECK(whole[i * M + j] == reference[i * M + j], "u[%d][%d] = %.17g, sequential %.17g", i, j,
              whole[i * M + j], reference[i * M + j]);
    CHECK(reference_residuals[ITERATIONS / CHECK_EVERY - 1] < reference_residuals[0],
          "the iteration does not converge");
    printf("jacobi: %dx%d grid, %d iterations, final change %.3g\n", N, M, ITERATIONS,
           residuals[ITERATIONS / CHECK_EVERY - 1]);
    free(reference);
  }
  /* Pops name the original addresses, whichever pointer holds which grid now. */
  bsp_pop_reg(whole);
  bsp_pop_reg(changes);
  bsp_pop_reg(ITERATIONS % 2 == 0 ? unew : u);
  bsp_pop_reg(ITERATIONS % 2 == 0 ? u : unew);
  bsp_sync();
  free(whole);
  free(changes);
  free(unew);
  free(u);
  bsp_end();
  printf("PASS jacobi\n");
  return 0;
}
