/* bsp_sum/product/min/max in I, R and D, and their _prefix forms, against a sequential
 * left-to-right computation over every process's value (exactly: bspg combines in pid order);
 * bsp_all, bsp_any and bsp_constantI. */
#include <bsp_level1.h>

#include "bsptest.h"

/* Process i's values: a mix of signs, duplicates and fractions. */
static int int_of(int i) { return (i * 7) % 5 - 2 + (i == 2 ? 1000 : 0); }
static float float_of(int i) { return 0.1f * (float)(i + 1) - (i % 2 ? 0.35f : -1.25f); }
static double double_of(int i) { return 1.0 / (i + 3) - (i % 3 == 1 ? 2.5 : 0.0); }

#define SEQUENTIAL(T, name, of, expr)          \
  static T name(int last) {                    \
    T acc = of(0);                             \
    for (int i = 1; i <= last; ++i) {          \
      T v = of(i);                             \
      acc = (expr);                            \
    }                                          \
    return acc;                                \
  }
SEQUENTIAL(int, seq_sumI, int_of, acc + v)
SEQUENTIAL(float, seq_sumR, float_of, acc + v)
SEQUENTIAL(double, seq_sumD, double_of, acc + v)
SEQUENTIAL(int, seq_productI, int_of, acc * v)
SEQUENTIAL(float, seq_productR, float_of, acc * v)
SEQUENTIAL(double, seq_productD, double_of, acc * v)
SEQUENTIAL(int, seq_minI, int_of, v < acc ? v : acc)
SEQUENTIAL(float, seq_minR, float_of, v < acc ? v : acc)
SEQUENTIAL(double, seq_minD, double_of, v < acc ? v : acc)
SEQUENTIAL(int, seq_maxI, int_of, v > acc ? v : acc)
SEQUENTIAL(float, seq_maxR, float_of, v > acc ? v : acc)
SEQUENTIAL(double, seq_maxD, double_of, v > acc ? v : acc)

#define CHECK_I(call, seq, last) \
  EXPECT_INT(call(int_of(s)), seq(last), #call)
#define CHECK_F(call, of, seq, last)                                                        \
  do {                                                                                      \
    double got_ = (double)call(of(s)), want_ = (double)seq(last);                           \
    EXPECT(got_ == want_, "%s: expected %.17g, got %.17g", #call, want_, got_);             \
  } while (0)

int main(void) {
  test_begin(bsp_nprocs());
  const int p = bsp_nprocs(), s = bsp_pid();
  const int all = p - 1;
  CHECK_I(bsp_sumI, seq_sumI, all);
  CHECK_F(bsp_sumR, float_of, seq_sumR, all);
  CHECK_F(bsp_sumD, double_of, seq_sumD, all);
  CHECK_I(bsp_productI, seq_productI, all);
  CHECK_F(bsp_productR, float_of, seq_productR, all);
  CHECK_F(bsp_productD, double_of, seq_productD, all);
  CHECK_I(bsp_minI, seq_minI, all);
  CHECK_F(bsp_minR, float_of, seq_minR, all);
  CHECK_F(bsp_minD, double_of, seq_minD, all);
  CHECK_I(bsp_maxI, seq_maxI, all);
  CHECK_F(bsp_maxR, float_of, seq_maxR, all);
  CHECK_F(bsp_maxD, double_of, seq_maxD, all);

  CHECK_I(bsp_sumI_prefix, seq_sumI, s);
  CHECK_F(bsp_sumR_prefix, float_of, seq_sumR, s);
  CHECK_F(bsp_sumD_prefix, double_of, seq_sumD, s);
  CHECK_I(bsp_productI_prefix, seq_productI, s);
  CHECK_F(bsp_productR_prefix, float_of, seq_productR, s);
  CHECK_F(bsp_productD_prefix, double_of, seq_productD, s);
  CHECK_I(bsp_minI_prefix, seq_minI, s);
  CHECK_F(bsp_minR_prefix, float_of, seq_minR, s);
  CHECK_F(bsp_minD_prefix, double_of, seq_minD, s);
  CHECK_I(bsp_maxI_prefix, seq_maxI, s);
  CHECK_F(bsp_maxR_prefix, float_of, seq_maxR, s);
  CHECK_F(bsp_maxD_prefix, double_of, seq_maxD, s);

  /* Simple known values too. */
  EXPECT_INT(bsp_sumI(1), p, "bsp_sumI(1)");
  EXPECT_INT(bsp_sumI_prefix(1), s + 1, "bsp_sumI_prefix(1)");
  EXPECT_INT(bsp_maxI(s), p - 1, "bsp_maxI(pid)");
  EXPECT_INT(bsp_minI_prefix(-s), -s, "bsp_minI_prefix(-pid)");

  /* Logical reductions: results are 0 or 1. */
  EXPECT_INT(bsp_all(1), 1, "bsp_all(1)");
  EXPECT_INT(bsp_all(7), 1, "bsp_all(7)");
  EXPECT_INT(bsp_all(s != p - 1), 0, "bsp_all(not the last)");
  EXPECT_INT(bsp_all(0), 0, "bsp_all(0)");
  EXPECT_INT(bsp_any(0), 0, "bsp_any(0)");
  EXPECT_INT(bsp_any(s == p - 1 ? 42 : 0), 1, "bsp_any(only the last)");
  EXPECT_INT(bsp_any(-1), 1, "bsp_any(-1)");
  EXPECT_INT(bsp_constantI(17), 1, "bsp_constantI(17)");
  EXPECT_INT(bsp_constantI(s), p == 1, "bsp_constantI(pid)");
  EXPECT_INT(bsp_constantI(s == 0 ? 5 : 6), p == 1, "bsp_constantI(differs on 0)");
  test_end();
  printf("PASS l1_reductions\n");
  return 0;
}
