// ring.h - the profile most tests merge: kProcs processes, each superstep every process puts
// kRingBytes to its right neighbour; process 2 computes longest, so the others wait for it.
#ifndef BSPG_TESTS_PROFILER_RING_H
#define BSPG_TESTS_PROFILER_RING_H

#include <string>

namespace bspprof_test {

inline constexpr int kProcs = 4;
inline constexpr int kRingSupersteps = 3;      // two bsp_sync, then the sync of bsp_end
inline constexpr double kRingBegin = 1000.0;   // job clock at bsp_begin, on every process
inline constexpr double kCompute = 0.001;      // of every process but the slow one
inline constexpr double kSlowCompute = 0.003;  // of the slow one
inline constexpr int kSlowPid = 2;
inline constexpr double kSyncWork = 0.0005;  // from the last call to every return
inline constexpr unsigned kRingBytes = 64;

// Writes the ring's raw files into dir/raw, attempt 0, section 0: kRingSupersteps supersteps,
// or as many as asked for (the last is always bsp_end's).
void write_ring(const std::string& dir, int supersteps = kRingSupersteps);

}  // namespace bspprof_test

#endif
