/* A program that mixes level-1 calls with its own registrations, puts and gets: its puts made
 * before a level-1 call are delivered by the call's first sync; its registrations before and
 * after the calls keep working (the n-th registration of the program is still its n-th); its
 * pops pop its own areas; and hundreds of calls leave nothing behind. */
#include <bsp_level1.h>

#include "bsptest.h"

int main(void) {
  test_begin(bsp_nprocs());
  const int p = bsp_nprocs(), s = bsp_pid(), right = (s + 1) % p, left = (s + p - 1) % p;
  int a[4] = {0, 0, 0, 0}, b[4] = {0, 0, 0, 0};
  bsp_push_reg(a, sizeof a);
  bsp_sync();

  /* A put pending when a level-1 call starts arrives by the time the call returns. */
  int v = 100 + s;
  bsp_put(right, &v, a, 0, sizeof v);
  EXPECT_INT(bsp_sumI(1), p, "sum with a put pending");
  EXPECT_INT(a[0], 100 + left, "the program's put before bsp_sumI");

  /* A registration pushed right before a level-1 call takes effect with the call's first sync. */
  bsp_push_reg(b, sizeof b);
  int x = s == 0 ? 77 : 0;
  bsp_bcast(0, &x, &x, sizeof x);
  EXPECT_INT(x, 77, "bcast");
  v = 200 + s;
  bsp_put(right, &v, b, 2 * sizeof(int), sizeof v);
  bsp_put(right, &v, a, 3 * sizeof(int), sizeof v);
  bsp_sync();
  EXPECT_INT(b[2], 200 + left, "put into b after the calls");
  EXPECT_INT(a[3], 200 + left, "put into a after the calls");

  /* Many calls of every kind; the program's areas still work and pop cleanly afterwards. */
  for (int round = 0; round < 200; ++round) {
    EXPECT_INT(bsp_maxI(round + s), round + p - 1, "round %d max", round);
    double d = bsp_sumD_prefix(1.0);
    EXPECT(d == s + 1.0, "round %d prefix sum", round);
    if (round % 50 == 0) {
      int all[64];
      bsp_gather(0, &s, all, sizeof s);
      EXPECT_INT(bsp_sortI(p - s), s + 1, "round %d sort", round);
    }
  }
  int got = -1;
  bsp_get(left, a, 0, &got, sizeof got);
  bsp_sync();
  EXPECT_INT(got, 100 + (left + p - 1) % p, "get from a after many calls");
  bsp_pop_reg(b);
  bsp_pop_reg(a);
  bsp_sync();

  /* After the pops, a new registration is the program's only one: a put to it works. */
  int c[2] = {0, 0};
  bsp_push_reg(c, sizeof c);
  bsp_sync();
  bsp_put(right, &s, c, sizeof(int), sizeof(int));
  bsp_sync();
  EXPECT_INT(c[1], left, "put into a registration made after the pops");
  bsp_pop_reg(c);
  bsp_sync();
  test_end();
  printf("PASS l1_mixed\n");
  return 0;
}
