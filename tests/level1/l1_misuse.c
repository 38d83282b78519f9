/* One mistake per run, made by the last process (argument: which); the library must stop the
 * job with "bspg: process P: <call>: <cause>". Reaching the end is a failure. */
#include <bsp_level1.h>

#include "bsptest.h"

static void add(int *res, int *left, int *right, int *nbytes) {
  (void)nbytes;
  *res = *left + *right;
}

static int compare(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

int main(int argc, char **argv) {
  const char *what = argc > 1 ? argv[1] : "";
  test_begin(bsp_nprocs());
  const int p = bsp_nprocs(), s = bsp_pid(), last = s == p - 1;
  int x = 1, y = 0, table[64];
  if (strcmp(what, "bcast_root") == 0) bsp_bcast(last ? p : 0, &x, &y, sizeof x);
  if (strcmp(what, "bcast_negative_root") == 0) bsp_bcast(last ? -1 : 0, &x, &y, sizeof x);
  if (strcmp(what, "bcast_size") == 0) bsp_bcast(0, &x, &y, last ? -4 : 4);
  if (strcmp(what, "bcast_null_dst") == 0) bsp_bcast(0, &x, last ? NULL : &y, sizeof x);
  if (strcmp(what, "gather_null_dst") == 0) bsp_gather(p - 1, &x, last ? NULL : table, sizeof x);
  if (strcmp(what, "scatter_root") == 0) bsp_scatter(last ? p + 3 : 0, table, &y, sizeof x);
  if (strcmp(what, "fold_null_op") == 0) (bsp_fold)(NULL, &x, &y, sizeof x);
  if (strcmp(what, "scan_size") == 0) bsp_scan(add, &x, &y, last ? -1 : (int)sizeof x);
  if (strcmp(what, "sort_blocks_count") == 0) bspg_sort_blocks(table, last ? -2 : 1, sizeof(int), compare);
  test_end();
  printf("FAIL: the mistake %s was not caught\n", what);
  return 0;
}
