/* sections_end return|exit|noinit: how a program with several sections ends.
 *   return: the second section's SPMD function returns without bsp_end (expected: one line
 *           saying so, the section ends as bsp_end would, and the program goes on: PASS, 0);
 *   exit:   main ends with exit(3) after two sections (expected: status 3, no hang);
 *   noinit: bsp_begin in main a second time, without bsp_init (expected: one line
 *           "bsp_begin: called twice: a later SPMD section needs ... bsp_init", non-zero). */
#include <bsp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *how;
static int sections_done;

static void part(void) {
  bsp_begin(bsp_nprocs());
  bsp_sync();
  if (bsp_pid() == 0) ++sections_done;
  if (strcmp(how, "return") == 0 && sections_done == 2) return; /* no bsp_end */
  bsp_end();
}

int main(int argc, char **argv) {
  how = argc > 1 ? argv[1] : "";
  if (strcmp(how, "noinit") == 0) {
    bsp_begin(bsp_nprocs());
    bsp_end();
    bsp_begin(bsp_nprocs());
    printf("FAIL sections_end: a second bsp_begin without bsp_init was accepted\n");
    bsp_end();
    return 0;
  }
  bsp_init(part, argc, argv);
  part();
  part();
  if (sections_done != 2) {
    printf("FAIL sections_end: %d sections ran\n", sections_done);
    return 1;
  }
  if (strcmp(how, "exit") == 0) {
    fflush(stdout);
    exit(3);
  }
  printf("PASS sections_end\n");
  return 0;
}
