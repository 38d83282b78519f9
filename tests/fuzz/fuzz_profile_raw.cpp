// fuzz_profile_raw.cpp - raw profile files (DIR/raw/a<A>.s<S>.p<P>.bspprof, raw_format.h) through
// RawReader, which bsprun --profile and bspprof run over the files of every process. The files
// come back from other hosts and from processes that crashed while writing, so any bytes must
// end in kEnd, kCut or kBad with a reason, and every record let through must be in range. The
// input also goes through parse_record_file_name, which picks the files by name.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "fuzz_support.h"
#include "raw_reader.h"

using bspg::fuzz::expect;
namespace profile = bspg::profile;

namespace {

// One memory file for every input: RawReader opens a path, and /proc/self/fd/N opens the same
// file anew, without the disk.
int memory_file() {
  static const int fd = [] {
    const int made = memfd_create("fuzz-profile", MFD_CLOEXEC);
    if (made < 0) std::abort();
    return made;
  }();
  return fd;
}

void store(const std::uint8_t* data, std::size_t size) {
  const int fd = memory_file();
  if (ftruncate(fd, 0) != 0) std::abort();
  for (std::size_t done = 0; done < size;) {
    const ssize_t wrote = pwrite(fd, data + done, size - done, static_cast<off_t>(done));
    if (wrote <= 0) std::abort();
    done += static_cast<std::size_t>(wrote);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  int attempt = 0, section = 0, pid = 0;
  const std::string name = bspg::fuzz::as_text(data, size);
  if (profile::parse_record_file_name(name, attempt, section, pid))
    expect(profile::record_file_name(attempt, section, pid) == name,
           "a record file name is the one record_file_name makes");

  store(data, size);
  profile::RawReader reader;
  if (!reader.open("/proc/self/fd/" + std::to_string(memory_file())).empty()) return 0;
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
