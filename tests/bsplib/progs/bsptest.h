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

#define EXPECT(cond, ...)                                               \
  do {                                                                  \
    if (!(cond)) {                                                      \
      printf("FAIL: %s:%d: process %d: ", __FILE__, __LINE__, test_me); \
      printf(__VA_ARGS__);                                              \
      printf("\n");                                                     \
      test_stop();                                                      \
    }                                                                   \
  } while (0)

#define EXPECT_INT(got, want, ...)                                      \
  do {                                                                  \
    long got_ = (long)(got), want_ = (long)(want);                      \
    if (got_ != want_) {                                                \
      printf("FAIL: %s:%d: process %d: ", __FILE__, __LINE__, test_me); \
      printf(__VA_ARGS__);                                              \
      printf(": expected %ld, got %ld\n", want_, got_);                 \
      test_stop();                                                      \
    }                                                                   \
  } while (0)

/* Allocation that fails the test instead of returning NULL. */
static inline void *test_alloc(size_t nbytes) {
  void *p = malloc(nbytes ? nbytes : 1);
  EXPECT(p != NULL, "malloc(%zu) failed", nbytes);
  return p;
}

/* The SPMD part (for bsp_init) of programs that stop or end before it: reaching it fails. */
static inline void test_spmd_not_reached(void) {
  bsp_begin(bsp_nprocs());
  printf("FAIL: process %d entered the SPMD section\n", bsp_pid());
  bsp_end();
}

/* Master mode, for what a spawned process does before its bsp_begin: the master (whose
 * BSPG_SUBJOB_SIZES is 1 until bsp_begin) calls bsp_begin(2) and must be stopped there by the
 * process it spawns (which has BSPG_SUBJOB_SIZES=2 from the start), which returns from here. */
static inline void test_master_waits_in_begin(void) {
  const char *sizes = getenv("BSPG_SUBJOB_SIZES");
  if (sizes != NULL && strcmp(sizes, "2") == 0) return;
  bsp_begin(2);
  printf("FAIL: process %d went on without the process it spawned\n", bsp_pid());
  bsp_end();
  exit(1);
}

/* A byte pattern that depends on (who, index), so misplaced data is caught. */
static inline uint32_t test_pattern(uint32_t who, uint32_t index) {
  uint32_t x = (who + 1u) * 0x9E3779B1u ^ (index * 2654435761u);
  return x ^ (x >> 15);
}

#endif /* BSPTEST_H */
