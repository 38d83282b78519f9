/* Offsets: puts and gets at int and odd byte offsets, including the last bytes of an area;
 * bytes not written keep their values. */
#include "bsptest.h"

#define NINTS 16
#define NBYTES 37

int main(void) {
  test_begin(bsp_nprocs());
  int p = bsp_nprocs(), me = bsp_pid();
  int right = (me + 1) % p, left = (me + p - 1) % p;
  int ints[NINTS];
  unsigned char bytes[NBYTES];
  for (int i = 0; i < NINTS; ++i) ints[i] = -1 - i;
  for (int i = 0; i < NBYTES; ++i) bytes[i] = (unsigned char)(200 + me + i);
  bsp_push_reg(ints, (int)sizeof ints);
  bsp_push_reg(bytes, (int)sizeof bytes);
  bsp_sync();

  int three[3] = {me * 10 + 1, me * 10 + 2, me * 10 + 3};
  int last = me * 10 + 9;
  unsigned char five[5];
  for (int i = 0; i < 5; ++i) five[i] = (unsigned char)(me * 16 + i);
  int got_pair[2] = {0, 0};
  unsigned char got_tail[4] = {0, 0, 0, 0};
  bsp_put(right, three, ints, 5 * (int)sizeof(int), (int)sizeof three);
  bsp_put(right, &last, ints, (NINTS - 1) * (int)sizeof(int), (int)sizeof last);
  bsp_put(right, five, bytes, 3, 5);
  bsp_get(right, ints, 7 * (int)sizeof(int), got_pair, (int)sizeof got_pair);
  bsp_get(right, bytes, NBYTES - 4, got_tail, 4);
  bsp_sync();

  for (int i = 0; i < NINTS; ++i) {
    int want = -1 - i;
    if (i >= 5 && i < 8) want = left * 10 + (i - 4);
    if (i == NINTS - 1) want = left * 10 + 9;
    EXPECT_INT(ints[i], want, "ints[%d] after puts at int offsets 5..7 and %d", i, NINTS - 1);
  }
  for (int i = 0; i < NBYTES; ++i) {
    int want = (unsigned char)(200 + me + i);
    if (i >= 3 && i < 8) want = (unsigned char)(left * 16 + (i - 3));
    EXPECT_INT(bytes[i], want, "bytes[%d] after a 5-byte put at byte offset 3", i);
  }
  /* The gets read before the puts: ints 7 is old (-8), ints 8 untouched (-9). */
  EXPECT_INT(got_pair[0], -8, "int 7 got from process %d", right);
  EXPECT_INT(got_pair[1], -9, "int 8 got from process %d", right);
  for (int i = 0; i < 4; ++i)
    EXPECT_INT(got_tail[i], (unsigned char)(200 + right + NBYTES - 4 + i),
               "tail byte %d got from process %d", i, right);
  bsp_pop_reg(bytes);
  bsp_pop_reg(ints);
  bsp_sync();
  test_end();
  printf("PASS drma_offsets\n");
  return 0;
}
