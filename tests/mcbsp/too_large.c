/* too_large.c - a MulticoreBSP program that passes a size_t beyond bspg's int limit: the last
 * process makes the call, which must stop the job with one line naming the call and the value
 * (not move a truncated size: 4 GiB + 8 as an int is 8).
 *   too_large put_size | get_offset | put_pid */
#include <mcbsp.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
  const char *how = argc > 1 ? argv[1] : "";
  bsp_begin(bsp_nprocs());
  static char area[16];
  bsp_push_reg(area, sizeof area);
  bsp_sync();
  if (bsp_pid() == bsp_nprocs() - 1) {
    const size_t huge = ((size_t)1 << 32) + 8;
    if (strcmp(how, "put_size") == 0)
      bsp_put(0, area, area, 0, huge);
    else if (strcmp(how, "get_offset") == 0)
      bsp_get(0, area, (size_t)3 << 30, area, 8);
    else if (strcmp(how, "put_pid") == 0)
      bsp_put(0u - 1u, area, area, 0, 8);
  }
  bsp_sync();
  printf("FAIL: the call went through\n");
  bsp_end();
  return 0;
}
