// scan.cpp - see scan.h.
#include "scan.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <system_error>
#include <tuple>

#include "text.h"

namespace bspg::profile {

namespace {

struct Candidate {
  int attempt = 0, section = 0, pid = 0;
  std::string path;
  FileHeader header{};
};

std::string list_of_processes(const std::vector<int>& pids) {
  constexpr std::size_t kShown = 6;
  std::string text = pids.size() == 1 ? "process " : "processes ";
  for (std::size_t i = 0; i < pids.size() && i < kShown; ++i)
    text += (i > 0 ? ", " : "") + std::to_string(pids[i]);
  if (pids.size() > kShown) text += " and " + std::to_string(pids.size() - kShown) + " more";
  return text;
}

// Reads the records of a file whose header is sound: how many are usable.
void scan_records(RawFile& file, ProfileScan& scan, std::ostream& errors) {
  RawReader reader;
  const std::string problem = reader.open(file.path);
  if (!problem.empty()) {  // it changed since its header was read
    errors << "bspprof: " << file.path << ": " << problem << "; left out\n";
    return;
  }
  Record record;
  for (;;) {
    const RawReader::Next next = reader.next(record);
    if (next == RawReader::Next::kRecord) continue;
    if (next == RawReader::Next::kCut) {
      file.cut_bytes = reader.cut_bytes();
      scan.cut_files.push_back(std::filesystem::path(file.path).filename().string() + " (" +
                               std::to_string(file.cut_bytes) + " bytes of a record)");
    } else if (next == RawReader::Next::kBad) {
      ++scan.files_with_bad_records;
      errors << "bspprof: " << file.path << ": " << reader.problem() << "; only the "
             << reader.records() << " records before it are used\n";
    }
    break;
  }
  file.records = reader.records();
}

}  // namespace

bool scan_profile(const std::string& dir, ProfileScan& scan, std::ostream& errors) {
  namespace fs = std::filesystem;
  scan = ProfileScan{};
  std::error_code error;
  if (!fs::is_directory(dir, error)) {
    errors << "bspprof: " << dir << ": "
           << (fs::exists(dir, error) ? "not a directory" : "no such directory") << "\n";
    return false;
  }
  const std::string raw = dir + "/raw";
  if (!fs::is_directory(raw, error)) {
    errors << "bspprof: no profile in " << dir << ": " << raw
           << " does not exist (profile a job with bsprun --profile DIR, or run it with "
              "BSPG_PROFILE=DIR under mpirun)\n";
    return false;
  }

  std::vector<Candidate> found;
  fs::directory_iterator entry(raw, error);
  for (; !error && entry != fs::directory_iterator(); entry.increment(error)) {
    const std::string name = entry->path().filename().string();
    if (name.size() < 8 || name.compare(name.size() - 8, 8, ".bspprof") != 0) continue;
    Candidate c;
    c.path = raw + "/" + name;
    if (!parse_record_file_name(name, c.attempt, c.section, c.pid)) {
      errors << "bspprof: " << c.path
             << ": not a name bspg writes (a<attempt>.s<section>.p<pid>.bspprof); left out\n";
      ++scan.files_left_out;
      continue;
    }
    found.push_back(std::move(c));
  }
  if (error) {
    errors << "bspprof: cannot list " << raw << ": " << error.message() << "\n";
    return false;
  }
  std::sort(found.begin(), found.end(), [](const Candidate& a, const Candidate& b) {
    return std::tie(a.attempt, a.section, a.pid) < std::tie(b.attempt, b.section, b.pid);
  });

  // Headers first: which files are profile files, and of which process.
  std::vector<Candidate> usable;
  for (Candidate& c : found) {
    RawReader reader;
    std::string problem = reader.open(c.path);
    if (problem.empty()) {
      c.header = reader.header();
      if (c.header.attempt != c.attempt || c.header.section != c.section || c.header.pid != c.pid)
        problem = "its header says attempt " + std::to_string(c.header.attempt) + ", section " +
                  std::to_string(c.header.section) + ", pid " + std::to_string(c.header.pid) +
                  ", which its name does not";
    }
    if (!problem.empty()) {
      errors << "bspprof: " << c.path << ": " << problem << "; left out\n";
      ++scan.files_left_out;
      continue;
    }
    usable.push_back(std::move(c));
  }

  // Then section by section: the process count most files agree on, and the records.
  for (std::size_t first = 0; first < usable.size();) {
    std::size_t end = first;
    while (end < usable.size() && usable[end].attempt == usable[first].attempt &&
           usable[end].section == usable[first].section)
      ++end;
    std::map<int, std::size_t> votes;
    for (std::size_t i = first; i < end; ++i) ++votes[usable[i].header.nprocs];
    int nprocs = usable[first].header.nprocs;  // on a tie, the lowest pid's file decides
    for (std::size_t i = first; i < end; ++i)
      if (votes[usable[i].header.nprocs] > votes[nprocs]) nprocs = usable[i].header.nprocs;

    SectionFiles section;
    section.attempt = usable[first].attempt;
    section.section = usable[first].section;
    section.nprocs = nprocs;
    std::vector<bool> present(static_cast<std::size_t>(nprocs), false);
    for (std::size_t i = first; i < end; ++i) {
      const Candidate& c = usable[i];
      if (c.header.nprocs != nprocs) {
        errors << "bspprof: " << c.path << ": it says nprocs " << c.header.nprocs
               << ", but the other files of attempt " << c.attempt << " section " << c.section
               << " say " << nprocs << "; left out\n";
        ++scan.files_left_out;
        continue;
      }
      RawFile file;
      file.path = c.path;
      file.header = c.header;
      file.host = printable_text(c.header.host, sizeof c.header.host);
      scan_records(file, scan, errors);
      present[static_cast<std::size_t>(c.pid)] = true;
      section.files.push_back(std::move(file));
    }

    std::vector<int> absent;
    for (int pid = 0; pid < nprocs; ++pid)
      if (!present[static_cast<std::size_t>(pid)]) absent.push_back(pid);
    if (!absent.empty())
      scan.missing.push_back("attempt " + std::to_string(section.attempt) + " section " +
                             std::to_string(section.section) + ": no usable file of " +
                             list_of_processes(absent));

    scan.files_used += section.files.size();
    scan.max_nprocs = std::max(scan.max_nprocs, nprocs);
    for (const RawFile& file : section.files) {
      if (scan.attempts.empty() || scan.attempts.back().first != section.attempt)
        scan.attempts.emplace_back(section.attempt, file.header.begin_s);
      scan.attempts.back().second = std::min(scan.attempts.back().second, file.header.begin_s);
    }
    scan.sections.push_back(std::move(section));
    first = end;
  }
  if (!scan.attempts.empty()) scan.origin_s = scan.attempts.front().second;
  return true;
}

}  // namespace bspg::profile
