/* bsp_fold and bsp_scan with the program's own operators: an int sum declared with typed
 * parameters (as in the Oxford manual), and a non-commutative one, 2x2 integer matrix product,
 * which pins down the order: x0 * x1 * ... in pid order, left to right. */
#include <bsp_level1.h>

#include "bsptest.h"

static void add_ints(int *res, int *left, int *right, int *nbytes) {
  EXPECT_INT(*nbytes, (int)sizeof(int), "operator's nbytes");
  EXPECT(res != left && res != right && left != right, "operator arguments alias");
  *res = *left + *right;
}

typedef struct {
  long long a, b, c, d;
} matrix;

static void multiply(void *res, void *left, void *right, int *nbytes) {
  const matrix *x = left, *y = right;
  matrix *r = res;
  EXPECT_INT(*nbytes, (int)sizeof(matrix), "operator's nbytes");
  r->a = x->a * y->a + x->b * y->c;
  r->b = x->a * y->b + x->b * y->d;
  r->c = x->c * y->a + x->d * y->c;
  r->d = x->c * y->b + x->d * y->d;
}

/* Process i's matrix: [[1, i+1], [0, 2]] does not commute with the others. */
static matrix matrix_of(int i) {
  matrix m = {1, i + 1, 0, 2};
  return m;
}

static matrix product_upto(int last) {
  matrix acc = matrix_of(0), next;
  int size = sizeof(matrix);
  for (int i = 1; i <= last; ++i) {
    matrix m = matrix_of(i);
    multiply(&next, &acc, &m, &size);
    acc = next;
  }
  return acc;
}

static void expect_matrix(matrix got, matrix want, const char *what) {
  EXPECT(got.a == want.a && got.b == want.b && got.c == want.c && got.d == want.d,
         "%s: got [[%lld %lld] [%lld %lld]], expected [[%lld %lld] [%lld %lld]]", what, got.a,
         got.b, got.c, got.d, want.a, want.b, want.c, want.d);
}

int main(void) {
  test_begin(bsp_nprocs());
  const int p = bsp_nprocs(), s = bsp_pid();
  int x = 10 * (s + 1), sum = -1;
  bsp_fold(add_ints, &x, &sum, sizeof(int));
  EXPECT_INT(sum, 5 * p * (p + 1), "fold of a sum");
  bsp_scan(add_ints, &x, &sum, sizeof(int));
  EXPECT_INT(sum, 5 * (s + 1) * (s + 2), "scan of a sum");

  matrix mine = matrix_of(s), result;
  memset(&result, 0, sizeof result);
  bsp_fold(multiply, &mine, &result, sizeof(matrix));
  expect_matrix(result, product_upto(p - 1), "fold of matrix products");
  memset(&result, 0, sizeof result);
  bsp_scan(multiply, &mine, &result, sizeof(matrix));
  expect_matrix(result, product_upto(s), "scan of matrix products");
  /* In place: src == dst. */
  bsp_fold(multiply, &mine, &mine, sizeof(matrix));
  expect_matrix(mine, product_upto(p - 1), "fold in place");
  /* The function itself, without the macro. */
  (bsp_fold)(multiply, &x, &x, 0);
  test_end();
  printf("PASS l1_fold_scan\n");
  return 0;
}
