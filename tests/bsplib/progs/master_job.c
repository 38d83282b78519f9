/* master_job init|begin P [--available A] [--abort PID] [--sleep S]: a program started the
 * ways BSPlib programs are started, for master mode (bsprun without -p) and every other way.
 *   init:  main calls bsp_init(spmd, argc, argv) first; process 0 alone then learns P (a number,
 *          "all" for bsp_nprocs(), or "-" to read it from standard input after a prompt, as
 *          BSPedupack's programs do) and calls spmd() itself. The others enter spmd() from
 *          bsp_init, with P never set (0).
 *   begin: main calls bsp_begin(P) first (P a number or "all"); every process runs main.
 * Before bsp_begin every process records bsp_nprocs(), the processes available (process 0's
 * is checked against --available). Inside, every process prints "pid S of P on HOST subjob K"
 * and checks P = min(asked, available) and a sum of squares computed in cyclic shares,
 * gathered with puts and read back with gets. --abort PID: that process calls bsp_abort after
 * the first superstep; --sleep S: every process sleeps S seconds after printing. After bsp_end
 * only process 0 goes on: it prints "used P of A" and "PASS master_job". */
#include <unistd.h>

#include "bsptest.h"

static int asked; /* process 0's P; the others' stays 0 under bsp_init */
static int available = -1, expected_available = -1, abort_pid = -1, sleep_s = 0;

static int parse_p(const char *text) {
  if (strcmp(text, "all") == 0) return bsp_nprocs();
  if (strcmp(text, "-") == 0) {
    int p = 0;
    printf("How many processes do you want to use?\n");
    fflush(stdout);
    EXPECT(scanf("%d", &p) == 1, "no number of processes on standard input");
    return p;
  }
  return atoi(text);
}

static void spmd(void) {
  test_begin(asked);
  int p = bsp_nprocs(), s = bsp_pid();
  char host[256] = "?";
  gethostname(host, sizeof host - 1);
  const char *subjob = getenv("BSPG_SUBJOB");
  printf("pid %d of %d on %s subjob %s\n", s, p, host, subjob ? subjob : "-");
  fflush(stdout);
  if (sleep_s > 0) sleep((unsigned)sleep_s);

  int seen_p = -1;
  long *partial = test_alloc(sizeof(long) * (size_t)p);
  long total = -1;
  bsp_push_reg(&seen_p, (int)sizeof seen_p);
  bsp_push_reg(partial, (int)sizeof(long) * p);
  bsp_push_reg(&total, (int)sizeof total);
  bsp_sync();
  if (s == 0) {
    if (expected_available > 0)
      EXPECT_INT(available, expected_available, "bsp_nprocs() before bsp_begin on process 0");
    int want = asked < available ? asked : available;
    EXPECT_INT(p, want, "bsp_nprocs() after bsp_begin(%d) with %d available", asked, available);
    for (int d = 0; d < p; ++d) bsp_put(d, &p, &seen_p, 0, (int)sizeof p);
  }
  bsp_sync();
  EXPECT_INT(seen_p, p, "process 0's bsp_nprocs()");
  if (s == abort_pid) bsp_abort("master_job: process %d aborts on request\n", s);

  long mine = 0;
  for (long i = s; i < 1000; i += p) mine += i * i;
  bsp_put(0, &mine, partial, s * (int)sizeof(long), (int)sizeof(long));
  bsp_sync();
  if (s == 0) {
    total = 0;
    for (int q = 0; q < p; ++q) total += partial[q];
  }
  bsp_sync();
  long got = -1;
  bsp_get(0, &total, 0, &got, (int)sizeof got);
  bsp_sync();
  EXPECT_INT(got, 332833500L, "sum of i^2 for i < 1000, read from process 0");

  bsp_pop_reg(&total);
  bsp_pop_reg(partial);
  bsp_pop_reg(&seen_p);
  bsp_sync();
  free(partial);
  test_end();
  printf("used %d of %d\n", p, available);
  printf("PASS master_job\n");
}

int main(int argc, char **argv) {
  int init = argc > 2 && strcmp(argv[1], "init") == 0;
  if (argc < 3 || (!init && strcmp(argv[1], "begin") != 0)) {
    printf("FAIL: usage: master_job init|begin P [--available A] [--abort PID] [--sleep S]\n");
    return 2;
  }
  /* Options first: under bsp_init only process 0 returns to main. */
  for (int i = 3; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--available") == 0) expected_available = atoi(argv[i + 1]);
    if (strcmp(argv[i], "--abort") == 0) abort_pid = atoi(argv[i + 1]);
    if (strcmp(argv[i], "--sleep") == 0) sleep_s = atoi(argv[i + 1]);
  }
  if (init) bsp_init(spmd, argc, argv);
  available = bsp_nprocs();
  asked = parse_p(argv[2]);
  spmd();
  return 0;
}
