/* misuse_begin twice|zero|negative: bsp_begin called a second time inside the SPMD section
 * (expected "bsp_begin: called twice"), or with maxprocs 0 or -2 (expected
 * "bsp_begin: maxprocs ..."), once. */
#include "misuse.h"

int main(int argc, char **argv) {
  if (argc < 2 || (strcmp(argv[1], "twice") != 0 && strcmp(argv[1], "zero") != 0 &&
                   strcmp(argv[1], "negative") != 0)) {
    printf("FAIL: usage: misuse_begin twice|zero|negative\n");
    return 2;
  }
  if (strcmp(argv[1], "twice") == 0) {
    bsp_begin(bsp_nprocs());
    bsp_sync();
    bsp_begin(bsp_nprocs());
    MISUSE_NOT_CAUGHT("a second bsp_begin was accepted");
  }
  int maxprocs = strcmp(argv[1], "zero") == 0 ? 0 : -2;
  bsp_begin(maxprocs);
  MISUSE_NOT_CAUGHT("bsp_begin(%d) was accepted", maxprocs);
}
