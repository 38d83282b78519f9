/* compute_for.h - the profiler tests' programs compute (spin on the clock) for a known time, so
 * that their supersteps' compute and wait times are known. */
#ifndef BSPG_TESTS_PROFILING_COMPUTE_FOR_H
#define BSPG_TESTS_PROFILING_COMPUTE_FOR_H

#include <time.h>

static inline void compute_for(double seconds) {
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  do clock_gettime(CLOCK_MONOTONIC, &now);
  while ((double)(now.tv_sec - start.tv_sec) + 1e-9 * (double)(now.tv_nsec - start.tv_nsec) <
         seconds);
}

#endif
