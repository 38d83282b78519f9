/* transpose - irregular all-to-all and a matrix transpose with the unbuffered bsp_hpput and
 * bsp_hpget, into malloc'd blocks whose sizes differ per process (and are empty on some, which
 * then register NULL with size 0).
 *
 * all_to_all: process s sends count(s,t) ints to process t. The counts are exchanged first
 * (bsp_put), each receiver computes where every sender's block goes in its receive buffer and
 * tells the sender (bsp_put), then the data moves with bsp_hpput. Each sender then reads its
 * blocks back from the receivers with bsp_hpget and compares.
 *
 * transpose: an n x n matrix A[i][j] = 1000 i + j, distributed by blocks of rows (uneven, and
 * empty on some processes when n < p), is transposed element by element with bsp_hpput. */
#include <string.h>

#include "check.h"

/* How many ints s sends to t: irregular, 0 for some pairs, and no process receives anything
 * at all on the last process when p > 1. */
static int count(int s, int t, int p) {
  if (p > 1 && t == p - 1) return 0;
  return ((3 * s + 5 * t + 1) % 4) * (t + 1) + (s == t ? 2 : 0);
}

static int value(int s, int t, int k) { return s * 1000000 + t * 1000 + k; }

static void all_to_all(void) {
  int p = bsp_nprocs(), s = bsp_pid();
  int *incoming = check_malloc((size_t)p * sizeof *incoming);   /* counts from each sender */
  int *placement = check_malloc((size_t)p * sizeof *placement); /* where my block goes on t */
  bsp_push_reg(incoming, p * (int)sizeof(int));
  bsp_push_reg(placement, p * (int)sizeof(int));
  bsp_sync();

  int nsend = 0;
  for (int t = 0; t < p; t++) {
    int c = count(s, t, p);
    bsp_put(t, &c, incoming, s * (int)sizeof(int), (int)sizeof(int));
    nsend += c;
  }
  bsp_sync();

  int nrecv = 0;
  for (int r = 0; r < p; r++) {
    CHECK_LONG(incoming[r], count(r, s, p), "count announced by process %d", r);
    bsp_put(r, &nrecv, placement, s * (int)sizeof(int), (int)sizeof(int));
    nrecv += incoming[r];
  }
  int *sendbuf = nsend > 0 ? check_malloc((size_t)nsend * sizeof(int)) : NULL;
  int *recvbuf = nrecv > 0 ? check_malloc((size_t)nrecv * sizeof(int)) : NULL;
  for (int i = 0; i < nrecv; i++) recvbuf[i] = -1;
  bsp_push_reg(sendbuf, nsend * (int)sizeof(int));
  bsp_push_reg(recvbuf, nrecv * (int)sizeof(int));
  bsp_sync(); /* placements arrive, the buffers are registered */

  int offset = 0;
  for (int t = 0; t < p; t++) {
    int c = count(s, t, p);
    for (int k = 0; k < c; k++) sendbuf[offset + k] = value(s, t, k);
    if (c > 0)
      bsp_hpput(t, sendbuf + offset, recvbuf, placement[t] * (int)sizeof(int),
                c * (int)sizeof(int));
    offset += c;
  }
  bsp_sync();

  /* Receiver's view: blocks in sender order, each with the right values. */
  int at = 0;
  for (int r = 0; r < p; r++)
    for (int k = 0; k < count(r, s, p); k++, at++)
      CHECK_LONG(recvbuf[at], value(r, s, k), "all_to_all: element %d of the block from %d", k, r);
  CHECK_LONG(at, nrecv, "all_to_all: ints received");

  /* Sender's view: read every block back from where it landed. */
  int *readback = nsend > 0 ? check_malloc((size_t)nsend * sizeof(int)) : NULL;
  offset = 0;
  for (int t = 0; t < p; t++) {
    int c = count(s, t, p);
    if (c > 0)
      bsp_hpget(t, recvbuf, placement[t] * (int)sizeof(int), readback + offset,
                c * (int)sizeof(int));
    offset += c;
  }
  bsp_sync();
  for (int i = 0; i < nsend; i++)
    CHECK_LONG(readback[i], sendbuf[i], "all_to_all: int %d read back with bsp_hpget", i);

  bsp_pop_reg(recvbuf);
  bsp_pop_reg(sendbuf);
  bsp_pop_reg(placement);
  bsp_pop_reg(incoming);
  bsp_sync();
  free(readback);
  free(recvbuf);
  free(sendbuf);
  free(placement);
  free(incoming);
}

/* First row of process s under the block distribution of n rows. */
static int first_row(int s, int p, int n) { return (int)((long)s * n / p); }

static void transpose(int n) {
  int p = bsp_nprocs(), s = bsp_pid();
  int lo = first_row(s, p, n), rows = first_row(s + 1, p, n) - lo;
  double *a = rows > 0 ? check_malloc((size_t)rows * n * sizeof(double)) : NULL;
  double *b = rows > 0 ? check_malloc((size_t)rows * n * sizeof(double)) : NULL;
  for (int i = 0; i < rows; i++)
    for (int j = 0; j < n; j++) {
      a[i * n + j] = 1000.0 * (lo + i) + j;
      b[i * n + j] = -1.0;
    }
  bsp_push_reg(b, rows * n * (int)sizeof(double));
  bsp_sync();

  /* A[i][j] becomes B[j][i], which lives on the owner of row j. */
  for (int t = 0; t < p; t++) {
    int tlo = first_row(t, p, n), thi = first_row(t + 1, p, n);
    for (int i = 0; i < rows; i++)
      for (int j = tlo; j < thi; j++)
        bsp_hpput(t, &a[i * n + j], b, ((j - tlo) * n + lo + i) * (int)sizeof(double),
                  (int)sizeof(double));
  }
  bsp_sync();
  for (int i = 0; i < rows; i++)
    for (int j = 0; j < n; j++)
      CHECK(b[i * n + j] == 1000.0 * j + (lo + i), "transpose(n = %d): B[%d][%d] = %g, expected %g",
            n, lo + i, j, b[i * n + j], 1000.0 * j + (lo + i));
  bsp_pop_reg(b);
  bsp_sync();
  free(b);
  free(a);
}

int main(void) {
  bsp_begin(bsp_nprocs());
  check_program = "transpose";
  for (int repeat = 0; repeat < 3; repeat++) all_to_all();
  transpose(3); /* fewer rows than processes at p = 4: empty blocks, NULL registrations */
  transpose(37);
  bsp_end();
  printf("PASS transpose\n");
  return 0;
}
