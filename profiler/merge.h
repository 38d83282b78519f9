// merge.h - steps: the records of one sync from all the processes that took part, with what
// bspprof derives from them (see bspprof.h), handed to the outputs in the order they complete.
#ifndef BSPG_PROFILER_MERGE_H
#define BSPG_PROFILER_MERGE_H

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "scan.h"

namespace bspg::profile {

// One process in one step.
struct Row {
  int pid = 0;
  const std::string* host = nullptr;
  std::uint32_t kind = 0;           // SyncKind
  double call_s = 0, return_s = 0;  // job clock
  double compute_s = 0, sync_s = 0, wait_s = 0, comm_s = 0;
  std::uint64_t bytes_out = 0, bytes_in = 0, messages_out = 0, messages_in = 0;
};

struct Step {
  std::uint64_t index = 0;  // place in the outputs, from 0
  int attempt = 0, section = 0;
  std::uint64_t superstep = 0;
  std::int32_t group = -1;        // the handle; -1 for the world
  std::int32_t group_first = -1;  // the group's lowest pid; -1 for the world
  std::uint64_t group_step = 0;
  std::uint64_t h_bytes = 0;
  std::vector<Row> rows;  // by pid
  // Who sent whom how much in this step, in the data's direction (a get's bytes flow from the
  // process read to the reader); one entry per record of a pair, so a pair may repeat.
  struct Flow {
    int from, to;
    std::uint64_t bytes, messages;
  };
  std::vector<Flow> flows;

  // The critical process: the last to call the sync, which the others waited for (within a
  // microsecond, the one that computed longest).
  const Row& slowest() const;
  double max_compute_s() const;
};

// Receives the steps in order.
class StepSink {
 public:
  virtual ~StepSink() = default;
  virtual void add(const Step& step) = 0;
  // A new attempt (a restart) began at begin_s; its first step will have index next_step.
  virtual void restart(int /*attempt*/, double /*begin_s*/, std::uint64_t /*next_step*/) {}
};

const char* kind_name(std::uint32_t kind);  // sync, group_sync, checkpoint, end

// Reads the scanned files, section by section and in each section all its files in lockstep,
// world superstep by world superstep, and hands every step to every sink. Files that changed
// since the scan are cut where they stop making sense (errors says so). Returns the number of
// steps.
std::uint64_t merge_steps(const ProfileScan& scan, const std::vector<StepSink*>& sinks,
                          std::ostream& errors);

}  // namespace bspg::profile

#endif
