// raw_reader.h - reads one raw profile file (raw_format.h) record by record, checking everything
// a damaged, foreign or cut file could get wrong, so that nothing after it can go out of range.
#ifndef BSPG_PROFILER_RAW_READER_H
#define BSPG_PROFILER_RAW_READER_H

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "raw_format.h"

namespace bspg::profile {

// Largest process count a header may claim; beyond it the file is taken as damaged.
inline constexpr std::int32_t kMaxProcs = 1 << 20;

// One sync of one process: the record and the PeerCount entries that follow it.
struct Record {
  SyncRecord sync{};
  std::vector<PeerCount> peers;
};

class RawReader {
 public:
  enum class Next {
    kRecord,  // a whole, sound record was read
    kEnd,     // the file ends after the last record
    kCut,     // the file ends inside a record (cut_bytes() of it are there)
    kBad,     // the record is damaged: problem() says how
  };

  RawReader() = default;
  RawReader(const RawReader&) = delete;
  RawReader& operator=(const RawReader&) = delete;
  ~RawReader();

  // Opens path and checks its header: "" when the file is usable, else why not.
  std::string open(const std::string& path);
  const FileHeader& header() const { return header_; }
  Next next(Record& record);
  std::uint64_t records() const { return records_; }  // whole sound records read so far
  std::uint64_t cut_bytes() const { return cut_bytes_; }
  const std::string& problem() const { return problem_; }

 private:
  std::string check_sync(const SyncRecord& sync) const;
  std::string check_peers(const Record& record) const;
  std::string check_order(const SyncRecord& sync);
  void close();

  std::FILE* file_ = nullptr;
  FileHeader header_{};
  std::uint64_t records_ = 0;
  std::uint64_t offset_ = 0;  // of the next record
  std::uint64_t cut_bytes_ = 0;
  std::string problem_;
  // Order of the records read so far: supersteps never go back, one world sync ends each, and
  // the group syncs of one group handle within a superstep are numbered upwards (a process is
  // in one group per handle, so the handle alone is enough here).
  std::uint64_t last_superstep_ = 0;
  bool last_was_world_ = false;
  std::map<std::int32_t, std::uint32_t> group_steps_;  // of the current superstep
};

}  // namespace bspg::profile

#endif
