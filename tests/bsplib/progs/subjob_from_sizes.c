/* subjob_from_sizes.c - with BSPG_SUBJOB_SIZES and no BSPG_SUBJOB (bsprun's grid path with one
 * app context for every subjob, as with spares), each process finds its subjob from its pid:
 * the subjobs' pids follow each other in order. Run with BSPG_SUBJOB_SIZES set so that the sizes
 * add up to the number of processes; each process checks bspg_subjob, bspg_nsubjobs and
 * bspg_subjob_nprocs against the sizes it reads itself. */
#include <bspg.h>

#include "bsptest.h"

int main(void) {
  test_begin(bsp_nprocs());
  const char *sizes = getenv("BSPG_SUBJOB_SIZES");
  EXPECT(sizes != NULL, "BSPG_SUBJOB_SIZES is not set");
  int n = 0, first = 0, mine = -1, size[64];
  for (const char *at = sizes; *at != '\0' && n < 64; ++n) {
    size[n] = atoi(at);
    if (bsp_pid() >= first && bsp_pid() < first + size[n]) mine = n;
    first += size[n];
    at = strchr(at, ',') ? strchr(at, ',') + 1 : at + strlen(at);
  }
  EXPECT(first == bsp_nprocs(), "sizes %s do not add up to %d", sizes, bsp_nprocs());
  EXPECT(bspg_subjob() == mine, "bspg_subjob() = %d, not %d", bspg_subjob(), mine);
  EXPECT(bspg_nsubjobs() == n, "bspg_nsubjobs() = %d, not %d", bspg_nsubjobs(), n);
  for (int k = 0; k < n; ++k)
    EXPECT(bspg_subjob_nprocs(k) == size[k], "bspg_subjob_nprocs(%d) = %d, not %d", k,
           bspg_subjob_nprocs(k), size[k]);
  const int me = bsp_pid();
  test_end();
  if (me == 0) printf("PASS subjob_from_sizes\n");
  return 0;
}
