/* check.h - self-checking helpers shared by the realistic BSPlib programs in this folder.
 *
 * A program prints "PASS <name>" from process 0 when every check held. A failed check prints
 * one line "FAIL: <program>: process <pid>: <what>" and stops the whole job with bsp_abort,
 * so the run exits non-zero. Only bsp.h is used, as in any program written to the standard. */
#ifndef PROGRAMS_CHECK_H
#define PROGRAMS_CHECK_H

#include <bsp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* Set by each program to its own name, used in FAIL lines. */
static const char *check_program = "program";

#define CHECK(cond, ...)                                                              \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      printf("FAIL: %s: process %d (line %d): ", check_program, bsp_pid(), __LINE__); \
      printf(__VA_ARGS__);                                                            \
      printf("\n");                                                                   \
      fflush(stdout);                                                                 \
      bsp_abort("%s: a check failed on process %d\n", check_program, bsp_pid());      \
    }                                                                                 \
  } while (0)

#define CHECK_LONG(got, want, ...)                                                    \
  do {                                                                                \
    long long got_ = (long long)(got), want_ = (long long)(want);                     \
    if (got_ != want_) {                                                              \
      printf("FAIL: %s: process %d (line %d): ", check_program, bsp_pid(), __LINE__); \
      printf(__VA_ARGS__);                                                            \
      printf(": expected %lld, got %lld\n", want_, got_);                             \
      fflush(stdout);                                                                 \
      bsp_abort("%s: a check failed on process %d\n", check_program, bsp_pid());      \
    }                                                                                 \
  } while (0)

/* malloc that never returns NULL (for n == 0 it still returns a valid pointer). */
static inline void *check_malloc(size_t nbytes) {
  void *block = malloc(nbytes > 0 ? nbytes : 1);
  if (block == NULL) {
    printf("FAIL: %s: malloc(%zu) failed\n", check_program, nbytes);
    fflush(stdout);
    bsp_abort("%s: out of memory\n", check_program);
  }
  return block;
}

/* A deterministic pseudo-random generator (xorshift64*), seeded per process, so that every
 * process can regenerate another's input for checking. */
static inline uint64_t rng_next(uint64_t *state) {
  uint64_t x = *state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *state = x;
  return x * 0x2545F4914F6CDD1DULL;
}

static inline uint64_t rng_seed(int who, int salt) {
  return 0x9E3779B97F4A7C15ULL * (uint64_t)(who + 1) + 0xD1B54A32D192ED03ULL * (uint64_t)(salt + 1);
}

#endif /* PROGRAMS_CHECK_H */
