/* call_site.c - one misuse, at a line the program names first ("misuse at line N"), so that the
 * test can check that bspg's message points at that line (call_site_test.sh).
 *   unregistered  the last process puts into a variable it never registered
 *   order         process 0 registers two areas in one order, the others in the other; then
 *                 process 0 puts its whole first area to process 1, where that slot is smaller
 *   disagree      process 0 registers an area, the others do not; processes 0 and 1 sync on
 *                 lines of their own (found at the sync: the message names both lines and
 *                 the line of process 0's bsp_push_reg)
 *   group         every process registers an area, then ends the superstep with a group sync
 *                 (found there: the message names the bsp_push_reg's line) */
#include <stdio.h>
#include <string.h>

#include "bspg.h"

#ifdef CALL_SITE_MCBSP
#include "mcbsp.h" /* MulticoreBSP's names: inline wrappers of bspg's header around each call */
#else
#include "bsp.h"
#endif

/* The call and the line it names share one source line. */
#define AT_LINE(what, call)                                            \
  do {                                                                 \
    printf("%s at line %d by process %d\n", what, __LINE__, me); \
    fflush(stdout);                                                    \
    call;                                                              \
  } while (0)
#define MISUSE(call) AT_LINE("misuse", call)

static char big[64], small[8];
static int me;

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "unregistered";
  bsp_begin(bsp_nprocs());
  int p = (int)bsp_nprocs(), s = (int)bsp_pid();
  me = s;
  int value = 7, unregistered = 0;
  if (strcmp(mode, "order") == 0) {
    if (s == 0) {
      bsp_push_reg(big, sizeof big);
      bsp_push_reg(small, sizeof small);
    } else {
      bsp_push_reg(small, sizeof small);
      bsp_push_reg(big, sizeof big);
    }
    bsp_sync();
    if (s == 0 && p > 1) MISUSE(bsp_put(1, big, big, 0, sizeof big));
  } else if (strcmp(mode, "disagree") == 0) {
    if (s == 0) {
      AT_LINE("register", bsp_push_reg(big, sizeof big));
      MISUSE(bsp_sync());
    } else if (s == 1) {
      MISUSE(bsp_sync());
    } else {
      bsp_sync();
    }
  } else if (strcmp(mode, "group") == 0) {
    int group = bspg_group_split(s);
    MISUSE(bsp_push_reg(big, sizeof big));
    bspg_group_sync(group);
  } else if (s == p - 1) {
    MISUSE(bsp_put(0, &value, &unregistered, 0, sizeof value));
  }
  bsp_sync();
  bsp_end();
  printf("FAIL: no misuse was reported\n");
  return 0;
}
