/* messages_edge - BSMP corner cases as irregular codes meet them:
 *   - the tag size changed in a superstep that also sends: those messages keep the tag size
 *     they were sent with (0 -> 4: no tag bytes are written; 4 -> 8: 4 bytes; 8 -> 0: 8 bytes);
 *   - zero-length payloads, messages to oneself, a non-NULL tag pointer under tag size 0,
 *     bsp_move(NULL, 0) to discard, bsp_move with a buffer smaller than the payload;
 *   - bsp_get_tag does not remove a message, and gives -1 on an empty queue; bsp_qsize counts
 *     what is still queued;
 *   - thousands of messages in one superstep, read alternately by bsp_move and bsp_hpmove,
 *     with the hpmove pointers kept and only checked after the queue is empty and after
 *     some of them were forwarded straight from those pointers with bsp_send;
 *   - a 300 KB payload; the send buffer reused right after each bsp_send.
 * The sequence runs ROUNDS times. */
#include <string.h>

#include "check.h"

#define ROUNDS 3
#define MANY 3000
#define BIG 300000
#define SENTINEL 0xEE

typedef struct {
  int source, k;
} pair_tag;

static int len2(int q, int t) { return ((q + t) % 3) * (int)sizeof(int); }
static int many_ints(int k) { return k % 5; }
static unsigned char big_byte(int src, int i) {
  return (unsigned char)(i * 7 + src * 13 + (i >> 9));
}

static void expect_queue(int nmsg, int nbytes, const char *when, int round) {
  int m = -1, b = -1;
  bsp_qsize(&m, &b);
  CHECK_LONG(m, nmsg, "round %d, %s: bsp_qsize messages", round, when);
  CHECK_LONG(b, nbytes, "round %d, %s: bsp_qsize bytes", round, when);
}

static void one_round(int round, unsigned char *big) {
  int p = bsp_nprocs(), s = bsp_pid();
  int status, size;
  unsigned char tb[16];

  /* 1: tag size 0 now; ask for 4 and send under tag size 0 in the same superstep. */
  size = (int)sizeof(int);
  bsp_set_tagsize(&size);
  CHECK_LONG(size, 0, "round %d: old tag size", round);
  int garbage = 0x11223344, payload = 0;
  for (int t = 0; t < p; t++) {
    payload = 100 * s + t;
    bsp_send(t, &garbage, &payload, (int)sizeof(int));
    payload = -1; /* the buffer is free again */
  }
  bsp_send(s, NULL, NULL, 0);
  bsp_sync();

  /* 2: tag size 4, but these messages were sent with tag size 0. */
  expect_queue(p + 1, p * (int)sizeof(int), "step 2", round);
  int from_seen = 0;
  for (int m = 0; m < p + 1; m++) {
    memset(tb, SENTINEL, sizeof tb);
    status = -2;
    bsp_get_tag(&status, tb);
    for (int i = 0; i < 8; i++)
      CHECK_LONG(tb[i], SENTINEL,
                 "round %d step 2: bsp_get_tag wrote tag byte %d of a tag-size-0 message", round,
                 i);
    int again = -2;
    bsp_get_tag(&again, tb);
    CHECK_LONG(again, status, "round %d step 2: bsp_get_tag twice", round);
    expect_queue(p + 1 - m, (p - from_seen) * (int)sizeof(int), "step 2 before move", round);
    if (status == 0) {
      bsp_move(NULL, 0);
    } else {
      CHECK_LONG(status, (int)sizeof(int), "round %d step 2: payload size", round);
      int got = -1;
      bsp_move(&got, (int)sizeof(int));
      CHECK(got % 100 == s && got / 100 >= 0 && got / 100 < p, "round %d step 2: payload %d", round,
            got);
      from_seen++;
    }
  }
  CHECK_LONG(from_seen, p, "round %d step 2: messages with a payload", round);
  status = 0;
  bsp_get_tag(&status, tb);
  CHECK_LONG(status, -1, "round %d step 2: bsp_get_tag on the empty queue", round);
  /* Send with 4-byte tags, and ask for 8-byte tags from the next superstep on. */
  for (int t = 0; t < p; t++) {
    int tag = 1000 * s + t, data[2] = {s, t};
    bsp_send(t, &tag, data, len2(s, t));
  }
  int selftag = -s - 1;
  for (int i = 0; i < 100; i++) big[i] = big_byte(s, i);
  bsp_send(s, &selftag, big, 100);
  size = (int)sizeof(pair_tag);
  bsp_set_tagsize(&size);
  CHECK_LONG(size, (int)sizeof(int), "round %d step 2: old tag size", round);
  bsp_sync();

  /* 3: tag size 8; the queue holds 4-byte-tag messages. */
  int bytes3 = 100;
  for (int q = 0; q < p; q++) bytes3 += len2(q, s);
  expect_queue(p + 1, bytes3, "step 3", round);
  for (int m = 0; m < p + 1; m++) {
    memset(tb, SENTINEL, sizeof tb);
    bsp_get_tag(&status, tb);
    for (int i = 4; i < 8; i++)
      CHECK_LONG(tb[i], SENTINEL, "round %d step 3: tag byte %d beyond the 4-byte tag", round, i);
    int tag;
    memcpy(&tag, tb, sizeof tag);
    if (tag == -s - 1) {
      CHECK_LONG(status, 100, "round %d step 3: size of the message to myself", round);
      unsigned char buf[128];
      memset(buf, SENTINEL, sizeof buf);
      bsp_move(buf, 10);
      for (int i = 0; i < 10; i++)
        CHECK_LONG(buf[i], big_byte(s, i), "round %d step 3: truncated move byte %d", round, i);
      for (int i = 10; i < 128; i++)
        CHECK_LONG(buf[i], SENTINEL, "round %d step 3: bsp_move(10) wrote byte %d", round, i);
    } else {
      int q = tag / 1000;
      CHECK(q >= 0 && q < p && tag % 1000 == s, "round %d step 3: tag %d", round, tag);
      CHECK_LONG(status, len2(q, s), "round %d step 3: payload size from %d", round, q);
      int data[2] = {-9, -9};
      if (m % 2) {
        bsp_move(data, (int)sizeof data);
      } else {
        void *tp, *pp;
        CHECK_LONG(bsp_hpmove(&tp, &pp), status, "round %d step 3: bsp_hpmove size", round);
        int t4;
        memcpy(&t4, tp, sizeof t4);
        CHECK_LONG(t4, tag, "round %d step 3: bsp_hpmove tag", round);
        memcpy(data, pp, (size_t)status);
      }
      if (status >= 4) CHECK_LONG(data[0], q, "round %d step 3: payload[0] from %d", round, q);
      if (status >= 8) CHECK_LONG(data[1], s, "round %d step 3: payload[1] from %d", round, q);
    }
  }
  /* Thousands of 8-byte-tag messages, and one big one to the next process. */
  for (int k = 0; k < MANY; k++) {
    pair_tag tag = {s, k};
    int data[4];
    for (int i = 0; i < 4; i++) data[i] = s * 100000 + k * 10 + i;
    bsp_send((s + k) % p, &tag, data, many_ints(k) * (int)sizeof(int));
  }
  pair_tag bigtag = {s, -1};
  for (int i = 0; i < BIG; i++) big[i] = big_byte(s, i);
  bsp_send((s + 1) % p, &bigtag, big, BIG);
  memset(big, 0, BIG);
  bsp_sync();

  /* 4: read everything; keep the hpmove pointers until the end of the superstep. */
  int nexp = 1, bexp = BIG;
  for (int q = 0; q < p; q++)
    for (int k = 0; k < MANY; k++)
      if ((q + k) % p == s) {
        nexp++;
        bexp += many_ints(k) * (int)sizeof(int);
      }
  expect_queue(nexp, bexp, "step 4", round);
  char *seen = check_malloc((size_t)p * MANY);
  memset(seen, 0, (size_t)p * MANY);
  void **keep_tag = check_malloc((size_t)nexp * sizeof(void *)),
       **keep_pay = check_malloc((size_t)nexp * sizeof(void *));
  int *keep_size = check_malloc((size_t)nexp * sizeof(int)), nkeep = 0, nforward = 0;
  for (int m = 0; m < nexp; m++) {
    pair_tag tag = {-1, -1};
    bsp_get_tag(&status, &tag);
    if (tag.k == -1) {
      int q = (s + p - 1) % p;
      CHECK(tag.source == q && status == BIG, "round %d step 4: big message tag {%d, %d} size %d",
            round, tag.source, tag.k, status);
      bsp_move(big, BIG);
      for (int i = 0; i < BIG; i++)
        CHECK_LONG(big[i], big_byte(q, i), "round %d step 4: big payload byte %d", round, i);
      continue;
    }
    CHECK(tag.source >= 0 && tag.source < p && tag.k >= 0 && tag.k < MANY &&
              (tag.source + tag.k) % p == s,
          "round %d step 4: tag {%d, %d}", round, tag.source, tag.k);
    CHECK(!seen[tag.source * MANY + tag.k], "round %d step 4: duplicate {%d, %d}", round,
          tag.source, tag.k);
    seen[tag.source * MANY + tag.k] = 1;
    CHECK_LONG(status, many_ints(tag.k) * (int)sizeof(int), "round %d step 4: size of {%d, %d}",
               round, tag.source, tag.k);
    if (m % 3 == 0) {
      int data[4] = {-1, -1, -1, -1};
      bsp_move(data, (int)sizeof data);
      for (int i = 0; i < status / 4; i++)
        CHECK_LONG(data[i], tag.source * 100000 + tag.k * 10 + i, "round %d step 4: moved int %d",
                   round, i);
      for (int i = status / 4; i < 4; i++)
        CHECK_LONG(data[i], -1, "round %d step 4: bsp_move wrote int %d beyond a %d-byte payload",
                   round, i, status);
      if (tag.k % 7 == 0) {
        bsp_send(tag.source, &tag, data, status);
        nforward++;
      }
    } else {
      CHECK_LONG(bsp_hpmove(&keep_tag[nkeep], &keep_pay[nkeep]), status,
                 "round %d step 4: bsp_hpmove size", round);
      keep_size[nkeep] = status;
      if (tag.k % 7 == 0) { /* forward straight from the hpmove buffers, back to the sender */
        bsp_send(tag.source, keep_tag[nkeep], keep_pay[nkeep], status);
        nforward++;
      }
      nkeep++;
    }
  }
  expect_queue(0, 0, "step 4 after reading", round);
  int nforward_expected = 0;
  for (int q = 0; q < p; q++)
    for (int k = 0; k < MANY; k += 7) nforward_expected += (q + k) % p == s;
  CHECK_LONG(nforward, nforward_expected, "round %d step 4: messages forwarded", round);
  void *tp, *pp;
  CHECK_LONG(bsp_hpmove(&tp, &pp), -1, "round %d step 4: bsp_hpmove on the empty queue", round);
  bsp_get_tag(&status, tb);
  CHECK_LONG(status, -1, "round %d step 4: bsp_get_tag on the empty queue", round);
  for (int i = 0; i < nkeep; i++) {
    pair_tag tag;
    memcpy(&tag, keep_tag[i], sizeof tag);
    CHECK(tag.source >= 0 && tag.source < p && tag.k >= 0 && tag.k < MANY,
          "round %d step 4: kept tag %d is {%d, %d}", round, i, tag.source, tag.k);
    for (int j = 0; j < keep_size[i] / 4; j++) {
      int v;
      memcpy(&v, (char *)keep_pay[i] + 4 * j, sizeof v);
      CHECK_LONG(v, tag.source * 100000 + tag.k * 10 + j,
                 "round %d step 4: kept payload int %d of {%d, %d}", round, j, tag.source, tag.k);
    }
  }
  for (int q = 0; q < p; q++)
    for (int k = 0; k < MANY; k++)
      CHECK_LONG(seen[q * MANY + k], (q + k) % p == s, "round %d step 4: message {%d, %d} received",
                 round, q, k);
  size = 0;
  bsp_set_tagsize(&size);
  CHECK_LONG(size, (int)sizeof(pair_tag), "round %d step 4: old tag size", round);
  free(seen);
  free(keep_tag);
  free(keep_pay);
  free(keep_size);
  bsp_sync();

  /* 5: tag size 0, the forwarded messages carry 8-byte tags {me, k} with k % 7 == 0. */
  int nback = 0, bback = 0;
  for (int k = 0; k < MANY; k += 7) {
    nback++;
    bback += many_ints(k) * (int)sizeof(int);
  }
  expect_queue(nback, bback, "step 5", round);
  for (int m = 0; m < nback; m++) {
    memset(tb, SENTINEL, sizeof tb);
    bsp_get_tag(&status, tb);
    pair_tag tag;
    memcpy(&tag, tb, sizeof tag);
    CHECK(tag.source == s && tag.k % 7 == 0 && tag.k >= 0 && tag.k < MANY,
          "round %d step 5: forwarded tag {%d, %d} (8-byte tag of a message sent before the change "
          "to 0)",
          round, tag.source, tag.k);
    CHECK_LONG(tb[8], SENTINEL, "round %d step 5: tag byte 8", round);
    CHECK_LONG(status, many_ints(tag.k) * (int)sizeof(int), "round %d step 5: forwarded size",
               round);
    int data[4];
    bsp_move(data, (int)sizeof data);
    for (int i = 0; i < status / 4; i++)
      CHECK_LONG(data[i], s * 100000 + tag.k * 10 + i, "round %d step 5: forwarded int %d", round,
                 i);
  }
  bsp_sync();
  expect_queue(0, 0, "end of round", round);
}

int main(void) {
  bsp_begin(bsp_nprocs());
  check_program = "messages_edge";
  unsigned char *big = check_malloc(BIG);
  for (int round = 0; round < ROUNDS; round++) one_round(round, big);
  free(big);
  bsp_end();
  printf("PASS messages_edge\n");
  return 0;
}
