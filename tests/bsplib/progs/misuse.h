/* misuse.h - helpers for the misuse programs: each one makes a single mistake and must be
 * stopped by the library (non-zero exit, one message). Reaching the end is a test failure. */
#ifndef MISUSE_H
#define MISUSE_H

#include "bsptest.h"

/* The DRMA/BSMP calls the misuse programs take by name. */
static inline int is_transfer_call(const char *call) {
  return strcmp(call, "put") == 0 || strcmp(call, "get") == 0 || strcmp(call, "hpput") == 0 ||
         strcmp(call, "hpget") == 0 || strcmp(call, "direct_get") == 0 ||
         strcmp(call, "send") == 0 || strcmp(call, "hpsend") == 0;
}

/* The calls that name a registered area (all but the message calls). */
static inline int is_drma_call(const char *call) {
  return is_transfer_call(call) && strcmp(call, "send") != 0 && strcmp(call, "hpsend") != 0;
}

/* One transfer between the local buffer and the area registered as `registered` on `pid`. */
static inline void transfer(const char *call, int pid, void *local, void *registered, int offset,
                            int nbytes) {
  if (strcmp(call, "put") == 0)
    bsp_put(pid, local, registered, offset, nbytes);
  else if (strcmp(call, "get") == 0)
    bsp_get(pid, registered, offset, local, nbytes);
  else if (strcmp(call, "hpput") == 0)
    bsp_hpput(pid, local, registered, offset, nbytes);
  else if (strcmp(call, "hpget") == 0)
    bsp_hpget(pid, registered, offset, local, nbytes);
  else if (strcmp(call, "direct_get") == 0)
    bsp_direct_get(pid, registered, offset, local, nbytes);
  else if (strcmp(call, "send") == 0)
    bsp_send(pid, NULL, local, nbytes);
  else if (strcmp(call, "hpsend") == 0)
    bsp_hpsend(pid, NULL, local, nbytes);
}

/* Reached only when the library let the mistake through. */
#define MISUSE_NOT_CAUGHT(...)    \
  do {                            \
    printf("FAIL: not caught: "); \
    printf(__VA_ARGS__);          \
    printf("\n");                 \
    fflush(stdout);               \
    exit(3);                      \
  } while (0)

#endif /* MISUSE_H */
