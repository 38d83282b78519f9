/* check.h - what the programs of tests/globals share: a failed check prints one line
 * "FAIL: <program>: process <pid>: <what>" and stops the job with bsp_abort. */
#ifndef GLOBALS_CHECK_H
#define GLOBALS_CHECK_H

#include <bsp.h>
#include <stdio.h>

#define CHECK(program, cond, ...)                                               \
  do {                                                                          \
    if (!(cond)) {                                                              \
      printf("FAIL: %s: process %d (line %d): ", program, bsp_pid(), __LINE__); \
      printf(__VA_ARGS__);                                                      \
      printf("\n");                                                             \
      fflush(stdout);                                                           \
      bsp_abort("%s: a check failed on process %d\n", program, bsp_pid());      \
    }                                                                           \
  } while (0)

#endif /* GLOBALS_CHECK_H */
