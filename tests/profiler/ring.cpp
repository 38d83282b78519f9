// ring.cpp - see ring.h.
#include "ring.h"

#include <memory>
#include <vector>

#include "test_support.h"

namespace bspprof_test {

void write_ring(const std::string& dir, int supersteps) {
  std::vector<std::unique_ptr<RawWriter>> files;
  for (int pid = 0; pid < kProcs; ++pid)
    files.push_back(std::make_unique<RawWriter>(dir, 0, 0, pid, kProcs, kRingBegin));
  double returned = kRingBegin;
  for (int s = 0; s < supersteps; ++s) {
    const double last_call = returned + kSlowCompute;
    for (int pid = 0; pid < kProcs; ++pid) {
      const double call = returned + (pid == kSlowPid ? kSlowCompute : kCompute);
      files[pid]->world(s, call, last_call + kSyncWork, {put((pid + 1) % kProcs, kRingBytes)},
                        s + 1 == supersteps ? SyncKind::End : SyncKind::Sync);
    }
    returned = last_call + kSyncWork;
  }
}

}  // namespace bspprof_test
