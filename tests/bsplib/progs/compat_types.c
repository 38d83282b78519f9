/* A program written for other BSPlibs' bsp.h: it includes only <bsp.h>, yet uses printf and
 * stdout (<stdio.h>, as the Oxford toolset's bsp.h brought in), size_t and uint64_t (<stddef.h>,
 * <stdint.h>, as BSPonMPI's and MulticoreBSP's do), and declares its variables as bsp_pid_t,
 * bsp_nprocs_t and bsp_size_t, passing their addresses to bsp_qsize and bsp_get_tag. Built with
 * -Wall -Wextra -Werror: any missing declaration or pointer type mismatch fails the build. */
#include <bsp.h>

int main(void) {
  bsp_begin(bsp_nprocs());
  bsp_pid_t s = bsp_pid();
  bsp_nprocs_t p = bsp_nprocs();
  size_t tag_bytes = sizeof(uint64_t);
  bsp_size_t tag_size = (bsp_size_t)tag_bytes;
  bsp_set_tagsize(&tag_size);
  bsp_sync();
  for (bsp_pid_t t = 0; t < p; ++t) {
    uint64_t tag = (uint64_t)s * 1000 + (uint64_t)t;
    int32_t payload = (int32_t)(s + t);
    bsp_send(t, &tag, &payload, (bsp_size_t)sizeof payload);
  }
  bsp_sync();
  bsp_nprocs_t nmessages = 0;
  bsp_size_t nbytes = 0;
  bsp_qsize(&nmessages, &nbytes);
  int ok = nmessages == p && nbytes == p * (bsp_size_t)sizeof(int32_t);
  for (bsp_nprocs_t m = 0; m < nmessages; ++m) {
    bsp_size_t status = 0;
    uint64_t tag = 0;
    int32_t payload = -1;
    bsp_get_tag(&status, &tag);
    bsp_move(&payload, (bsp_size_t)sizeof payload);
    bsp_pid_t from = (bsp_pid_t)(tag / 1000);
    if (status != (bsp_size_t)sizeof payload || tag % 1000 != (uint64_t)s || payload != from + s)
      ok = 0;
  }
  if (!ok) {
    fprintf(stdout, "FAIL: process %d: %d messages, %d bytes, or a wrong one\n", (int)s,
            (int)nmessages, (int)nbytes);
    bsp_abort("compat_types: wrong messages\n");
  }
  bsp_end();
  printf("PASS compat_types\n");
  return 0;
}
