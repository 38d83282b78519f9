// trace_output.cpp - profile.json, in Chrome's trace event format: complete ("X") events of
// microseconds on the job clock from the outputs' origin, one process ("pid") per BSP process;
// the first max_steps steps only, when that is not 0. Each event is built as a JSON object of
// its own and written out at once, so that memory does not grow with the trace.
#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "outputs.h"

namespace bspg::profile {

namespace {

using Json = nlohmann::ordered_json;  // keys in the order set (name, ph, pid, ...), not sorted

// Microseconds to the nanosecond; whole ones as integers ("20", not "20.0": a smaller file).
Json microseconds(double seconds) {
  const double us = std::round(seconds * 1e9) / 1e3 + 0.0;  // + 0.0: never "-0"
  if (std::fabs(us) < 9e15 && us == std::trunc(us)) return static_cast<std::int64_t>(us);
  return us;  // NaN and infinities come out as null: still JSON
}

}  // namespace

bool TraceOutput::open(const std::string& path, const ProfileScan& scan, std::uint64_t max_steps) {
  origin_s_ = scan.origin_s;
  several_attempts_ = scan.attempts.size() > 1;
  first_event_ = true;
  max_steps_ = max_steps;
  steps_ = 0;
  if (!file_.open(path)) return false;
  // The frame around the events is plain text, so that the events stream through it.
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
    // Metadata events have a "ts" too (0, as Chrome writes them): importers that read every
    // event's time then take them.
    put({{"name", "process_name"},
         {"ph", "M"},
         {"pid", pid},
         {"tid", 0},
         {"ts", 0},
         {"args", {{"name", name}}}});
    put({{"name", "process_sort_index"},
         {"ph", "M"},
         {"pid", pid},
         {"tid", 0},
         {"ts", 0},
         {"args", {{"sort_index", pid}}}});
  }
  return true;
}

void TraceOutput::put(const nlohmann::ordered_json& event) {
  std::string& out = file_.buffer();
  out += first_event_ ? "\n" : ",\n";
  first_event_ = false;
  // replace: a byte that is not UTF-8 becomes U+FFFD instead of an exception mid-file.
  out += event.dump(-1, ' ', false, Json::error_handler_t::replace);
  file_.written();
}

void TraceOutput::slice(nlohmann::ordered_json& event, const char* name, double start_s,
                        double duration_s) {
  if (!(duration_s > 0)) return;
  event["name"].get_ref<std::string&>() = name;
  event["ts"] = microseconds(start_s - origin_s_);
  event["dur"] = microseconds(duration_s);
  put(event);
}

void TraceOutput::add(const Step& step) {
  if (max_steps_ > 0 && step.index >= max_steps_) return;
  ++steps_;
  for (const Row& row : step.rows) {
    // One object for the row's three slices, built in the order of its keys: slice() only
    // renames it and sets its times (building it again for each slice doubles the cost).
    Json event;
    event["name"] = "";
    event["cat"] = "bsp";
    event["ph"] = "X";
    event["pid"] = row.pid;
    event["tid"] = 0;
    event["ts"] = 0;
    event["dur"] = 0;
    Json& args = event["args"];
    args["superstep"] = step.superstep;
    args["kind"] = kind_name(row.kind);
    args["group"] = step.group;
    args["group_first"] = step.group_first;
    if (step.group >= 0) args["group_step"] = step.group_step;
    if (several_attempts_) args["attempt"] = step.attempt;
    if (step.section > 0) args["section"] = step.section;
    args["bytes_out"] = row.bytes_out;
    args["bytes_in"] = row.bytes_in;
    args["h_bytes"] = step.h_bytes;
    slice(event, "compute", row.call_s - row.compute_s, row.compute_s);
    slice(event, "wait", row.call_s, row.wait_s);
    slice(event, "communication", row.call_s + row.wait_s, row.comm_s);
  }
}

void TraceOutput::restart(int attempt, double begin_s, std::uint64_t next_step) {
  // A mark after the last traced step would stretch the timeline over nothing but itself.
  if (max_steps_ > 0 && next_step >= max_steps_) return;
  put({{"name", "restart " + std::to_string(attempt)},
       {"cat", "bsp"},
       {"ph", "i"},
       {"s", "g"},
       {"pid", 0},
       {"tid", 0},
       {"ts", microseconds(begin_s - origin_s_)}});
}

bool TraceOutput::close() {
  file_.buffer() += "\n],\"displayTimeUnit\":\"ms\"}\n";
  return file_.close();
}

}  // namespace bspg::profile
