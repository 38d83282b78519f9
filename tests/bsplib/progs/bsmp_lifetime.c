/* Messages sent in superstep i are readable only in superstep i+1: not in superstep i (not even
 * those sent to itself), and gone after the next sync when left unread. */
#include "bsptest.h"

int main(void) {
  test_begin(bsp_nprocs());
  int p = bsp_nprocs(), me = bsp_pid();
  int right = (me + 1) % p, left = (me + p - 1) % p;
  int size = (int)sizeof(int);
  bsp_set_tagsize(&size);
  bsp_sync();

  int n = -1, nbytes = -1;
  int value = 100 + me, tag = 1;
  bsp_send(right, &tag, &value, (int)sizeof value);
  bsp_send(me, &tag, &value, (int)sizeof value);
  bsp_qsize(&n, &nbytes);
  EXPECT_INT(n, 0, "superstep 1: messages visible in the superstep they were sent");
  int status = -2;
  bsp_get_tag(&status, &tag);
  EXPECT_INT(status, -1, "superstep 1: bsp_get_tag status before any sync");
  bsp_sync();

  /* Superstep 2: the two messages of superstep 1 are here; leave them unread, send one more. */
  bsp_qsize(&n, &nbytes);
  EXPECT_INT(n, 2, "superstep 2: messages from superstep 1");
  EXPECT_INT(nbytes, 2 * (int)sizeof(int), "superstep 2: payload bytes");
  value = 200 + me;
  tag = 2;
  bsp_send(right, &tag, &value, (int)sizeof value);
  bsp_qsize(&n, &nbytes);
  EXPECT_INT(n, 2, "superstep 2: a send made the new message visible at once");
  bsp_sync();

  /* Superstep 3: only the message of superstep 2. */
  bsp_qsize(&n, &nbytes);
  EXPECT_INT(n, 1, "superstep 3: messages (the unread ones of superstep 2 must be gone)");
  int got_tag = -1, got = -1;
  bsp_get_tag(&status, &got_tag);
  bsp_move(&got, (int)sizeof got);
  EXPECT_INT(got_tag, 2, "superstep 3: tag of the message");
  EXPECT_INT(got, 200 + left, "superstep 3: payload");
  bsp_sync();

  /* Superstep 4: nothing was sent in superstep 3. */
  bsp_qsize(&n, &nbytes);
  EXPECT_INT(n, 0, "superstep 4: messages");
  bsp_sync();
  test_end();
  printf("PASS bsmp_lifetime\n");
  return 0;
}
