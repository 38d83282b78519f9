/* no_end - programs written for BSPlibs that forgive a missing bsp_end (MulticoreBSP, Oxford
 * BSPlib): the SPMD part ends by returning, and the program's own exit status follows.
 *
 * Usage: no_end init|begin|exit [STATUS]
 *   init:  main calls bsp_init(spmd, argc, argv) and then spmd(); spmd returns without bsp_end
 *          (on every process: the others return to bsp_init's call of it);
 *   begin: main calls bsp_begin(bsp_nprocs()) and returns STATUS (default 0) without bsp_end;
 *   exit:  as begin, but main calls exit(STATUS).
 * Inside, every process puts its pid to process 0 and checks them after a sync, prints
 * "SPMD s of p", and sends process 0 one last put that bsp_end would deliver: process 0 checks
 * it from an atexit handler (registered before any bsp_ call, so that it runs after the
 * section ended) and prints "DELIVERED p". */
#include <string.h>

#include "check.h"

static int *seen, nprocs_seen, last_word = -1;
static int ending_status; /* non-zero: the job is stopped with it, nothing is delivered */

static void check_last_word(void) {
  /* Not process 0, or a job stopped with a non-zero status: MPICH's MPI_Abort for a single
   * process ends by exit(), which runs this handler too. */
  if (nprocs_seen == 0 || ending_status != 0) return;
  if (last_word == nprocs_seen)
    printf("DELIVERED %d\n", last_word);
  else
    printf("FAIL: no_end: the last put was not delivered (%d, expected %d)\n", last_word,
           nprocs_seen);
}

static void section(void) {
  int p = bsp_nprocs(), s = bsp_pid();
  check_program = "no_end";
  seen = check_malloc((size_t)p * sizeof(int));
  for (int q = 0; q < p; q++) seen[q] = -1;
  bsp_push_reg(seen, p * (int)sizeof(int));
  bsp_push_reg(&last_word, (int)sizeof last_word);
  bsp_sync();
  bsp_put(0, &s, seen, s * (int)sizeof(int), (int)sizeof(int));
  bsp_sync();
  if (s == 0)
    for (int q = 0; q < p; q++) CHECK_LONG(seen[q], q, "pid put by process %d", q);
  printf("SPMD %d of %d\n", s, p);
  fflush(stdout);
  if (s == p - 1) bsp_put(0, &p, &last_word, 0, (int)sizeof p); /* delivered by the ending */
  if (s == 0) nprocs_seen = p;
}

static void spmd(void) {
  bsp_begin(bsp_nprocs());
  section();
  /* no bsp_end: return */
}

int main(int argc, char **argv) {
  if (argc < 2 ||
      (strcmp(argv[1], "init") && strcmp(argv[1], "begin") && strcmp(argv[1], "exit"))) {
    printf("FAIL: usage: no_end init|begin|exit [STATUS]\n");
    return 2;
  }
  int status = argc > 2 ? atoi(argv[2]) : 0;
  ending_status = status;
  atexit(check_last_word);
  if (strcmp(argv[1], "init") == 0) {
    bsp_init(spmd, argc, argv);
    spmd();
    return status;
  }
  bsp_begin(bsp_nprocs());
  section();
  if (strcmp(argv[1], "exit") == 0) exit(status);
  return status;
}
