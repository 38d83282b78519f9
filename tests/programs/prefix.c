/* prefix - prefix sums and a two-phase broadcast, repeated over many rounds, the way library
 * routines in BSP codes are written: every routine registers its own (often stack) arrays,
 * uses them for a few supersteps and pops them before it returns, so registrations are pushed
 * and popped in loops, interleaved with longer-lived ones, and popped out of push order.
 *
 * Per round (ROUNDS rounds, hundreds of supersteps in all):
 *  - prefix_doubling: inclusive prefix sum by recursive doubling with bsp_get (log p steps);
 *  - prefix_direct:   the same by bsp_put of every value to all higher processes;
 *  - broadcast:       two-phase broadcast of a vector (length varying per round) from a
 *                     rotating root: phase 1 scatters blocks with bsp_put, phase 2 all-gathers
 *                     them with bsp_get;
 *  - a long-lived array registered before another and popped first.
 * Every result is compared with its closed form on every process. */
#include <string.h>

#include "check.h"

#define ROUNDS 40

static long value_of(int s, int round) { return (long)((s + 1) * (round + 3) % 17) - 5; }

static long expected_prefix(int s, int round) {
  long sum = 0;
  for (int t = 0; t <= s; t++) sum += value_of(t, round);
  return sum;
}

/* Inclusive prefix sum by recursive doubling; the registered variables live on this stack
 * frame only, so they are popped (and the pop made effective) before returning. */
static long prefix_doubling(long value) {
  int p = bsp_nprocs(), s = bsp_pid();
  long partial = value, received = 0;
  bsp_push_reg(&partial, (int)sizeof partial);
  bsp_sync();
  for (int k = 1; k < p; k *= 2) {
    if (s >= k) bsp_get(s - k, &partial, 0, &received, (int)sizeof received);
    bsp_sync();
    if (s >= k) partial += received;
  }
  bsp_pop_reg(&partial);
  bsp_sync();
  return partial;
}

/* Inclusive prefix sum by direct puts into a stack array (a VLA sized by p). */
static long prefix_direct(long value) {
  int p = bsp_nprocs(), s = bsp_pid();
  long contributions[p];
  for (int t = 0; t < p; t++) contributions[t] = -999999;
  bsp_push_reg(contributions, p * (int)sizeof(long));
  bsp_sync();
  for (int t = s; t < p; t++)
    bsp_put(t, &value, contributions, s * (int)sizeof(long), (int)sizeof(long));
  value = 123456; /* bsp_put copied the value at call time: changing it now changes nothing */
  bsp_sync();
  long sum = 0;
  for (int t = 0; t <= s; t++) sum += contributions[t];
  for (int t = s + 1; t < p; t++)
    CHECK_LONG(contributions[t], -999999, "prefix_direct: slot %d written", t);
  bsp_pop_reg(contributions);
  bsp_sync();
  return sum;
}

/* Two-phase broadcast of x[0..n) from root: block t (of size ceil(n/p)) goes to process t,
 * then every process gets every block from its owner. */
static void broadcast(long *x, int n, int root) {
  int p = bsp_nprocs(), s = bsp_pid();
  int block = (n + p - 1) / p;
  bsp_push_reg(x, n * (int)sizeof(long));
  bsp_sync();
  if (s == root)
    for (int t = 0; t < p; t++) {
      int first = t * block, size = first >= n ? 0 : (n - first < block ? n - first : block);
      if (size > 0) bsp_put(t, x + first, x, first * (int)sizeof(long), size * (int)sizeof(long));
    }
  bsp_sync();
  for (int t = 0; t < p; t++) {
    int first = t * block, size = first >= n ? 0 : (n - first < block ? n - first : block);
    if (t != s && size > 0)
      bsp_get(t, x, first * (int)sizeof(long), x + first, size * (int)sizeof(long));
  }
  bsp_sync();
  bsp_pop_reg(x);
}

int main(void) {
  bsp_begin(bsp_nprocs());
  check_program = "prefix";
  int p = bsp_nprocs(), s = bsp_pid();
  int supersteps = 0;
  double start = bsp_time();

  for (int round = 0; round < ROUNDS; round++) {
    /* A long-lived registration (counter) pushed before the routines' ones; a second one
     * (stamp) pushed after it; counter is popped first, out of push order. */
    long counter = -1, stamp = -1;
    bsp_push_reg(&counter, (int)sizeof counter);
    bsp_push_reg(&stamp, (int)sizeof stamp);
    bsp_sync();
    supersteps++;

    long v = value_of(s, round);
    long a = prefix_doubling(v);
    long b = prefix_direct(v);
    CHECK_LONG(a, expected_prefix(s, round), "round %d: prefix_doubling", round);
    CHECK_LONG(b, expected_prefix(s, round), "round %d: prefix_direct", round);

    int n = 1 + (round * 7) % 23; /* sometimes shorter than p: some blocks are empty */
    int root = round % p;
    long *x = check_malloc((size_t)n * sizeof *x);
    for (int i = 0; i < n; i++) x[i] = s == root ? (long)round * 1000 + i : -1;
    broadcast(x, n, root);

    /* The broadcast's pop takes effect at this sync, together with the counter's push use. */
    bsp_put((s + 1) % p, &a, &counter, 0, (int)sizeof a);
    bsp_sync();
    for (int i = 0; i < n; i++)
      CHECK_LONG(x[i], (long)round * 1000 + i, "round %d: broadcast from %d, x[%d]", round, root,
                 i);
    CHECK_LONG(counter, expected_prefix((s + p - 1) % p, round),
               "round %d: counter from the left neighbour", round);
    free(x);

    bsp_pop_reg(&counter);
    bsp_sync();
    /* stamp is still registered, now as the only registration of this round. */
    long mark = (long)round * 10 + s;
    bsp_put((s + p - 1) % p, &mark, &stamp, 0, (int)sizeof mark);
    bsp_sync();
    CHECK_LONG(stamp, (long)round * 10 + (s + 1) % p, "round %d: stamp from the right neighbour",
               round);
    bsp_pop_reg(&stamp);
    bsp_sync();
    supersteps += 4;
  }
  double elapsed = bsp_time() - start;
  CHECK(elapsed >= 0.0, "bsp_time went backwards");
  bsp_end();
  printf("prefix: %d rounds, %d supersteps outside the routines\n", ROUNDS, supersteps);
  printf("PASS prefix\n");
  return 0;
}
