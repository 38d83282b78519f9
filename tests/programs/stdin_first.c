/* stdin_first - a program that reads its input before BSPlib starts, as many programs from
 * the wild do: main reads P with scanf before bsp_init (init) or bsp_begin (begin).
 * init: main's sequential part runs on process 0 alone (MulticoreBSP's rule): no other process
 * runs that scanf. begin: every process runs main; only process 0 may get the input, every other
 * process must read end-of-file at once (never block, never get a copy of the input), in master
 * mode the processes bsp_begin spawns too.
 *
 * Usage: echo P | stdin_first init|begin
 * Inside, every process sends process 0 what its scanf returned and read; process 0 checks
 * that it read P and the others EOF (begin) or nothing (init), and prints "pid s: P", "pid s: EOF"
 * or "pid s: main not run" for each, then "PASS stdin_first" after bsp_end. */
#include <string.h>

#include "check.h"

/* What this process's scanf read and returned. Thread-local: bsp_begin gives every process
 * process 0's global variables, but each keeps its own thread-local ones. */
static _Thread_local int P = -5, scanned = -5;
/* A plain global: process 0's value reaches every process at bsp_begin. */
static int init_mode;

static void spmd(void) {
  bsp_begin(P);
  check_program = "stdin_first";
  int p = bsp_nprocs(), s = bsp_pid();
  int *results = check_malloc(2 * (size_t)p * sizeof(int));
  bsp_push_reg(results, 2 * p * (int)sizeof(int));
  bsp_sync();
  int mine[2] = {scanned, P};
  bsp_put(0, mine, results, 2 * s * (int)sizeof(int), 2 * (int)sizeof(int));
  bsp_sync();
  if (s == 0) {
    for (int q = 0; q < p; q++) {
      int got = results[2 * q], value = results[2 * q + 1];
      if (q == 0) {
        CHECK_LONG(got, 1, "scanf's result on process 0");
        printf("pid 0: %d\n", value);
      } else if (init_mode) {
        CHECK_LONG(got, -5, "main's scanf ran on process %d (returned %d, read %d), but main runs "
                   "on process 0 alone in a program that calls bsp_init", q, got, value);
        printf("pid %d: main not run\n", q);
      } else {
        CHECK_LONG(got, EOF, "scanf's result on process %d (read %d)", q, value);
        printf("pid %d: EOF\n", q);
      }
    }
  }
  bsp_pop_reg(results);
  bsp_sync();
  free(results);
  bsp_end();
  printf("PASS stdin_first\n");
}

int main(int argc, char **argv) {
  if (argc != 2 || (strcmp(argv[1], "init") && strcmp(argv[1], "begin"))) {
    printf("FAIL: usage: echo P | stdin_first init|begin\n");
    return 2;
  }
  scanned = scanf("%d", &P); /* before any bsp_ call: every process started runs it */
  if (strcmp(argv[1], "init") == 0) {
    init_mode = 1;
    bsp_init(spmd, argc, argv);
    if (scanned != 1) {
      printf("FAIL: stdin_first: no P on standard input\n");
      return 1;
    }
  }
  spmd();
  return 0;
}
