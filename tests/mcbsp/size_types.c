/* size_types.c - a MulticoreBSP 1.x program in C (mcbsp.h without MCBSP_COMPATIBILITY_MODE):
 * process ids and message counts are unsigned int, sizes and offsets size_t, and the values that
 * come back through size_t pointers (bsp_qsize, bsp_get_tag, bsp_set_tagsize) must be whole, not
 * an int written into half of them. It includes bsp.h as well: both headers together compile.
 * Every process sends one message of s + 1 bytes to every process; the queue must hold P of
 * them with P(P+1)/2 bytes. A ring of puts and gets at size_t offsets. Process 0 prints
 * "PASS size_types" after bsp_end. */
#include <bsp.h>
#include <mcbsp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond, ...)                                                  \
  do {                                                                    \
    if (!(cond)) {                                                        \
      printf("FAIL: process %u, line %d: ", bsp_pid(), __LINE__);         \
      printf(__VA_ARGS__);                                                \
      printf("\n");                                                       \
      fflush(stdout);                                                     \
      bsp_abort("size_types: a check failed on process %u\n", bsp_pid()); \
    }                                                                     \
  } while (0)

/* Set in every byte: a 4-byte int stored into a size_t leaves the high bytes as they were. */
#define POISON ((size_t)0xA5A5A5A5A5A5A5A5ull)

int main(void) {
  bsp_begin(bsp_nprocs());
  const MCBSP_PROCESSOR_INDEX_DATATYPE P = bsp_nprocs(), me = bsp_pid();
  CHECK(sizeof(MCBSP_BYTESIZE_TYPE) == sizeof(size_t) && (MCBSP_BYTESIZE_TYPE)-1 == SIZE_MAX,
        "MCBSP_BYTESIZE_TYPE is not size_t");
  CHECK((MCBSP_PROCESSOR_INDEX_DATATYPE)-1 > 0 && (MCBSP_NUMMSG_TYPE)-1 > 0,
        "MCBSP_PROCESSOR_INDEX_DATATYPE or MCBSP_NUMMSG_TYPE is signed");
  CHECK(0 - bsp_pid() - 1 > 0 && 0 - bsp_nprocs() > 0, "bsp_pid or bsp_nprocs is signed");

  size_t *ring = calloc(P, sizeof *ring);
  size_t got_back = POISON;
  bsp_push_reg(ring, P * sizeof *ring);
  MCBSP_BYTESIZE_TYPE tagsize = sizeof(unsigned int);
  bsp_set_tagsize(&tagsize);
  CHECK(tagsize == 0, "bsp_set_tagsize gave back %zu as the old tag size, not 0", tagsize);
  bsp_sync();

  /* The ring: my pid into slot me of the next process; a get of slot me of the previous one. */
  const size_t mine = me;
  bsp_put((me + 1) % P, &mine, ring, me * sizeof *ring, sizeof mine);
  const MCBSP_PROCESSOR_INDEX_DATATYPE prev = (me + P - 1) % P;
  unsigned char payload[64];
  for (MCBSP_PROCESSOR_INDEX_DATATYPE t = 0; t < P; ++t) {
    memset(payload, (int)me, sizeof payload);
    bsp_send(t, &me, payload, (size_t)me + 1);
  }
  bsp_sync();
  CHECK(ring[prev] == prev, "ring slot %u holds %zu", prev, ring[prev]);
  /* The previous process's ring got its slot pprev from the process before it. */
  const MCBSP_PROCESSOR_INDEX_DATATYPE pprev = (prev + P - 1) % P;
  bsp_get(prev, ring, pprev * sizeof *ring, &got_back, sizeof got_back);

  MCBSP_NUMMSG_TYPE packets = (MCBSP_NUMMSG_TYPE)POISON;
  MCBSP_BYTESIZE_TYPE bytes = POISON;
  bsp_qsize(&packets, &bytes);
  CHECK(packets == P, "bsp_qsize: %u messages, not %u", packets, P);
  CHECK(bytes == (size_t)P * (P + 1) / 2, "bsp_qsize: %zu bytes, not %zu", bytes,
        (size_t)P * (P + 1) / 2);
  for (MCBSP_NUMMSG_TYPE i = 0; i < packets; ++i) {
    MCBSP_BYTESIZE_TYPE status = POISON;
    unsigned int from = P;
    bsp_get_tag(&status, &from);
    CHECK(from < P && status == (size_t)from + 1, "message %u: status %zu from %u", i, status,
          from);
    memset(payload, 0xff, sizeof payload);
    bsp_move(payload, (MCBSP_BYTESIZE_TYPE)sizeof payload);
    for (size_t b = 0; b < status; ++b)
      CHECK(payload[b] == from, "message from %u: byte %zu is %u", from, b, payload[b]);
  }
  MCBSP_BYTESIZE_TYPE status = 0;
  bsp_get_tag(&status, NULL);
  CHECK(status == SIZE_MAX, "bsp_get_tag on an empty queue: status %zu, not SIZE_MAX", status);
  void *tag_at, *payload_at;
  const MCBSP_BYTESIZE_TYPE moved = bsp_hpmove(&tag_at, &payload_at);
  CHECK(moved == SIZE_MAX, "bsp_hpmove on an empty queue: %zu, not SIZE_MAX", moved);
  packets = (MCBSP_NUMMSG_TYPE)POISON;
  bsp_qsize(&packets, NULL);
  CHECK(packets == 0, "bsp_qsize after the moves: %u messages", packets);
  bsp_sync();
  CHECK(got_back == pprev, "bsp_get of slot %u from %u: %zu", pprev, prev, got_back);

  bsp_pop_reg(ring);
  bsp_sync();
  free(ring);
  bsp_end();
  printf("PASS size_types\n");
  return 0;
}
