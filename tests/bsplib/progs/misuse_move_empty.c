/* misuse_move_empty: the last process calls bsp_move when no message is queued. Expected:
 * "bsp_move: the message queue is empty", once. */
#include "misuse.h"

int main(void) {
  test_begin(bsp_nprocs());
  int p = bsp_nprocs(), me = bsp_pid();
  int target = 0;
  if (me == p - 1 && p > 1)
    bsp_send(0, NULL, &target, (int)sizeof target); /* a message, not for it */
  bsp_sync();
  if (me == p - 1) {
    int buffer = 5;
    bsp_move(&buffer, (int)sizeof buffer);
  }
  bsp_sync();
  MISUSE_NOT_CAUGHT("bsp_move on an empty queue was accepted");
}
