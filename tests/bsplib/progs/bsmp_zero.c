/* Tag size 0 (the default) and zero-length payloads: the messages still arrive and are
 * counted; bsp_get_tag gives status 0 (not -1) for them, bsp_hpmove returns 0. */
#include "bsptest.h"

int main(void) {
  test_begin(bsp_nprocs());
  int p = bsp_nprocs();
  int dummy = 0;
  for (int d = 0; d < p; ++d) {
    bsp_send(d, NULL, &dummy, 0);
    bsp_send(d, NULL, NULL, 0);
  }
  bsp_sync();
  int n = -1, nbytes = -1;
  bsp_qsize(&n, &nbytes);
  EXPECT_INT(n, 2 * p, "bsp_qsize: zero-length messages");
  EXPECT_INT(nbytes, 0, "bsp_qsize: payload bytes");
  /* Two messages per round: one taken with bsp_move, one with bsp_hpmove. */
  for (int m = 0; m < p; ++m) {
    int status = -2;
    bsp_get_tag(&status, NULL);
    EXPECT_INT(status, 0, "round %d: bsp_get_tag status of a zero-length message", m);
    int buffer = 77;
    bsp_move(&buffer, (int)sizeof buffer);
    EXPECT_INT(buffer, 77, "round %d: bsp_move of a zero-length payload changed the buffer", m);
    status = -2;
    bsp_get_tag(&status, NULL);
    EXPECT_INT(status, 0, "round %d: bsp_get_tag status of the second zero-length message", m);
    void *tag_ptr = NULL, *payload_ptr = NULL;
    EXPECT_INT(bsp_hpmove(&tag_ptr, &payload_ptr), 0,
               "round %d: bsp_hpmove of a zero-length message", m);
    bsp_qsize(&n, &nbytes);
    EXPECT_INT(n, 2 * p - 2 * (m + 1), "round %d: messages left", m);
  }
  bsp_qsize(&n, &nbytes);
  EXPECT_INT(n, 0, "bsp_qsize after taking every message");
  int status = -2;
  bsp_get_tag(&status, NULL);
  EXPECT_INT(status, -1, "bsp_get_tag status on the empty queue");
  bsp_sync();
  test_end();
  printf("PASS bsmp_zero\n");
  return 0;
}
