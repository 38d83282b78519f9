// trace_output.cpp - profile.json, in Chrome's trace event format: complete ("X") events of
// microseconds on the job clock from the outputs' origin, one process ("pid") per BSP process;
// the first max_steps steps only, when that is not 0.
#include <algorithm>
#include <map>

#include "outputs.h"

namespace bspg::profile {

bool TraceOutput::open(const std::string& path, const ProfileScan& scan, std::uint64_t max_steps) {
  origin_s_ = scan.origin_s;
  several_attempts_ = scan.attempts.size() > 1;
  first_event_ = true;
  max_steps_ = max_steps;
  steps_ = 0;
  if (!file_.open(path)) return false;
  file_.buffer() += "{\"traceEvents\":[";

  // A track per process, named with the hosts it ran on (a restart may move it).
  std::map<int, std::vector<const std::string*>> hosts;
  for (const SectionFiles& section : scan.sections)
    for (const RawFile& file : section.files) {
      auto& list = hosts[file.header.pid];
      if (std::none_of(list.begin(), list.end(),
                       [&](const std::string* host) { return *host == file.host; }))
        list.push_back(&file.host);
    }
  for (const auto& [pid, list] : hosts) {
    std::string name = "process " + std::to_string(pid) + " (";
    for (std::size_t i = 0; i < list.size(); ++i) name += (i > 0 ? ", " : "") + *list[i];
    name += ")";
    std::string& out = file_.buffer();
    begin_event();
    out += "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" + std::to_string(pid) +
           ",\"tid\":0,\"args\":{\"name\":" + json_quoted(name) + "}}";
    begin_event();
    out += "{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":" + std::to_string(pid) +
           ",\"tid\":0,\"args\":{\"sort_index\":" + std::to_string(pid) + "}}";
    file_.written();
  }
  return true;
}

void TraceOutput::begin_event() {
  file_.buffer() += first_event_ ? "\n" : ",\n";
  first_event_ = false;
}

void TraceOutput::append_time(double job_clock_s) {
  append_fixed(file_.buffer(), (job_clock_s - origin_s_) * 1e6, 3);
}

void TraceOutput::slice(const char* name, int pid, double start_s, double duration_s,
                        const std::string& args) {
  if (!(duration_s > 0)) return;
  begin_event();
  std::string& out = file_.buffer();
  out += "{\"name\":\"";
  out += name;
  out += "\",\"cat\":\"bsp\",\"ph\":\"X\",\"pid\":";
  append_integer(out, std::int64_t{pid});
  out += ",\"tid\":0,\"ts\":";
  append_time(start_s);
  out += ",\"dur\":";
  append_fixed(out, duration_s * 1e6, 3);
  out += ",\"args\":";
  out += args;
  out += '}';
}

void TraceOutput::add(const Step& step) {
  if (max_steps_ > 0 && step.index >= max_steps_) return;
  ++steps_;
  for (const Row& row : step.rows) {
    args_ = "{\"superstep\":";
    append_integer(args_, step.superstep);
    args_ += ",\"kind\":\"";
    args_ += kind_name(row.kind);
    args_ += "\",\"group\":";
    append_integer(args_, step.group);
    args_ += ",\"group_first\":";
    append_integer(args_, step.group_first);
    if (step.group >= 0) {
      args_ += ",\"group_step\":";
      append_integer(args_, step.group_step);
    }
    if (several_attempts_) {
      args_ += ",\"attempt\":";
      append_integer(args_, std::int64_t{step.attempt});
    }
    if (step.section > 0) {
      args_ += ",\"section\":";
      append_integer(args_, std::int64_t{step.section});
    }
    args_ += ",\"bytes_out\":";
    append_integer(args_, row.bytes_out);
    args_ += ",\"bytes_in\":";
    append_integer(args_, row.bytes_in);
    args_ += ",\"h_bytes\":";
    append_integer(args_, step.h_bytes);
    args_ += '}';
    slice("compute", row.pid, row.call_s - row.compute_s, row.compute_s, args_);
    slice("wait", row.pid, row.call_s, row.wait_s, args_);
    slice("communication", row.pid, row.call_s + row.wait_s, row.comm_s, args_);
  }
  file_.written();
}

void TraceOutput::restart(int attempt, double begin_s, std::uint64_t next_step) {
  // A mark after the last traced step would stretch the timeline over nothing but itself.
  if (max_steps_ > 0 && next_step >= max_steps_) return;
  begin_event();
  std::string& out = file_.buffer();
  out += "{\"name\":\"restart " + std::to_string(attempt) +
         "\",\"cat\":\"bsp\",\"ph\":\"i\",\"s\":\"g\",\"pid\":0,\"tid\":0,\"ts\":";
  append_time(begin_s);
  out += '}';
  file_.written();
}

bool TraceOutput::close() {
  file_.buffer() += "\n],\"displayTimeUnit\":\"ms\"}\n";
  return file_.close();
}

}  // namespace bspg::profile
