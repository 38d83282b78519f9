// scan.h - finds the raw files of a profile directory, checks them, and learns what the merge
// needs before it starts: which files belong together and where the clock starts.
#ifndef BSPG_PROFILER_SCAN_H
#define BSPG_PROFILER_SCAN_H

#include <cstdint>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "raw_format.h"
#include "raw_reader.h"

namespace bspg::profile {

struct RawFile {
  std::string path;
  FileHeader header{};
  std::string host;             // printable
  std::uint64_t records = 0;    // the whole, sound records the merge uses
  std::uint64_t cut_bytes = 0;  // of a record cut short at the end of the file
};

// The files of one SPMD section of one attempt.
struct SectionFiles {
  int attempt = 0;
  int section = 0;
  int nprocs = 0;
  std::vector<RawFile> files;  // by pid; a process whose file is missing or unusable has none
};

struct ProfileScan {
  std::vector<SectionFiles> sections;            // by attempt, then section
  std::vector<std::pair<int, double>> attempts;  // each attempt and its earliest bsp_begin
  double origin_s = 0;  // the earliest bsp_begin of the first attempt: time 0 of the outputs
  int max_nprocs = 0;
  std::size_t files_used = 0;
  std::size_t files_left_out = 0;
  std::size_t files_with_bad_records = 0;
  std::vector<std::string> cut_files;  // "name (N bytes of a record left out)"
  std::vector<std::string> missing;    // "attempt A section S: processes 3, 5"
};

// Reads dir/raw. A problem with one file goes to errors naming it, and the file (or the part
// after a damaged record) is left out. false when dir/raw cannot be read at all (errors says
// why); a scan that finds nothing usable has no sections.
bool scan_profile(const std::string& dir, ProfileScan& scan, std::ostream& errors);

}  // namespace bspg::profile

#endif
