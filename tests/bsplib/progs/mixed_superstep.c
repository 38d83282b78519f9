/* Everything in one superstep, several rounds: puts, hpputs, gets, hpgets and sends (with a tag
 * size change in round 1) to every process at once, so that DRMA and BSMP traffic share the
 * superstep's exchange. Sizes grow with the round (up to 64 KiB per put). */
#include "bsptest.h"

#define ROUNDS 5
#define MAXINTS (16 << 10)

int main(void) {
  test_begin(bsp_nprocs());
  int p = bsp_nprocs(), me = bsp_pid();
  size_t slot = MAXINTS;
  int *put_area = test_alloc(sizeof(int) * slot * (size_t)p); /* slot s: written by process s */
  int *hp_area = test_alloc(sizeof(int) * (size_t)p);         /* int s: hpput by process s */
  int *get_area = test_alloc(sizeof(int) * slot);             /* read by everyone */
  int *sources = test_alloc(sizeof(int) * slot * (size_t)p);
  int *hp_sources = test_alloc(sizeof(int) * (size_t)p);
  int *got = test_alloc(sizeof(int) * slot * (size_t)p);
  int *hp_got = test_alloc(sizeof(int) * (size_t)p);
  int *payload = test_alloc(sizeof(int) * slot);
  bsp_push_reg(put_area, (int)(sizeof(int) * slot) * p);
  bsp_push_reg(hp_area, (int)sizeof(int) * p);
  bsp_push_reg(get_area, (int)(sizeof(int) * slot));
  bsp_sync();
  int tag_nbytes = 0;
  for (int round = 0; round < ROUNDS; ++round) {
    int n = 4 << (3 * round); /* 4, 32, 256, 2048, 16384 ints */
    for (int i = 0; i < n; ++i) get_area[i] = round * 100000000 + me * 1000000 + i;
    bsp_sync(); /* get_area is ready everywhere before anyone reads it */
    for (int d = 0; d < p; ++d) {
      int *src = sources + slot * (size_t)d;
      for (int i = 0; i < n; ++i) src[i] = round * 100000000 + me * 1000000 + d * 10000 + i % 10000;
      bsp_put(d, src, put_area, (int)(sizeof(int) * slot) * me, n * (int)sizeof(int));
      hp_sources[d] = round * 1000 + me * 10 + d;
      bsp_hpput(d, &hp_sources[d], hp_area, me * (int)sizeof(int), (int)sizeof(int));
      bsp_get(d, get_area, 0, got + slot * (size_t)d, n * (int)sizeof(int));
      hp_got[d] = -1;
      bsp_hpget(d, get_area, (n - 1) * (int)sizeof(int), &hp_got[d], (int)sizeof(int));
      for (int i = 0; i < n / 2; ++i) payload[i] = round * 1000000 + me * 1000 + d + i;
      int tag[2] = {me, round};
      bsp_send(d, tag, payload, (n / 2) * (int)sizeof(int));
    }
    if (round == 1) {
      int size = 2 * (int)sizeof(int);
      bsp_set_tagsize(&size);
      EXPECT_INT(size, 0, "round 1: old tag size");
    }
    bsp_sync();
    for (int s = 0; s < p; ++s) {
      const int *area = put_area + slot * (size_t)s;
      for (int i = 0; i < n; ++i)
        if (area[i] != round * 100000000 + s * 1000000 + me * 10000 + i % 10000)
          EXPECT_INT(area[i], round * 100000000 + s * 1000000 + me * 10000 + i % 10000,
                     "round %d: int %d put by process %d", round, i, s);
      EXPECT_INT(hp_area[s], round * 1000 + s * 10 + me, "round %d: int hpput by process %d", round,
                 s);
      const int *from = got + slot * (size_t)s;
      for (int i = 0; i < n; ++i)
        if (from[i] != round * 100000000 + s * 1000000 + i)
          EXPECT_INT(from[i], round * 100000000 + s * 1000000 + i,
                     "round %d: int %d got from process %d", round, i, s);
      EXPECT_INT(hp_got[s], round * 100000000 + s * 1000000 + n - 1,
                 "round %d: int hpget from process %d", round, s);
    }
    int count = -1, nbytes = -1;
    bsp_qsize(&count, &nbytes);
    EXPECT_INT(count, p, "round %d: messages", round);
    EXPECT_INT(nbytes, p * (n / 2) * (int)sizeof(int), "round %d: payload bytes", round);
    for (int m = 0; m < p; ++m) {
      int tag[2] = {-1, -1}, status = -2;
      bsp_get_tag(&status, tag);
      int s = tag_nbytes ? tag[0] : -1;
      EXPECT_INT(status, (n / 2) * (int)sizeof(int), "round %d: message %d status", round, m);
      bsp_move(payload, (int)(sizeof(int) * slot));
      if (s < 0)
        s = (payload[0] - round * 1000000 - me) /
            1000; /* no tag yet: the sender is in the payload */
      else
        EXPECT_INT(tag[1], round, "round %d: tag round of message %d", round, m);
      EXPECT(s >= 0 && s < p, "round %d: message %d from process %d", round, m, s);
      for (int i = 0; i < n / 2; ++i)
        if (payload[i] != round * 1000000 + s * 1000 + me + i)
          EXPECT_INT(payload[i], round * 1000000 + s * 1000 + me + i,
                     "round %d: int %d of the message from process %d", round, i, s);
    }
    if (round == 1) tag_nbytes = 2 * (int)sizeof(int);
  }
  bsp_pop_reg(get_area);
  bsp_pop_reg(hp_area);
  bsp_pop_reg(put_area);
  bsp_sync();
  free(payload);
  free(hp_got);
  free(got);
  free(hp_sources);
  free(sources);
  free(get_area);
  free(hp_area);
  free(put_area);
  test_end();
  printf("PASS mixed_superstep\n");
  return 0;
}
