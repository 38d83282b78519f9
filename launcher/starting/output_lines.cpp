// output_lines.cpp - whole lines from pieces of each process's output.
#include "output_lines.h"

#include <utility>

namespace bspg::launcher {

LineAssembler::LineAssembler(Sink sink, Clock::duration longest_wait, std::size_t longest_line)
    : sink_(std::move(sink)), longest_wait_(longest_wait), longest_line_(longest_line) {}

void LineAssembler::add(int pid, std::string_view bytes, Clock::time_point now) {
  if (bytes.empty()) return;
  auto held = partial_.find(pid);
  const std::size_t last_newline = bytes.rfind('\n');
  std::string_view rest = bytes;
  if (last_newline != std::string_view::npos) {
    const std::string_view whole = bytes.substr(0, last_newline + 1);
    if (held != partial_.end()) {
      held->second.text.append(whole);
      sink_(pid, held->second.text);
      partial_.erase(held);
    } else {
      sink_(pid, whole);  // the common case: no copy
    }
    rest = bytes.substr(last_newline + 1);
    held = partial_.end();
    if (rest.empty()) return;
  }
  if (held == partial_.end()) held = partial_.emplace(pid, Partial{std::string(), now}).first;
  held->second.text.append(rest);
  // Waiting counts from the line's last byte: a line still arriving is not cut.
  held->second.since = now;
  if (held->second.text.size() >= longest_line_) {
    sink_(pid, held->second.text);
    partial_.erase(held);
  }
}

void LineAssembler::flush_waiting(Clock::time_point now) {
  for (auto it = partial_.begin(); it != partial_.end();) {
    if (now - it->second.since >= longest_wait_) {
      sink_(it->first, it->second.text);
      it = partial_.erase(it);
    } else {
      ++it;
    }
  }
}

void LineAssembler::finish() {
  for (const auto& [pid, held] : partial_) sink_(pid, held.text);
  partial_.clear();
}

}  // namespace bspg::launcher
