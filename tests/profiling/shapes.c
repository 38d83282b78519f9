/* shapes.c - three programs in one, for the profile's pictures (pictures_test.sh, and the
 * pictures in docs/profiling.md): 30 supersteps after a set-up superstep, each process putting
 * 1 KiB to its right neighbour every superstep.
 *   balanced     every process computes 5 ms per superstep
 *   unbalanced   process 0 computes 20 ms per superstep, the others 2 ms: they wait for it
 *   setup        as balanced, after a set-up superstep of 400 ms on every process
 * Prints "PASS shapes MODE" from process 0 when every block arrived. */
#include <bsp.h>
#include <stdio.h>
#include <string.h>

#include "compute_for.h"

enum { kSupersteps = 30, kBlock = 1024 };

static char in[kBlock], out[kBlock];

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "balanced";
  bsp_begin(bsp_nprocs());
  const int p = bsp_nprocs(), s = bsp_pid();
  bsp_push_reg(in, sizeof in);
  if (strcmp(mode, "setup") == 0) compute_for(0.400);
  bsp_sync();
  int ok = 1;
  for (int i = 0; i < kSupersteps; ++i) {
    double seconds = 0.005;
    if (strcmp(mode, "unbalanced") == 0) seconds = s == 0 ? 0.020 : 0.002;
    compute_for(seconds);
    memset(out, 'a' + (s + i) % 26, sizeof out);
    bsp_put((s + 1) % p, out, in, 0, sizeof out);
    bsp_sync();
    if (in[0] != 'a' + ((s - 1 + p) % p + i) % 26 || in[kBlock - 1] != in[0]) ok = 0;
  }
  bsp_pop_reg(in);
  bsp_sync();
  if (!ok) printf("FAIL: process %d received a wrong block\n", s);
  if (s == 0 && ok) printf("PASS shapes %s\n", mode);
  bsp_end();
  return 0;
}
