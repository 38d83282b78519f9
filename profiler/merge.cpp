// merge.cpp - see merge.h.
#include "merge.h"

#include <sys/resource.h>

#include <algorithm>
#include <limits>
#include <memory>
#include <tuple>

namespace bspg::profile {

const Row& Step::slowest() const {
  // The process the others waited for: the last to call the sync. Its compute and its sync are
  // the step's critical path (the others' waits are its compute seen from outside). Calls within
  // a microsecond (the clocks' precision) tie: then the one that computed longest.
  constexpr double kSameTime = 1e-6;
  std::size_t best = 0;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    if (rows[i].call_s > rows[best].call_s + kSameTime ||
        (rows[i].call_s >= rows[best].call_s - kSameTime &&
         rows[i].compute_s > rows[best].compute_s))
      best = i;
  }
  return rows[best];
}

double Step::max_compute_s() const {
  double most = 0;
  for (const Row& row : rows) most = std::max(most, row.compute_s);
  return most;
}

const char* kind_name(std::uint32_t kind) {
  switch (static_cast<SyncKind>(kind)) {
    case SyncKind::Sync:
      return "sync";
    case SyncKind::GroupSync:
      return "group_sync";
    case SyncKind::Checkpoint:
      return "checkpoint";
    case SyncKind::End:
      return "end";
  }
  return "unknown";
}

namespace {

// A record taken from a file, with what only that file's order tells.
struct Taken {
  Record record;
  double compute_s = 0;
};

// One process's file in the lockstep read.
struct Stream {
  const RawFile* file = nullptr;
  RawReader reader;
  Record peek;  // the next record, not yet taken
  bool has_peek = false;
  std::uint64_t read = 0;
  double last_return_s = 0;
  std::vector<Taken> batch;  // the current superstep's records: batch_size of them
  std::size_t batch_size = 0;
};

// Where a group sync's record sits, and what tells its step apart: the handle, the group's
// lowest pid (the groups of one bspg_group_split share the handle) and the group step.
struct GroupKey {
  std::uint32_t group_step;
  std::int32_t group;
  std::int32_t group_first;
  std::uint32_t stream;
  std::uint32_t slot;
  auto order() const { return std::tie(group_step, group, group_first, stream); }
  bool same_step(const GroupKey& other) const {
    return group_step == other.group_step && group == other.group &&
           group_first == other.group_first;
  }
};

// A section of a few thousand processes needs as many open files at once.
void allow_open_files(std::size_t files, std::ostream& errors) {
  constexpr rlim_t kSpare = 64;
  struct rlimit limit;
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY ||
      files + kSpare <= limit.rlim_cur)
    return;
  const rlim_t wanted = static_cast<rlim_t>(files) + kSpare;
  limit.rlim_cur = limit.rlim_max == RLIM_INFINITY ? wanted : std::min(wanted, limit.rlim_max);
  if (setrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur < wanted)
    errors << "bspprof: " << files << " files must be open at once, more than this process may "
           << "open (ulimit -n): some processes may be left out\n";
}

class Merger {
 public:
  Merger(const std::vector<StepSink*>& sinks, std::ostream& errors)
      : sinks_(sinks), errors_(errors) {}

  void section(const SectionFiles& files);
  std::uint64_t steps() const { return steps_; }

 private:
  void advance(Stream& stream);
  void take(Stream& stream, std::uint64_t superstep);
  void emit(const SectionFiles& files, std::uint64_t superstep, std::int32_t group,
            std::int32_t group_first, std::uint64_t group_step);
  void count(int pid, std::vector<std::uint64_t>& counts, std::uint64_t n);

  const std::vector<StepSink*>& sinks_;
  std::ostream& errors_;
  std::uint64_t steps_ = 0;
  std::vector<GroupKey> keys_;
  std::vector<const Taken*> members_;  // of the step being made, by pid
  std::vector<const Stream*> member_files_;
  // The step's traffic per pid; only the touched pids are not zero.
  std::vector<std::uint64_t> bytes_out_, bytes_in_, messages_out_, messages_in_;
  std::vector<int> touched_;
  std::vector<char> is_touched_;
  Step step_;
};

void Merger::advance(Stream& stream) {
  stream.has_peek = false;
  if (stream.read >= stream.file->records) return;
  const RawReader::Next next = stream.reader.next(stream.peek);
  if (next != RawReader::Next::kRecord) {
    errors_ << "bspprof: " << stream.file->path << ": changed while being read ("
            << (next == RawReader::Next::kBad ? stream.reader.problem() : "shorter") << "); "
            << "its records from record " << stream.read << " on are left out\n";
    return;
  }
  ++stream.read;
  stream.has_peek = true;
}

// Takes the stream's records of one superstep: its group syncs and the world sync ending it.
void Merger::take(Stream& stream, std::uint64_t superstep) {
  stream.batch_size = 0;
  while (stream.has_peek && stream.peek.sync.superstep == superstep) {
    if (stream.batch.size() == stream.batch_size) stream.batch.emplace_back();
    Taken& taken = stream.batch[stream.batch_size++];
    std::swap(taken.record, stream.peek);
    taken.compute_s = taken.record.sync.call_s - stream.last_return_s;
    stream.last_return_s = taken.record.sync.return_s;
    const bool world = taken.record.sync.group < 0;
    advance(stream);
    if (world) break;
  }
}

void Merger::count(int pid, std::vector<std::uint64_t>& counts, std::uint64_t n) {
  const auto at = static_cast<std::size_t>(pid);
  if (!is_touched_[at]) {
    is_touched_[at] = 1;
    touched_.push_back(pid);
  }
  counts[at] += n;
}

void Merger::emit(const SectionFiles& files, std::uint64_t superstep, std::int32_t group,
                  std::int32_t group_first, std::uint64_t group_step) {
  step_.index = steps_++;
  step_.attempt = files.attempt;
  step_.section = files.section;
  step_.superstep = superstep;
  step_.group = group;
  step_.group_first = group_first;
  step_.group_step = group_step;
  step_.rows.resize(members_.size());

  double latest_call = -std::numeric_limits<double>::infinity();
  step_.flows.clear();
  for (std::size_t i = 0; i < members_.size(); ++i) {
    const Record& record = members_[i]->record;
    latest_call = std::max(latest_call, record.sync.call_s);
    const int pid = member_files_[i]->file->header.pid;
    for (const PeerCount& c : record.peers) {
      // Puts and sends go from here to the peer; gets bring the peer's data here.
      const std::uint64_t sent = c.put_bytes + c.send_bytes;
      const std::uint64_t sent_messages = std::uint64_t{c.put_messages} + c.send_messages;
      count(pid, bytes_out_, sent);
      count(c.peer, bytes_in_, sent);
      count(pid, messages_out_, sent_messages);
      count(c.peer, messages_in_, sent_messages);
      count(pid, bytes_in_, c.get_bytes);
      count(c.peer, bytes_out_, c.get_bytes);
      count(pid, messages_in_, c.get_messages);
      count(c.peer, messages_out_, c.get_messages);
      if (sent > 0 || sent_messages > 0) step_.flows.push_back({pid, c.peer, sent, sent_messages});
      if (c.get_bytes > 0 || c.get_messages > 0)
        step_.flows.push_back({c.peer, pid, c.get_bytes, c.get_messages});
    }
  }

  step_.h_bytes = 0;
  for (std::size_t i = 0; i < members_.size(); ++i) {
    const SyncRecord& sync = members_[i]->record.sync;
    const RawFile& file = *member_files_[i]->file;
    const auto at = static_cast<std::size_t>(file.header.pid);
    Row& row = step_.rows[i];
    row.pid = file.header.pid;
    row.host = &file.host;
    row.kind = sync.kind;
    row.call_s = sync.call_s;
    row.return_s = sync.return_s;
    row.compute_s = members_[i]->compute_s;
    row.sync_s = sync.return_s - sync.call_s;
    row.wait_s = std::clamp(latest_call - sync.call_s, 0.0, row.sync_s);
    row.comm_s = row.sync_s - row.wait_s;
    row.bytes_out = bytes_out_[at];
    row.bytes_in = bytes_in_[at];
    row.messages_out = messages_out_[at];
    row.messages_in = messages_in_[at];
    step_.h_bytes = std::max({step_.h_bytes, row.bytes_out, row.bytes_in});
  }
  for (int pid : touched_) {
    const auto at = static_cast<std::size_t>(pid);
    bytes_out_[at] = bytes_in_[at] = messages_out_[at] = messages_in_[at] = 0;
    is_touched_[at] = 0;
  }
  touched_.clear();

  for (StepSink* sink : sinks_) sink->add(step_);
}

void Merger::section(const SectionFiles& files) {
  allow_open_files(files.files.size(), errors_);
  std::vector<std::unique_ptr<Stream>> streams;
  for (const RawFile& file : files.files) {
    auto stream = std::make_unique<Stream>();
    stream->file = &file;
    const std::string problem = stream->reader.open(file.path);
    if (!problem.empty()) {
      errors_ << "bspprof: " << file.path << ": " << problem << "; left out\n";
      continue;
    }
    stream->last_return_s = file.header.begin_s;
    advance(*stream);
    streams.push_back(std::move(stream));
  }
  const auto nprocs = static_cast<std::size_t>(files.nprocs);
  for (auto* counts : {&bytes_out_, &bytes_in_, &messages_out_, &messages_in_})
    counts->assign(nprocs, 0);
  is_touched_.assign(nprocs, 0);
  touched_.clear();

  for (;;) {
    // The lowest superstep any file is at: the files that are there take its records.
    bool any = false;
    std::uint64_t superstep = std::numeric_limits<std::uint64_t>::max();
    for (const auto& stream : streams)
      if (stream->has_peek) {
        any = true;
        superstep = std::min(superstep, stream->peek.sync.superstep);
      }
    if (!any) break;
    for (auto& stream : streams) {
      stream->batch_size = 0;
      if (stream->has_peek && stream->peek.sync.superstep == superstep) take(*stream, superstep);
    }

    // Its group syncs, each step with the processes of one group.
    keys_.clear();
    for (std::size_t s = 0; s < streams.size(); ++s)
      for (std::size_t slot = 0; slot < streams[s]->batch_size; ++slot) {
        const SyncRecord& sync = streams[s]->batch[slot].record.sync;
        if (sync.group < 0) continue;
        keys_.push_back({sync.group_step, sync.group, sync.group_first,
                         static_cast<std::uint32_t>(s), static_cast<std::uint32_t>(slot)});
      }
    std::sort(keys_.begin(), keys_.end(),
              [](const GroupKey& a, const GroupKey& b) { return a.order() < b.order(); });
    for (std::size_t first = 0; first < keys_.size();) {
      members_.clear();
      member_files_.clear();
      std::size_t end = first;
      for (; end < keys_.size() && keys_[end].same_step(keys_[first]); ++end) {
        const Stream& stream = *streams[keys_[end].stream];
        members_.push_back(&stream.batch[keys_[end].slot]);
        member_files_.push_back(&stream);
      }
      emit(files, superstep, keys_[first].group, keys_[first].group_first, keys_[first].group_step);
      first = end;
    }

    // Then the world sync that ends the superstep.
    members_.clear();
    member_files_.clear();
    for (const auto& stream : streams)
      if (stream->batch_size > 0 && stream->batch[stream->batch_size - 1].record.sync.group < 0) {
        members_.push_back(&stream->batch[stream->batch_size - 1]);
        member_files_.push_back(stream.get());
      }
    if (!members_.empty()) emit(files, superstep, -1, -1, 0);
  }
}

}  // namespace

std::uint64_t merge_steps(const ProfileScan& scan, const std::vector<StepSink*>& sinks,
                          std::ostream& errors) {
  Merger merger(sinks, errors);
  int attempt = scan.sections.empty() ? 0 : scan.sections.front().attempt;
  for (const SectionFiles& files : scan.sections) {
    if (files.attempt != attempt) {
      attempt = files.attempt;
      double begin_s = 0;
      for (const auto& [a, begin] : scan.attempts)
        if (a == attempt) begin_s = begin;
      for (StepSink* sink : sinks) sink->restart(attempt, begin_s, merger.steps());
    }
    merger.section(files);
  }
  return merger.steps();
}

}  // namespace bspg::profile
