/* bsp_push_reg and bsp_pop_reg of one area in the same superstep both take effect at the sync,
 * in call order (as BSPonMPI accepts): push-then-pop leaves nothing registered, pop-then-push
 * replaces a registration (here with a larger size), and slots stay the same on every process. */
#include "bsptest.h"

int main(void) {
  test_begin(bsp_nprocs());
  int p = bsp_nprocs(), me = bsp_pid();
  int right = (me + 1) % p, left = (me + p - 1) % p;
  int a[4] = {0, 0, 0, 0}, b[8] = {0}, c[2] = {0, 0};

  /* a is pushed and popped: only b (4 bytes) is registered afterwards, in the slot a had. */
  bsp_push_reg(a, (int)sizeof a);
  bsp_pop_reg(a);
  bsp_push_reg(b, (int)sizeof(int));
  bsp_sync();
  int word = 10 + me;
  bsp_put(right, &word, b, 0, (int)sizeof word);
  bsp_sync();
  EXPECT_INT(b[0], 10 + left, "b[0] after a put through the registration that replaced a's");

  /* b popped and pushed again with all 32 bytes: a put at byte 28 is now inside it. */
  bsp_pop_reg(b);
  bsp_push_reg(b, (int)sizeof b);
  bsp_sync();
  int words[8];
  for (int i = 0; i < 8; ++i) words[i] = 100 * me + i;
  bsp_put(right, words, b, 0, (int)sizeof words);
  bsp_sync();
  for (int i = 0; i < 8; ++i)
    EXPECT_INT(b[i], 100 * left + i, "b[%d] after re-registering b with 32 bytes", i);

  /* push c, pop c, pop b in one superstep: nothing left; then c again, alone. */
  bsp_push_reg(c, (int)sizeof c);
  bsp_pop_reg(c);
  bsp_pop_reg(b);
  bsp_sync();
  bsp_push_reg(c, (int)sizeof c);
  bsp_sync();
  int pair[2] = {7 * me, 7 * me + 1};
  bsp_put(right, pair, c, 0, (int)sizeof pair);
  bsp_sync();
  EXPECT_INT(c[0], 7 * left, "c[0] after pushing c again");
  EXPECT_INT(c[1], 7 * left + 1, "c[1] after pushing c again");
  bsp_pop_reg(c);
  bsp_sync();
  test_end();
  printf("PASS drma_push_pop\n");
  return 0;
}
