/* sequential_once STATUS: MulticoreBSP's template. main reads P from standard input, checks it
 * ("Cannot start 0 processes." and status 1 otherwise), sets a global and only then calls
 * bsp_init(spmd, ...); spmd(); twice, and returns STATUS. The sequential part must run once, on
 * process 0: its lines appear once, no other process reads standard input, every process sees
 * the global main set, and the job ends with main's status. Process 0 prints "main: begins",
 * "main: between", "main: ends" once each; every process prints "spmd S: pid/P sees 42". */
#include <bsp.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned P;
static int answer = 1;
static int sections;

static void spmd(void) {
  bsp_begin(P);
  printf("spmd %d: %d/%d sees %d\n", sections, bsp_pid(), bsp_nprocs(), answer);
  bsp_sync();
  bsp_end();
  ++sections;
}

int main(int argc, char **argv) {
  printf("main: begins with %d available\n", bsp_nprocs());
  fflush(stdout);
  if (scanf("%u", &P) != 1 || P == 0) {
    fprintf(stderr, "Cannot start %u processes.\n", P);
    return 1;
  }
  answer = 42;
  bsp_init(spmd, argc, argv);
  spmd();
  printf("main: between\n");
  fflush(stdout);
  spmd();
  printf("main: ends after %d sections\n", sections);
  return argc > 1 ? atoi(argv[1]) : 0;
}
