/* two_sections [P1 P2]: MulticoreBSP-style program with two SPMD sections in sequence, each
 * named by its own bsp_init and with its own P. Checks that each section has the processes it
 * asked for (capped by what is available), that bsp_nprocs() after a section is that section's P
 * (the standard's rule) until the next bsp_init, and what is available after it, that a
 * registration and a queued message of the first section do not leak into the second, and that the
 * second section's results are right. Process 0 prints "PASS two_sections" at the end. */
#include <bsp.h>
#include <stdio.h>
#include <stdlib.h>

static int want1 = 2, want2 = 3;
static int got1 = -1;
static long total = -1;

static void check(int ok, const char *what) {
  if (!ok) bsp_abort("FAIL two_sections: process %d: %s\n", bsp_pid(), what);
}

static void first(void) {
  static int slot;
  bsp_begin(want1);
  int p = bsp_nprocs(), s = bsp_pid();
  int tag = 4;
  bsp_set_tagsize(&tag);
  bsp_push_reg(&slot, sizeof slot);
  bsp_sync();
  slot = -1;
  bsp_sync();
  bsp_put((s + 1) % p, &s, &slot, 0, sizeof s);
  /* a message that is sent but never read: must not reach the second section */
  bsp_send((s + 1) % p, &s, &s, sizeof s);
  bsp_sync();
  check(slot == (s + p - 1) % p, "the first section's put");
  if (s == 0) got1 = p;
  bsp_end();
}

static void second(void) {
  bsp_begin(want2);
  int p = bsp_nprocs(), s = bsp_pid();
  int tag = 0, n = -1, bytes = -1;
  bsp_set_tagsize(&tag);
  bsp_sync();
  check(tag == 0, "the tag size of the second section starts at 0");
  bsp_qsize(&n, &bytes);
  check(n == 0, "a message of the first section is in the second's queue");
  long *parts = calloc((size_t)p, sizeof *parts);
  bsp_push_reg(parts, (int)(p * sizeof *parts));
  bsp_sync();
  long mine = 10L * (s + 1);
  for (int t = 0; t < p; ++t) bsp_put(t, &mine, parts, (int)(s * sizeof mine), sizeof mine);
  bsp_sync();
  long sum = 0;
  for (int t = 0; t < p; ++t) sum += parts[t];
  check(sum == 10L * p * (p + 1) / 2, "the second section's sum");
  if (s == 0) total = sum;
  bsp_pop_reg(parts);
  bsp_sync();
  free(parts);
  bsp_end();
}

int main(int argc, char **argv) {
  if (argc >= 3) {
    want1 = atoi(argv[1]);
    want2 = atoi(argv[2]);
  }
  bsp_init(first, argc, argv);
  int available = bsp_nprocs();
  first();
  int p1 = want1 < available ? want1 : available;
  if (got1 != p1) {
    printf("FAIL two_sections: the first section had %d processes, not %d\n", got1, p1);
    return 1;
  }
  if (bsp_nprocs() != p1) {
    printf("FAIL two_sections: bsp_nprocs() after the first section is %d, not its %d\n",
           bsp_nprocs(), p1);
    return 1;
  }
  bsp_init(second, argc, argv);
  if (bsp_nprocs() != available) {
    printf("FAIL two_sections: bsp_nprocs() after the second bsp_init is %d, not %d\n",
           bsp_nprocs(), available);
    return 1;
  }
  second();
  int p2 = want2 < available ? want2 : available;
  if (total != 10L * p2 * (p2 + 1) / 2) {
    printf("FAIL two_sections: the second section's sum is %ld (p = %d)\n", total, p2);
    return 1;
  }
  printf("sections: %d then %d of %d processes\n", p1, p2, available);
  printf("PASS two_sections\n");
  return 0;
}
