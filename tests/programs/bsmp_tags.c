/* bsmp_tags - message passing the way irregular codes use it: the tag size changes several
 * times during the run (bsp_set_tagsize returns the old size, and the new one holds from the
 * next superstep), with empty tags, empty payloads, messages to oneself, a truncating
 * bsp_move, and messages left unread, which must be gone after the next bsp_sync. The tag
 * size is only changed in supersteps that send nothing, so no message crosses a change.
 * The whole sequence runs ROUNDS times to catch state left over between supersteps. */
#include <string.h>

#include "check.h"

#define ROUNDS 5

typedef struct {
  int source, dest, sequence;
} long_tag;

static void set_tagsize_expect(int new_size, int old_size, const char *when) {
  int size = new_size;
  bsp_set_tagsize(&size);
  CHECK_LONG(size, old_size, "%s: bsp_set_tagsize(%d) returns the old size", when, new_size);
}

static void expect_queue(int messages, int nbytes, const char *when) {
  int got_messages = -1, got_nbytes = -1;
  bsp_qsize(&got_messages, &got_nbytes);
  CHECK_LONG(got_messages, messages, "%s: bsp_qsize messages", when);
  CHECK_LONG(got_nbytes, nbytes, "%s: bsp_qsize payload bytes", when);
}

static int payload_ints(int source, int dest) { return (source + 2 * dest) % 3; }

static void one_round(int round, int initial_tagsize) {
  int p = bsp_nprocs(), s = bsp_pid();
  int status, tag_int;

  /* A: tag size 0. Empty messages (no tag, no payload) to everyone; then 4-byte tags. */
  set_tagsize_expect((int)sizeof(int), initial_tagsize, "A");
  int dummy = 7;
  for (int t = 0; t < p; t++) bsp_send(t, NULL, t % 2 ? NULL : &dummy, 0);
  bsp_sync();

  /* B: p empty messages; read half of them and leave the rest. */
  expect_queue(p, 0, "B");
  for (int m = 0; m < p / 2; m++) {
    status = -2;
    bsp_get_tag(&status, &tag_int);
    CHECK_LONG(status, 0, "B: bsp_get_tag status of an empty message");
    bsp_move(&dummy, 0);
  }
  CHECK_LONG(dummy, 7, "B: bsp_move of an empty payload wrote into the buffer");
  expect_queue(p - p / 2, 0, "B after moving half");
  /* Tagged messages with 0, 1 or 2 ints of payload. */
  for (int t = 0; t < p; t++) {
    int payload[2] = {s, t * 10 + round};
    int tag = 1000 * s + t;
    bsp_send(t, &tag, payload, payload_ints(s, t) * (int)sizeof(int));
  }
  bsp_sync();

  /* C: exactly the B messages: the unread A messages are gone. */
  int expected_bytes = 0;
  for (int r = 0; r < p; r++) expected_bytes += payload_ints(r, s) * (int)sizeof(int);
  expect_queue(p, expected_bytes, "C");
  int seen = 0;
  for (int m = 0; m < p; m++) {
    status = -2;
    tag_int = -1;
    bsp_get_tag(&status, &tag_int);
    int source = tag_int / 1000;
    CHECK(source >= 0 && source < p && tag_int % 1000 == s, "C: tag %d", tag_int);
    CHECK(!(seen & (1 << source)), "C: two messages from %d", source);
    seen |= 1 << source;
    CHECK_LONG(status, payload_ints(source, s) * (int)sizeof(int), "C: payload size from %d",
               source);
    int buffer[3] = {-5, -5, -5};
    /* Take at most one int: a longer payload is truncated and nothing beyond is written. */
    bsp_move(buffer, (int)sizeof(int));
    if (status > 0)
      CHECK_LONG(buffer[0], source, "C: first payload int from %d", source);
    else
      CHECK_LONG(buffer[0], -5, "C: bsp_move of an empty payload from %d", source);
    CHECK_LONG(buffer[1], -5, "C: bsp_move wrote beyond reception_nbytes (from %d)", source);
  }
  bsp_get_tag(&status, &tag_int);
  CHECK_LONG(status, -1, "C: bsp_get_tag on the empty queue");
  set_tagsize_expect((int)sizeof(long_tag), (int)sizeof(int), "C");
  bsp_sync();

  /* D: 12-byte tags, empty payloads, three to every process including myself. */
  expect_queue(0, 0, "D");
  for (int t = 0; t < p; t++)
    for (int k = 0; k < 3; k++) {
      long_tag tag = {s, t, k + round};
      bsp_send(t, &tag, NULL, 0);
    }
  bsp_sync();

  /* E: read two with bsp_hpmove, leave the rest; change the tag size to 0. */
  expect_queue(3 * p, 0, "E");
  for (int m = 0; m < 2; m++) {
    void *tag_ptr = NULL, *payload_ptr = NULL;
    CHECK_LONG(bsp_hpmove(&tag_ptr, &payload_ptr), 0, "E: bsp_hpmove payload size");
    long_tag tag;
    memcpy(&tag, tag_ptr, sizeof tag);
    CHECK(tag.source >= 0 && tag.source < p && tag.dest == s && tag.sequence >= round &&
              tag.sequence < round + 3,
          "E: tag {%d, %d, %d}", tag.source, tag.dest, tag.sequence);
  }
  expect_queue(3 * p - 2, 0, "E after two hpmoves");
  set_tagsize_expect(0, (int)sizeof(long_tag), "E");
  bsp_sync();

  /* F: nothing left; tag size 0, payloads identify the sender. */
  expect_queue(0, 0, "F");
  status = 99;
  bsp_get_tag(&status, NULL);
  CHECK_LONG(status, -1, "F: bsp_get_tag on the empty queue");
  for (int t = 0; t < p; t++) {
    int payload[4] = {s, t, round, s + t};
    bsp_send(t, NULL, payload, (1 + (s + t) % 4) * (int)sizeof(int));
  }
  bsp_sync();

  /* G: read everything with bsp_hpmove. */
  expected_bytes = 0;
  for (int r = 0; r < p; r++) expected_bytes += (1 + (r + s) % 4) * (int)sizeof(int);
  expect_queue(p, expected_bytes, "G");
  seen = 0;
  for (int m = 0; m < p; m++) {
    void *tag_ptr = NULL, *payload_ptr = NULL;
    int size = bsp_hpmove(&tag_ptr, &payload_ptr);
    int payload[4];
    CHECK(size >= (int)sizeof(int) && size <= (int)sizeof payload, "G: payload size %d", size);
    memcpy(payload, payload_ptr, (size_t)size);
    int source = payload[0];
    CHECK(source >= 0 && source < p && !(seen & (1 << source)), "G: payload from %d", source);
    seen |= 1 << source;
    CHECK_LONG(size, (1 + (source + s) % 4) * (int)sizeof(int), "G: payload size from %d", source);
    int want[4] = {source, s, round, source + s};
    for (int k = 0; k < size / (int)sizeof(int); k++)
      CHECK_LONG(payload[k], want[k], "G: payload int %d from %d", k, source);
  }
  CHECK_LONG(seen, (1 << p) - 1, "G: set of senders");
  void *tag_ptr, *payload_ptr;
  CHECK_LONG(bsp_hpmove(&tag_ptr, &payload_ptr), -1, "G: bsp_hpmove on the empty queue");
  bsp_sync();
}

int main(void) {
  bsp_begin(bsp_nprocs());
  check_program = "bsmp_tags";
  CHECK(bsp_nprocs() <= 30, "too many processes for the sender bit sets");
  for (int round = 0; round < ROUNDS; round++) one_round(round, 0);
  bsp_end();
  printf("PASS bsmp_tags\n");
  return 0;
}
