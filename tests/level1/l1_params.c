/* bsp_s, bsp_l, bsp_g, bsp_nhalf: positive, the same on every call, before bsp_begin too.
 * Arguments S L G NHALF (optional): the values expected (from the file BSPG_BSPBENCH names,
 * or the defaults). */
#include <bsp_level1.h>

#include "bsptest.h"

static double s0, l0, g0;
static int n0;

static void check(const char *when) {
  EXPECT(bsp_s() > 0 && bsp_l() > 0 && bsp_g() > 0 && bsp_nhalf() > 0,
         "%s: parameters not positive: s %g l %g g %g nhalf %d", when, bsp_s(), bsp_l(), bsp_g(),
         bsp_nhalf());
  for (int i = 0; i < 3; ++i)
    EXPECT(bsp_s() == s0 && bsp_l() == l0 && bsp_g() == g0 && bsp_nhalf() == n0,
           "%s: parameters changed between calls", when);
}

int main(int argc, char **argv) {
  s0 = bsp_s();
  l0 = bsp_l();
  g0 = bsp_g();
  n0 = bsp_nhalf();
  check("before bsp_begin");
  test_begin(bsp_nprocs());
  check("inside the SPMD section");
  if (argc == 5) {
    EXPECT(s0 == atof(argv[1]), "bsp_s: expected %s, got %.17g", argv[1], s0);
    EXPECT(l0 == atof(argv[2]), "bsp_l: expected %s, got %.17g", argv[2], l0);
    EXPECT(g0 == atof(argv[3]), "bsp_g: expected %s, got %.17g", argv[3], g0);
    EXPECT_INT(n0, atoi(argv[4]), "bsp_nhalf");
  }
  /* Every process has the same values. */
  EXPECT_INT(bsp_constantI(n0), 1, "bsp_nhalf differs between processes");
  EXPECT(bsp_maxD(g0) == bsp_minD(g0), "bsp_g differs between processes");
  bsp_sync();
  check("after syncs");
  const int pid = bsp_pid();
  test_end();
  if (pid == 0) printf("s %.6g l %.6g g %.6g nhalf %d\n", s0, l0, g0, n0);
  printf("PASS l1_params\n");
  return 0;
}
