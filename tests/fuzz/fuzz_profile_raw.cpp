// fuzz_profile_raw.cpp - raw profile files (DIR/raw/a<A>.s<S>.p<P>.bspprof, raw_format.h) through
// RawReader, which bsprun --profile and bspprof run over the files of every process. The files
// come back from other hosts and from processes that crashed while writing, so any bytes must
// end in kEnd, kCut or kBad with a reason, and every record let through must be in range. The
// input also goes through parse_record_file_name, which picks the files by name.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "fuzz_support.h"
#include "raw_reader.h"

using bspg::fuzz::expect;
namespace profile = bspg::profile;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  int attempt = 0, section = 0, pid = 0;
  const std::string name = bspg::fuzz::as_text(data, size);
  if (profile::parse_record_file_name(name, attempt, section, pid))
    expect(profile::record_file_name(attempt, section, pid) == name,
           "a record file name is the one record_file_name makes");

  // RawReader opens a path: /proc/self/fd/N opens the memory file anew, without the disk.
  const int fd = bspg::fuzz::memory_file_holding(data, size);
  profile::RawReader reader;
  if (!reader.open("/proc/self/fd/" + std::to_string(fd)).empty()) return 0;
  const std::int32_t nprocs = reader.header().nprocs;
  expect(nprocs >= 1 && nprocs <= profile::kMaxProcs, "the header's process count is checked");
  profile::Record record;
  std::uint64_t records = 0;
  for (;;) {
    const profile::RawReader::Next next = reader.next(record);
    if (next != profile::RawReader::Next::kRecord) {
      expect(next != profile::RawReader::Next::kBad || !reader.problem().empty(),
             "a damaged record has a reason");
      break;
    }
    ++records;
    expect(records * sizeof(profile::SyncRecord) <= size, "every record has its bytes");
    expect(record.peers.size() == record.sync.n_peers &&
               record.sync.n_peers <= static_cast<std::uint32_t>(nprocs),
           "a record's peers are counted");
    for (const profile::PeerCount& peer : record.peers)
      expect(peer.peer >= 0 && peer.peer < nprocs, "every peer is a process");
  }
  expect(reader.records() == records, "records() counts the records read");
  return 0;
}
