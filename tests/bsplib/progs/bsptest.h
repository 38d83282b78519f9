/* bsptest.h - shared checking helpers for the BSPlib behaviour tests in this folder.
 *
 * Every test program checks its own results. On a mismatch it prints one line starting with
 * "FAIL:" (what, where, expected, got) and stops the whole job with bsp_abort, so the run exits
 * non-zero. On success process 0 prints "PASS <name>" after bsp_end. */
#ifndef BSPTEST_H
#define BSPTEST_H

#include <bsp.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* This process's pid inside the SPMD section, -1 outside it (set by test_begin/test_end). */
static int test_me = -1;

static inline void test_begin(int maxprocs) {
  bsp_begin(maxprocs);
  test_me = bsp_pid();
}

static inline void test_end(void) {
  test_me = -1;
  bsp_end();
}

/* Stop after a failed check: bsp_abort inside the SPMD section, exit(1) outside it. */
static inline void test_stop(void) {
  fflush(stdout);
  if (test_me >= 0) bsp_abort("bsptest: a check failed on process %d\n", test_me);
  exit(1);
}

#define EXPECT(cond, ...)                                                            \
  do {                                                                               \
    if (!(cond)) {                                                                   \
      printf("FAIL: %s:%d: process %d: ", __FILE__, __LINE__, test_me);              \
      printf(__VA_ARGS__);                                                           \
      printf("\n");                                                                  \
      test_stop();                                                                   \
    }                                                                                \
  } while (0)

#define EXPECT_INT(got, want, ...)                                                   \
  do {                                                                               \
    long got_ = (long)(got), want_ = (long)(want);                                   \
    if (got_ != want_) {                                                             \
      printf("FAIL: %s:%d: process %d: ", __FILE__, __LINE__, test_me);              \
      printf(__VA_ARGS__);                                                           \
      printf(": expected %ld, got %ld\n", want_, got_);                              \
      test_stop();                                                                   \
    }                                                                                \
  } while (0)

/* Allocation that fails the test instead of returning NULL. */
static inline void *test_alloc(size_t nbytes) {
  void *p = malloc(nbytes ? nbytes : 1);
  EXPECT(p != NULL, "malloc(%zu) failed", nbytes);
  return p;
}

/* A byte pattern that depends on (who, index), so misplaced data is caught. */
static inline uint32_t test_pattern(uint32_t who, uint32_t index) {
  uint32_t x = (who + 1u) * 0x9E3779B1u ^ (index * 2654435761u);
  return x ^ (x >> 15);
}

#endif /* BSPTEST_H */
