/* known_supersteps.c - a BSP program whose supersteps are known, for the profiler's tests.
 *
 * Superstep i = 0..S-1 (S = 6), on every process s of p:
 *   - process 1 % p computes 40 ms in superstep 2 (every other process computes nothing there),
 *     so that the others wait about 40 ms at that sync;
 *   - it puts 100*(i+1) bytes to its right neighbour (s+1) % p;
 *   - in superstep 3 it also gets 64 bytes from its left neighbour (s-1+p) % p;
 *   - in superstep 4 it also sends one message, tag 4 bytes and payload 1000 bytes, to process 0.
 * Then, with p >= 2, one group sync of the processes of even pid (each puts 8 bytes to itself
 * first), and, with argument "checkpoint", a bspg_checkpoint; then bsp_end.
 * Prints "PASS known_supersteps" from process 0 when the data arrived as it should. */
#include <bsp.h>
#include <bspg.h>
#include <stdio.h>
#include <string.h>

#include "compute_for.h"

enum { kSupersteps = 6 };

static char in[kSupersteps * 100], out[kSupersteps * 100], got[64], mine[8];

int main(int argc, char** argv) {
  const int checkpoint = argc > 1 && strcmp(argv[1], "checkpoint") == 0;
  bsp_begin(bsp_nprocs());
  const int p = bsp_nprocs(), s = bsp_pid();
  int ok = 1;
  int tag_bytes = 4;
  bsp_set_tagsize(&tag_bytes);
  bsp_push_reg(in, sizeof in);
  bsp_push_reg(mine, sizeof mine);
  memset(out, 'a' + s, sizeof out);
  bsp_sync(); /* superstep 0 ends: registrations and the tag size take effect */
  for (int i = 1; i < kSupersteps; ++i) {
    if (i == 2 && s == 1 % p) compute_for(0.040);
    bsp_put((s + 1) % p, out, in, 0, 100 * (i + 1));
    if (i == 3) bsp_get((s - 1 + p) % p, in, 0, got, sizeof got);
    if (i == 4) {
      static char payload[1000];
      int tag = s;
      bsp_send(0, &tag, payload, sizeof payload);
    }
    bsp_sync();
    if (in[0] != 'a' + (s - 1 + p) % p) ok = 0;
  }
  if (p >= 2) {
    const int even = bspg_group_split(s % 2 == 0 ? 0 : 1);
    bsp_put(s, out, mine, 0, sizeof mine);
    bspg_group_sync(even);
  }
  if (checkpoint) {
    bspg_persist(in, sizeof in);
    bspg_checkpoint();
  }
  int nmessages = 0, nbytes = 0;
  bsp_qsize(&nmessages, &nbytes);
  if (s == 0 && nmessages != 0) ok = 0; /* the messages of superstep 4 were read in 5 */
  bsp_end();
  if (ok) printf("PASS known_supersteps\n");
  else printf("FAIL known_supersteps\n");
  return ok ? 0 : 1;
}
