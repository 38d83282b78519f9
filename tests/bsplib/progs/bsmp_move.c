/* bsp_move copies at most reception_nbytes (the rest of the buffer is untouched) and removes
 * the message even when it copied only part of it; with a larger buffer it copies the payload
 * only. Each process sends two 16-int messages to every process: tag 0 is read partially
 * (first 5 ints), tag 1 fully into a 32-int buffer. */
#include "bsptest.h"

#define LEN 16

int main(void) {
  test_begin(bsp_nprocs());
  int p = bsp_nprocs(), me = bsp_pid();
  int size = 2 * (int)sizeof(int);
  bsp_set_tagsize(&size);
  bsp_sync();
  int payload[LEN];
  for (int d = 0; d < p; ++d)
    for (int kind = 0; kind < 2; ++kind) {
      int tag[2] = {me, kind};
      for (int i = 0; i < LEN; ++i) payload[i] = me * 1000 + kind * 100 + i;
      bsp_send(d, tag, payload, (int)sizeof payload);
    }
  bsp_sync();
  int buffer[2 * LEN];
  for (int m = 0; m < 2 * p; ++m) {
    int n = -1, nbytes = -1, status = -2, tag[2] = {-1, -1};
    bsp_qsize(&n, &nbytes);
    EXPECT_INT(n, 2 * p - m, "messages left before move %d", m);
    EXPECT_INT(nbytes, (2 * p - m) * LEN * (int)sizeof(int), "payload bytes left before move %d",
               m);
    bsp_get_tag(&status, tag);
    EXPECT_INT(status, LEN * (int)sizeof(int), "bsp_get_tag status before move %d", m);
    int s = tag[0], kind = tag[1];
    EXPECT(s >= 0 && s < p && (kind == 0 || kind == 1), "tag (%d, %d) before move %d", s, kind, m);
    for (int i = 0; i < 2 * LEN; ++i) buffer[i] = -1;
    int copied = kind == 0 ? 5 : LEN;
    bsp_move(buffer, kind == 0 ? 5 * (int)sizeof(int) : (int)sizeof buffer);
    for (int i = 0; i < 2 * LEN; ++i)
      EXPECT_INT(buffer[i], i < copied ? s * 1000 + kind * 100 + i : -1,
                 "buffer[%d] after bsp_move of message (%d, %d) with room for %d ints", i, s, kind,
                 kind == 0 ? 5 : 2 * LEN);
  }
  int status = -2;
  bsp_get_tag(&status, NULL);
  EXPECT_INT(status, -1, "bsp_get_tag status after moving every message");
  bsp_sync();
  test_end();
  printf("PASS bsmp_move\n");
  return 0;
}
