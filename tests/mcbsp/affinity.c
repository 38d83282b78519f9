/* affinity.c - MulticoreBSP's affinity interface (mcbsp-affinity.h): a program that sets its
 * pinning hints before the SPMD section runs unchanged; the getters report what bspg uses (the
 * processes available, one thread per core, no pinning or reserved cores) and the mode last set.
 * Process 0 prints "PASS affinity". */
#include <mcbsp-affinity.h>
#include <mcbsp.h>
#include <stdio.h>

static int failed;

static void check(int ok, const char *what) {
  if (!ok) {
    printf("FAIL: %s\n", what);
    failed = 1;
  }
}

int main(void) {
  const size_t pinning[4] = {0, 0, 1, 1};
  const size_t reserved[1] = {7};
  mcbsp_set_maximum_threads(64);
  mcbsp_set_available_cores(32);
  mcbsp_set_threads_per_core(2);
  mcbsp_set_thread_numbering(WRAPPED);
  mcbsp_set_pinning(pinning, 4);
  mcbsp_set_reserved_cores(reserved, 1);
  mcbsp_set_affinity_mode(COMPACT);
  const size_t available = bsp_nprocs();
  check(mcbsp_get_affinity_mode() == COMPACT, "mcbsp_get_affinity_mode is not COMPACT");
  check(mcbsp_get_maximum_threads() == available, "maximum threads is not bsp_nprocs()");
  check(mcbsp_get_available_cores() == available, "available cores is not bsp_nprocs()");
  check(mcbsp_get_threads_per_core() == 1, "threads per core is not 1");
  check(mcbsp_get_thread_numbering() == CONSECUTIVE, "thread numbering is not CONSECUTIVE");
  check(mcbsp_get_pinning() == NULL, "a pinning is reported");
  check(mcbsp_get_reserved_cores_number() == 0 && mcbsp_get_reserved_cores() == NULL,
        "reserved cores are reported");
  bsp_begin(bsp_nprocs());
  if (failed) bsp_abort("affinity: a check failed on process %u\n", bsp_pid());
  const unsigned int P = bsp_nprocs();
  bsp_sync();
  bsp_end();
  if (P != available) {
    printf("FAIL: %u processes, not %zu\n", P, available);
    return 1;
  }
  printf("PASS affinity\n");
  return 0;
}
