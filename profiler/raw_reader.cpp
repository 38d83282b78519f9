// raw_reader.cpp - see raw_reader.h.
#include "raw_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>

namespace bspg::profile {

namespace {

std::string number(std::int64_t n) { return std::to_string(n); }

}  // namespace

RawReader::~RawReader() { close(); }

void RawReader::close() {
  if (file_ != nullptr) std::fclose(file_);
  file_ = nullptr;
}

std::string RawReader::open(const std::string& path) {
  close();
  records_ = 0;
  offset_ = sizeof(FileHeader);
  cut_bytes_ = 0;
  problem_.clear();
  last_superstep_ = 0;
  last_was_world_ = false;
  group_steps_.clear();

  // Not blocking: a FIFO named like a profile file must not hang the merge.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return std::string("cannot open it: ") + std::strerror(errno);
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return "not a regular file";
  }
  file_ = fdopen(fd, "rb");
  if (file_ == nullptr) {
    const int error = errno;
    ::close(fd);
    return std::string("cannot read it: ") + std::strerror(error);
  }
  std::setvbuf(file_, nullptr, _IOFBF, 1 << 16);

  std::string problem;
  const std::size_t got = std::fread(&header_, 1, sizeof header_, file_);
  if (got == 0)
    problem = "empty: not even a header (did the process die at bsp_begin?)";
  else if (got < sizeof header_)
    problem = "too short for a header (" + number(static_cast<std::int64_t>(got)) + " of " +
              number(sizeof header_) + " bytes)";
  else if (std::memcmp(header_.magic, kMagic, sizeof kMagic) != 0)
    problem = "not a bspg profile file (wrong magic number)";
  else if (header_.version != kVersion)
    problem = "format version " + number(header_.version) + ", but this bspprof reads version " +
              number(kVersion);
  else if (header_.nprocs < 1 || header_.nprocs > kMaxProcs)
    problem = "nprocs " + number(header_.nprocs) + " is not a process count (1 to " +
              number(kMaxProcs) + ")";
  else if (header_.pid < 0 || header_.pid >= header_.nprocs)
    problem = "pid " + number(header_.pid) + " is not a process of " + number(header_.nprocs);
  else if (header_.attempt < 0 || header_.section < 0)
    problem = "attempt " + number(header_.attempt) + " or section " + number(header_.section) +
              " is negative";
  else if (!std::isfinite(header_.begin_s))
    problem = "begin_s is not a number";
  if (!problem.empty()) close();
  return problem;
}

std::string RawReader::check_sync(const SyncRecord& sync) const {
  const auto kind = static_cast<SyncKind>(sync.kind);
  if (kind != SyncKind::Sync && kind != SyncKind::GroupSync && kind != SyncKind::Checkpoint &&
      kind != SyncKind::End)
    return "unknown sync kind " + number(sync.kind);
  if (kind == SyncKind::GroupSync && sync.group < 0)
    return "a group sync of group " + number(sync.group);
  if (kind != SyncKind::GroupSync && sync.group != -1)
    return "a world sync with group " + number(sync.group) + " instead of -1";
  if (sync.group >= 0 && (sync.group_first < 0 || sync.group_first >= header_.nprocs))
    return "group_first " + number(sync.group_first) + " is not a process of " +
           number(header_.nprocs);
  if (sync.n_peers > static_cast<std::uint32_t>(header_.nprocs))
    return "n_peers " + number(sync.n_peers) + " is more than the " + number(header_.nprocs) +
           " processes";
  if (sync.group_size == 0 || sync.group_size > static_cast<std::uint32_t>(header_.nprocs))
    return "group_size " + number(sync.group_size) + " is not a process count of " +
           number(header_.nprocs);
  if (!std::isfinite(sync.call_s) || !std::isfinite(sync.return_s))
    return "its times are not numbers";
  if (sync.return_s < sync.call_s) return "the sync returned before it was called";
  return "";
}

std::string RawReader::check_peers(const Record& record) const {
  for (const PeerCount& count : record.peers)
    if (count.peer < 0 || count.peer >= header_.nprocs)
      return "peer " + number(count.peer) + " is not a process of " + number(header_.nprocs);
  return "";
}

std::string RawReader::check_order(const SyncRecord& sync) {
  if (records_ > 0) {
    if (sync.superstep < last_superstep_)
      return "superstep " + std::to_string(sync.superstep) + " after superstep " +
             std::to_string(last_superstep_);
    if (last_was_world_ && sync.superstep == last_superstep_)
      return "a second sync ends superstep " + std::to_string(sync.superstep);
  }
  if (records_ == 0 || sync.superstep != last_superstep_) group_steps_.clear();
  if (sync.group >= 0) {
    const auto [it, first] = group_steps_.emplace(sync.group, sync.group_step);
    if (!first) {
      if (sync.group_step <= it->second)
        return "group " + number(sync.group) + "'s step " + std::to_string(sync.group_step) +
               " after its step " + std::to_string(it->second);
      it->second = sync.group_step;
    }
  }
  last_superstep_ = sync.superstep;
  last_was_world_ = sync.group < 0;
  return "";
}

RawReader::Next RawReader::next(Record& record) {
  if (file_ == nullptr) return Next::kEnd;
  const std::size_t got = std::fread(&record.sync, 1, sizeof record.sync, file_);
  if (got < sizeof record.sync) {
    if (std::ferror(file_)) {
      problem_ = std::string("read error: ") + std::strerror(errno);
      return Next::kBad;
    }
    cut_bytes_ = got;
    return got == 0 ? Next::kEnd : Next::kCut;
  }
  // Kind 0: space the process reserved ahead and did not reach (it ended without cutting its
  // file), or a record it was killed while writing (the kind is written last).
  if (record.sync.kind == 0) {
    const SyncRecord unused{};
    if (std::memcmp(&record.sync, &unused, sizeof unused) == 0) return Next::kEnd;
    cut_bytes_ = got;
    return Next::kCut;
  }
  const auto where = [&] {
    return "record " + std::to_string(records_) + " (byte " + std::to_string(offset_) + "): ";
  };
  problem_ = check_sync(record.sync);
  if (!problem_.empty()) {
    problem_ = where() + problem_;
    return Next::kBad;
  }
  record.peers.resize(record.sync.n_peers);
  const std::size_t want = record.peers.size() * sizeof(PeerCount);
  const std::size_t got_peers = std::fread(record.peers.data(), 1, want, file_);
  if (got_peers < want) {
    if (std::ferror(file_)) {
      problem_ = std::string("read error: ") + std::strerror(errno);
      return Next::kBad;
    }
    cut_bytes_ = sizeof record.sync + got_peers;
    return Next::kCut;
  }
  problem_ = check_peers(record);
  if (problem_.empty()) problem_ = check_order(record.sync);
  if (!problem_.empty()) {
    problem_ = where() + problem_;
    return Next::kBad;
  }
  ++records_;
  offset_ += sizeof record.sync + want;
  return Next::kRecord;
}

}  // namespace bspg::profile
