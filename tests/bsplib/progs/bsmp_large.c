/* Large messages: a 2 MiB message to every process and a 6 MiB one to the right neighbour, read
 * with bsp_move and bsp_hpmove and checked word by word. */
#include "bsptest.h"

#define SMALLER (2 << 20)
#define LARGER (6 << 20)

static void check_payload(const void *payload, int nbytes, int sender, int kind) {
  const unsigned char *bytes = payload;
  for (int i = 0; i < nbytes / 4; ++i) {
    uint32_t word;
    memcpy(&word, bytes + 4 * (size_t)i, sizeof word);
    uint32_t want = test_pattern((uint32_t)(sender * 10 + kind), (uint32_t)i);
    if (word != want)
      EXPECT(0, "word %d of the kind-%d message from process %d: expected %u, got %u", i, kind,
             sender, want, word);
  }
}

int main(void) {
  test_begin(bsp_nprocs());
  int p = bsp_nprocs(), me = bsp_pid();
  int size = 2 * (int)sizeof(int);
  bsp_set_tagsize(&size);
  bsp_sync();
  uint32_t *smaller = test_alloc(SMALLER), *larger = test_alloc(LARGER);
  for (int i = 0; i < SMALLER / 4; ++i) smaller[i] = test_pattern((uint32_t)(me * 10), (uint32_t)i);
  for (int i = 0; i < LARGER / 4; ++i)
    larger[i] = test_pattern((uint32_t)(me * 10 + 1), (uint32_t)i);
  int tag[2] = {me, 0};
  for (int d = 0; d < p; ++d) bsp_send(d, tag, smaller, SMALLER);
  tag[1] = 1;
  bsp_send((me + 1) % p, tag, larger, LARGER);
  bsp_sync();

  int n = -1, nbytes = -1;
  bsp_qsize(&n, &nbytes);
  EXPECT_INT(n, p + 1, "bsp_qsize: messages");
  EXPECT_INT(nbytes, p * SMALLER + LARGER, "bsp_qsize: payload bytes");
  uint32_t *buffer = test_alloc(LARGER);
  for (int m = 0; m < p + 1; ++m) {
    int status = -2, got_tag[2] = {-1, -1};
    bsp_get_tag(&status, got_tag);
    int kind = got_tag[1], sender = got_tag[0];
    EXPECT(sender >= 0 && sender < p && (kind == 0 || kind == 1), "message %d has tag (%d, %d)", m,
           sender, kind);
    EXPECT_INT(status, kind == 0 ? SMALLER : LARGER, "status of the kind-%d message from %d", kind,
               sender);
    if (m % 2 == 0) {
      bsp_move(buffer, LARGER);
      check_payload(buffer, status, sender, kind);
    } else {
      void *tag_ptr = NULL, *payload_ptr = NULL;
      int length = bsp_hpmove(&tag_ptr, &payload_ptr);
      EXPECT_INT(length, status, "bsp_hpmove length of the kind-%d message from %d", kind, sender);
      check_payload(payload_ptr, length, sender, kind);
    }
  }
  bsp_sync();
  free(buffer);
  free(larger);
  free(smaller);
  test_end();
  printf("PASS bsmp_large\n");
  return 0;
}
