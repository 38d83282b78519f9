/* bsp_set_tagsize returns the old size and takes effect at the next sync; a message sent in the
 * superstep of the change carries a tag of the OLD size. Each superstep every process sends one
 * message (payload: its pid) to its right neighbour.
 *   s0: size 0 (default); set 4, returns 0; send "WXYZ" -> old size 0, so no tag travels
 *   s1: size 4; the s0 message's tag is not "WXYZ"; send "ABCD"
 *   s2: size 4; tag "ABCD"; set 2, returns 4; send "EFGH" -> old size 4 travels
 *   s3: size 2; tag starts "EF"; send "IJKL" -> "IJ"
 *   s4: size 2; tag "IJ" and bsp_get_tag writes 2 bytes only; set 0, returns 2; send "MN"
 *   s5: size 0; send with a NULL tag
 *   s6: payload arrives; set 0 returns 0. */
#include "bsptest.h"

static int right, left;

/* Take the one queued message: checks the count, the status and the payload; returns the tag. */
static void take_message(int superstep, char tag[4]) {
  int n = -1, nbytes = -1, status = -2, payload = -1;
  bsp_qsize(&n, &nbytes);
  EXPECT_INT(n, 1, "superstep %d: messages queued", superstep);
  memcpy(tag, "zzzz", 4);
  bsp_get_tag(&status, tag);
  bsp_move(&payload, (int)sizeof payload);
  EXPECT_INT(status, (int)sizeof(int), "superstep %d: bsp_get_tag status (payload size)",
             superstep);
  EXPECT_INT(payload, left, "superstep %d: payload", superstep);
}

static void set_tagsize_expect(int superstep, int new_size, int old_size) {
  int size = new_size;
  bsp_set_tagsize(&size);
  EXPECT_INT(size, old_size, "superstep %d: bsp_set_tagsize(%d) returned the old size", superstep,
             new_size);
}

int main(void) {
  test_begin(bsp_nprocs());
  int p = bsp_nprocs(), me = bsp_pid();
  right = (me + 1) % p;
  left = (me + p - 1) % p;
  char tag[4];

  set_tagsize_expect(0, 4, 0);
  bsp_send(right, "WXYZ", &me, (int)sizeof me);
  bsp_sync();

  take_message(1, tag);
  EXPECT(memcmp(tag, "WXYZ", 4) != 0,
         "superstep 1: the message sent in the superstep of bsp_set_tagsize(4) carried a 4-byte "
         "tag; the old size 0 applies");
  bsp_send(right, "ABCD", &me, (int)sizeof me);
  bsp_sync();

  take_message(2, tag);
  EXPECT(memcmp(tag, "ABCD", 4) == 0, "superstep 2: tag \"%.4s\", expected \"ABCD\"", tag);
  set_tagsize_expect(2, 2, 4);
  bsp_send(right, "EFGH", &me, (int)sizeof me);
  bsp_sync();

  take_message(3, tag);
  EXPECT(memcmp(tag, "EF", 2) == 0,
         "superstep 3: tag starts \"%.2s\", expected \"EF\" (sent with the old size 4)", tag);
  bsp_send(right, "IJKL", &me, (int)sizeof me);
  bsp_sync();

  take_message(4, tag);
  EXPECT(memcmp(tag, "IJ", 2) == 0, "superstep 4: tag starts \"%.2s\", expected \"IJ\"", tag);
  EXPECT(memcmp(tag + 2, "zz", 2) == 0,
         "superstep 4: bsp_get_tag wrote more than the 2-byte tag size (\"%.4s\")", tag);
  set_tagsize_expect(4, 0, 2);
  bsp_send(right, "MN", &me, (int)sizeof me);
  bsp_sync();

  take_message(5, tag);
  bsp_send(right, NULL, &me, (int)sizeof me);
  bsp_sync();

  take_message(6, tag);
  set_tagsize_expect(6, 0, 0);
  bsp_sync();
  test_end();
  printf("PASS bsmp_tagsize\n");
  return 0;
}
