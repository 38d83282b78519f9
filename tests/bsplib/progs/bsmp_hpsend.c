/* bsp_hpsend: messages whose tag and payload stay in the sender's memory until the sync (small
 * payloads and ones of 8 KiB, which travel without a copy), mixed with bsp_send. Each arrives
 * once, with its tag and payload; the sender may reuse its buffers after the sync without
 * changing what was received. */
#include "bsptest.h"

#define BIG 2048 /* ints: 8 KiB */

int main(void) {
  test_begin(bsp_nprocs());
  int p = bsp_nprocs(), me = bsp_pid();
  int tag_size = 2 * (int)sizeof(int);
  bsp_set_tagsize(&tag_size);
  bsp_sync();
  int *big = test_alloc((size_t)p * BIG * sizeof(int));
  int(*tags)[2] = test_alloc((size_t)p * 2 * sizeof *tags);
  int *small = test_alloc((size_t)p * sizeof(int));
  for (int round = 0; round < 3; ++round) {
    for (int q = 0; q < p; ++q) {
      for (int i = 0; i < BIG; ++i)
        big[q * BIG + i] = round * 1000000 + me * 10000 + q * 100 + i % 97;
      tags[2 * q][0] = me, tags[2 * q][1] = 1;
      tags[2 * q + 1][0] = me, tags[2 * q + 1][1] = 2;
      small[q] = round * 100 + me;
      bsp_hpsend(q, tags[2 * q], &big[q * BIG], BIG * (int)sizeof(int));
      bsp_hpsend(q, tags[2 * q + 1], &small[q], (int)sizeof(int));
      int copy_tag[2] = {me, 3};
      bsp_send(q, copy_tag, &small[q], (int)sizeof(int));
    }
    bsp_sync();
    /* The sender scribbles over everything it sent: received messages must not change. */
    for (int i = 0; i < p * BIG; ++i) big[i] = -7;
    for (int q = 0; q < p; ++q) small[q] = -7, tags[2 * q][0] = tags[2 * q + 1][0] = -7;
    int n = 0, bytes = 0;
    bsp_qsize(&n, &bytes);
    EXPECT_INT(n, 3 * p, "round %d: messages queued", round);
    EXPECT_INT(bytes, p * (BIG + 2) * (int)sizeof(int), "round %d: payload bytes queued", round);
    int seen[3] = {0, 0, 0};
    for (int m = 0; m < 3 * p; ++m) {
      int tag[2] = {-1, -1}, status = -2;
      bsp_get_tag(&status, tag);
      void *tag_at = NULL, *payload_at = NULL;
      int length = bsp_hpmove(&tag_at, &payload_at);
      EXPECT_INT(length, status, "round %d: bsp_hpmove length against bsp_get_tag status", round);
      int from = tag[0], kind = tag[1];
      EXPECT(from >= 0 && from < p && kind >= 1 && kind <= 3, "round %d: tag (%d, %d)", round, from,
             kind);
      const int *payload = payload_at;
      if (kind == 1) {
        EXPECT_INT(length, BIG * (int)sizeof(int), "round %d: large payload from %d", round, from);
        for (int i = 0; i < BIG; ++i)
          EXPECT_INT(payload[i], round * 1000000 + from * 10000 + me * 100 + i % 97,
                     "round %d: word %d from %d", round, i, from);
      } else {
        EXPECT_INT(length, (int)sizeof(int), "round %d: small payload from %d", round, from);
        EXPECT_INT(payload[0], round * 100 + from, "round %d: small payload (kind %d) from %d",
                   round, kind, from);
      }
      ++seen[kind - 1];
    }
    for (int k = 0; k < 3; ++k)
      EXPECT_INT(seen[k], p, "round %d: messages of kind %d", round, k + 1);
  }
  bsp_sync();
  test_end();
  free(big);
  free(tags);
  free(small);
  printf("PASS bsmp_hpsend\n");
  return 0;
}
