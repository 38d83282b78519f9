/* 12000 messages sent per process in one superstep, spread over all processes: message k of
 * process s goes to (k + s) mod p with tag k and payload {s, k}; each arrives exactly once. */
#include "bsptest.h"

#define NMSG 12000

int main(void) {
  test_begin(bsp_nprocs());
  int p = bsp_nprocs(), me = bsp_pid();
  int size = (int)sizeof(int);
  bsp_set_tagsize(&size);
  bsp_sync();
  for (int k = 0; k < NMSG; ++k) {
    int payload[2] = {me, k};
    bsp_send((k + me) % p, &k, payload, (int)sizeof payload);
  }
  bsp_sync();
  int want = 0;
  for (int s = 0; s < p; ++s)
    for (int k = 0; k < NMSG; ++k) want += (k + s) % p == me;
  int n = -1, nbytes = -1;
  bsp_qsize(&n, &nbytes);
  EXPECT_INT(n, want, "bsp_qsize: messages");
  EXPECT_INT(nbytes, want * 2 * (int)sizeof(int), "bsp_qsize: payload bytes");
  unsigned char *seen = test_alloc((size_t)p * NMSG);
  memset(seen, 0, (size_t)p * NMSG);
  for (int m = 0; m < want; ++m) {
    int status = -2, tag = -1, payload[2] = {-1, -1};
    bsp_get_tag(&status, &tag);
    EXPECT_INT(status, 2 * (int)sizeof(int), "status of message %d", m);
    bsp_move(payload, (int)sizeof payload);
    int s = payload[0], k = payload[1];
    EXPECT(s >= 0 && s < p && k >= 0 && k < NMSG && k == tag && (k + s) % p == me,
           "message %d: tag %d, payload {%d, %d}", m, tag, s, k);
    EXPECT(!seen[s * NMSG + k], "message (%d, %d) arrived twice", s, k);
    seen[s * NMSG + k] = 1;
  }
  int status = -2;
  bsp_get_tag(&status, NULL);
  EXPECT_INT(status, -1, "bsp_get_tag status after every message");
  free(seen);
  bsp_sync();
  test_end();
  printf("PASS bsmp_many\n");
  return 0;
}
