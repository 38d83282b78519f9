/* bsp_send to every process including itself, 1-3 messages per pair with payloads of 0-4 ints
 * (zero-length ones too); bsp_qsize counts messages and payload bytes and drops as messages are
 * moved; bsp_get_tag gives the payload size and the tag; the queue ends empty (status -1).
 * (bsp_move on the empty queue is misuse: misuse_move_empty.c.) */
#include "bsptest.h"

static int messages_to(int src, int dst) { return 1 + (src + dst) % 3; }
static int payload_ints(int src, int dst, int j) { return (src * 7 + dst * 3 + j) % 5; }
static int payload_value(int src, int dst, int j, int i) {
  return src * 100000 + dst * 1000 + j * 10 + i;
}

int main(void) {
  test_begin(bsp_nprocs());
  int p = bsp_nprocs(), me = bsp_pid();
  int size = 2 * (int)sizeof(int);
  bsp_set_tagsize(&size);
  bsp_sync();

  int payload[8];
  for (int d = 0; d < p; ++d)
    for (int j = 0; j < messages_to(me, d); ++j) {
      int tag[2] = {me, j};
      int len = payload_ints(me, d, j);
      for (int i = 0; i < len; ++i) payload[i] = payload_value(me, d, j, i);
      bsp_send(d, tag, payload, len * (int)sizeof(int));
    }
  bsp_sync();

  int want_n = 0, want_bytes = 0;
  for (int s = 0; s < p; ++s)
    for (int j = 0; j < messages_to(s, me); ++j) {
      ++want_n;
      want_bytes += payload_ints(s, me, j) * (int)sizeof(int);
    }
  int n = -1, nbytes = -1;
  bsp_qsize(&n, &nbytes);
  EXPECT_INT(n, want_n, "bsp_qsize: messages");
  EXPECT_INT(nbytes, want_bytes, "bsp_qsize: payload bytes");

  int seen[64 * 3];
  memset(seen, 0, sizeof seen);
  for (int m = 0; m < want_n; ++m) {
    int tag[2] = {-1, -1}, status = -2;
    bsp_get_tag(&status, tag);
    int s = tag[0], j = tag[1];
    EXPECT(s >= 0 && s < p && j >= 0 && j < messages_to(s, me), "message %d has tag (%d, %d)", m, s,
           j);
    EXPECT(!seen[s * 3 + j], "message (%d, %d) received twice", s, j);
    seen[s * 3 + j] = 1;
    int len = payload_ints(s, me, j);
    EXPECT_INT(status, len * (int)sizeof(int), "bsp_get_tag status of message (%d, %d)", s, j);
    for (int i = 0; i < 8; ++i) payload[i] = -1;
    bsp_move(payload, (int)sizeof payload);
    for (int i = 0; i < len; ++i)
      EXPECT_INT(payload[i], payload_value(s, me, j, i), "int %d of message (%d, %d)", i, s, j);
    EXPECT_INT(payload[len], -1, "bsp_move wrote past the %d-byte payload of message (%d, %d)",
               len * 4, s, j);
    want_bytes -= len * (int)sizeof(int);
    bsp_qsize(&n, &nbytes);
    EXPECT_INT(n, want_n - m - 1, "bsp_qsize after %d moves: messages", m + 1);
    EXPECT_INT(nbytes, want_bytes, "bsp_qsize after %d moves: payload bytes", m + 1);
  }
  int status = -2, tag[2] = {-7, -7};
  bsp_get_tag(&status, tag);
  EXPECT_INT(status, -1, "bsp_get_tag status on the empty queue");
  bsp_qsize(&n, &nbytes);
  EXPECT_INT(n, 0, "bsp_qsize at the end: messages");
  EXPECT_INT(nbytes, 0, "bsp_qsize at the end: bytes");
  bsp_sync();
  test_end();
  printf("PASS bsmp_send_all\n");
  return 0;
}
