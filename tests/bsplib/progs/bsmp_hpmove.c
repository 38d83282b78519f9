/* bsp_hpmove returns the payload length and points at the tag and payload, removes the message,
 * and the pointers stay valid until the next sync (checked after draining the queue and, in
 * the second round, after sending new messages);
 * -1 on the empty queue. */
#include "bsptest.h"

#define PER_PAIR 3

int main(void) {
  test_begin(bsp_nprocs());
  int p = bsp_nprocs(), me = bsp_pid();
  int size = 2 * (int)sizeof(int);
  bsp_set_tagsize(&size);
  bsp_sync();
  int payload[40];
  for (int round = 0; round < 2; ++round) {
    for (int d = 0; d < p; ++d)
      for (int j = 0; j < PER_PAIR; ++j) {
        int tag[2] = {me, j};
        int len = 10 * j + d + round; /* ints, j = 0 and d = 0 and round 0: empty */
        for (int i = 0; i < len; ++i) payload[i] = round * 1000000 + me * 10000 + j * 100 + i;
        bsp_send(d, tag, payload, len * (int)sizeof(int));
      }
    bsp_sync();
    int total = p * PER_PAIR;
    void **tags = test_alloc(sizeof(void *) * (size_t)total);
    void **payloads = test_alloc(sizeof(void *) * (size_t)total);
    int *lengths = test_alloc(sizeof(int) * (size_t)total);
    for (int m = 0; m < total; ++m) {
      lengths[m] = bsp_hpmove(&tags[m], &payloads[m]);
      int n = -1, nbytes = -1;
      bsp_qsize(&n, &nbytes);
      EXPECT_INT(n, total - m - 1, "round %d: messages left after hpmove %d", round, m);
    }
    void *tag_ptr = NULL, *payload_ptr = NULL;
    EXPECT_INT(bsp_hpmove(&tag_ptr, &payload_ptr), -1, "round %d: bsp_hpmove on the empty queue",
               round);
    /* In the last round, send more messages (for the next superstep) before looking: the
     * pointers must survive that too. */
    if (round == 1)
      for (int d = 0; d < p; ++d)
        for (int j = 0; j < PER_PAIR; ++j) {
          int tag[2] = {-5, -5};
          for (int i = 0; i < 40; ++i) payload[i] = -5;
          bsp_send(d, tag, payload, (int)sizeof payload);
        }
    /* Every pointer is still valid now, after all the other messages were taken. */
    int seen[64 * PER_PAIR];
    memset(seen, 0, sizeof seen);
    for (int m = 0; m < total; ++m) {
      int tag[2];
      memcpy(tag, tags[m], sizeof tag);
      int s = tag[0], j = tag[1];
      EXPECT(s >= 0 && s < p && j >= 0 && j < PER_PAIR && !seen[s * PER_PAIR + j],
             "round %d: message %d has tag (%d, %d)", round, m, s, j);
      seen[s * PER_PAIR + j] = 1;
      int len = 10 * j + me + round;
      EXPECT_INT(lengths[m], len * (int)sizeof(int),
                 "round %d: bsp_hpmove length of message (%d, %d)", round, s, j);
      for (int i = 0; i < len; ++i) {
        int value;
        memcpy(&value, (char *)payloads[m] + i * sizeof(int), sizeof value);
        EXPECT_INT(value, round * 1000000 + s * 10000 + j * 100 + i,
                   "round %d: int %d of message (%d, %d)", round, i, s, j);
      }
    }
    free(lengths);
    free(payloads);
    free(tags);
  }
  bsp_sync();
  test_end();
  printf("PASS bsmp_hpmove\n");
  return 0;
}
