/* group_sync.c - groups synchronise on their own: bspg_group_split by parity, puts and messages
 * inside a group delivered by bspg_group_sync, subjob group of a plain run, then a global sync. */
#include <stdio.h>
#include <string.h>

#include "bspg.h"

#define CHECK(cond, ...)                                \
  do {                                                  \
    if (!(cond)) {                                      \
      printf("FAIL: process %d: ", bsp_pid());          \
      printf(__VA_ARGS__);                              \
      printf("\n");                                     \
      bsp_abort("group_sync: check failed: %s", #cond); \
    }                                                   \
  } while (0)

int main(void) {
  bsp_begin(bsp_nprocs());
  int p = bsp_nprocs(), s = bsp_pid();
  int slots[64];
  memset(slots, -1, sizeof slots);
  bsp_push_reg(slots, sizeof slots);
  int tag = sizeof(int);
  bsp_set_tagsize(&tag);
  bsp_sync();

  /* Without bsprun's grid path there is one subjob with everybody in it. */
  CHECK(bspg_nsubjobs() == 1 && bspg_subjob() == 0 && bspg_subjob_nprocs(0) == p, "subjobs");
  int sub = bspg_subjob_group();
  CHECK(bspg_group_nprocs(sub) == p && bspg_group_pid(sub) == s, "subjob group");
  CHECK(bspg_group_nprocs(BSPG_ALL) == p, "BSPG_ALL");

  int parity = bspg_group_split(s % 2);
  int q = bspg_group_nprocs(parity), r = bspg_group_pid(parity);
  CHECK(q == (p - s % 2 + 1) / 2, "group size %d", q);
  CHECK(bspg_group_member(parity, r) == s, "member lookup");

  /* 50 group supersteps: each member puts its pid into every other member, and sends a message. */
  for (int step = 0; step < 50; step++) {
    for (int k = 0; k < q; k++) {
      int dest = bspg_group_member(parity, k);
      int value = s * 1000 + step;
      bsp_put(dest, &value, slots, s * (int)sizeof(int), sizeof(int));
      bsp_send(dest, &s, &value, sizeof value);
    }
    bspg_group_sync(parity);
    int n = 0, bytes = 0;
    bsp_qsize(&n, &bytes);
    CHECK(n == q && bytes == q * (int)sizeof(int), "step %d: %d messages, %d bytes", step, n,
          bytes);
    for (int k = 0; k < q; k++) {
      int src = bspg_group_member(parity, k);
      CHECK(slots[src] == src * 1000 + step, "step %d: slot %d holds %d", step, src, slots[src]);
      int status, from, value;
      bsp_get_tag(&status, &from);
      CHECK(status == sizeof(int), "status %d", status);
      bsp_move(&value, sizeof value);
      CHECK(from % 2 == s % 2 && value == from * 1000 + step, "message from %d holds %d", from,
            value);
    }
    /* Members of the other group are untouched by this group's syncs. */
    for (int other = 0; other < p; other++)
      if (other % 2 != s % 2) CHECK(slots[other] == -1, "slot %d written by another group", other);
  }

  /* A global superstep still reaches everybody. */
  bsp_put((s + 1) % p, &s, slots, 63 * (int)sizeof(int), sizeof(int));
  bsp_sync();
  CHECK(slots[63] == (s + p - 1) % p, "global put after group syncs");
  bsp_pop_reg(slots);
  bsp_sync();
  if (s == 0) printf("PASS group_sync\n");
  bsp_end();
  return 0;
}
