/* One superstep in which processes use different ways at once: by pid mod 4, a 32 KiB bsp_put
 * (the mailbox), a word and a 128 KiB bsp_get into registered memory (the reply round), a 128 KiB
 * bsp_hpput and bsp_hpget (straight through registered memory) and a message; each process then
 * checks what its left neighbour did to it and what it got from its right one. */
#include "bsptest.h"

#define MAIL (32 * 1024 / (int)sizeof(int))
#define LARGE (128 * 1024 / (int)sizeof(int))

int main(void) {
  test_begin(bsp_nprocs());
  int p = bsp_nprocs(), me = bsp_pid();
  int right = (me + 1) % p, left = (me + p - 1) % p;
  int *area = test_alloc(LARGE * sizeof(int)), *mine = test_alloc(LARGE * sizeof(int));
  int *received = test_alloc(LARGE * sizeof(int)), *fetched = test_alloc(LARGE * sizeof(int));
  bsp_push_reg(area, LARGE * (int)sizeof(int));
  bsp_push_reg(received, LARGE * (int)sizeof(int));
  bsp_sync();
  for (int round = 0; round < 4; ++round) {
    for (int i = 0; i < LARGE; ++i)
      area[i] = round * 100000 + me * 1000 + i % 1000, received[i] = -1, fetched[i] = -1;
    for (int i = 0; i < LARGE; ++i) mine[i] = -(round * 100000 + me * 1000 + i % 1000);
    bsp_sync();
    int role = (me + round) % 4, word = -1;
    if (role == 0) bsp_put(right, mine, received, 0, MAIL * (int)sizeof(int));
    if (role == 1) {
      bsp_get(right, area, 4 * (int)sizeof(int), &word, (int)sizeof word);
      bsp_get(right, area, 0, received, LARGE * (int)sizeof(int));
    }
    if (role == 2) {
      bsp_hpput(right, mine, received, 0, LARGE * (int)sizeof(int));
      bsp_hpget(right, area, 0, fetched, LARGE * (int)sizeof(int));
    }
    if (role == 3) bsp_send(right, NULL, &me, (int)sizeof me);
    bsp_sync();
    int left_role = (left + round) % 4;
    int base_left = round * 100000 + left * 1000, base_right = round * 100000 + right * 1000;
    if (role == 1)
      EXPECT_INT(word, base_right + 4, "round %d: word got from process %d", round, right);
    if (role == 2)
      for (int i = 0; i < LARGE; ++i)
        EXPECT_INT(fetched[i], base_right + i % 1000, "round %d: hpget word %d", round, i);
    /* received: a get's result is written first, a put from the left lands after it (the put wins).
     */
    for (int i = 0; i < LARGE; ++i) {
      int want = role == 1 ? base_right + i % 1000 : -1;
      if ((left_role == 0 && i < MAIL) || left_role == 2) want = -(base_left + i % 1000);
      EXPECT_INT(received[i], want, "round %d: received[%d] (own role %d, left's %d)", round, i,
                 role, left_role);
    }
    int n = -1, bytes = -1;
    bsp_qsize(&n, &bytes);
    EXPECT_INT(n, left_role == 3 ? 1 : 0, "round %d: messages", round);
    if (left_role == 3) {
      int from = -1;
      bsp_move(&from, (int)sizeof from);
      EXPECT_INT(from, left, "round %d: message", round);
    }
  }
  bsp_pop_reg(received);
  bsp_pop_reg(area);
  bsp_sync();
  test_end();
  free(area);
  free(mine);
  free(received);
  free(fetched);
  printf("PASS drma_mixed_ways\n");
  return 0;
}
