// mpirun_stdout.cpp - MpirunStdout: the starters' blocks on mpirun's stdout (Hydra's account of a
// bad termination, Open MPI's notice of a peer that hung up) held, the rest passed on at once.
#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>

#include "message_lines.h"
#include "mpirun_messages.h"

namespace bspg::launcher {
using namespace messages_internal;
namespace {

// Every line of the starters' blocks on stdout is shorter than this.
constexpr std::size_t kLongestStarterLine = 4096;

// Hydra's account of a process that ended badly (MPICH's mpiexec, on its stdout), line by line.
constexpr std::string_view kBadTermination =
    "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES";
constexpr std::string_view kHydraBlockLine = "=   ";
constexpr std::string_view kExitString = "YOUR APPLICATION TERMINATED WITH THE EXIT STRING: ";
constexpr std::string_view kTypically = "This typically refers to a problem with your application.";
constexpr std::string_view kFaq = "Please see the FAQ page for debugging suggestions";

// The first lines of Open MPI's blocks that its starter may put on stdout: a spawned process's
// notice that a peer hung up.
constexpr std::string_view kOpenMpiFirstLines[] = {
    "An MPI communication peer process has unexpectedly disconnected.  This",
};

bool starts_with(std::string_view text, std::string_view start) {
  return text.substr(0, start.size()) == start;
}

// Whether the unfinished text may still become a line that starts with `start`.
bool may_start_with(std::string_view partial, std::string_view start) {
  const std::size_t n = std::min(partial.size(), start.size());
  return partial.substr(0, n) == start.substr(0, n);
}

// Whether an unfinished line may still become one that begins a block (Hydra's too or not).
bool may_become_beginning(std::string_view partial, bool hydra) {
  return partial.find_first_not_of('-') == std::string_view::npos ||
         (hydra && (partial.find_first_not_of('=') == std::string_view::npos ||
                    may_start_with(partial, kExitString)));
}

// A quick look at a line's first byte: most of a program's lines cannot begin a block (a rule,
// Hydra's blank line or exit string; NUL bytes before it).
bool may_begin_block_at_all(std::string_view line, bool hydra) {
  return (!line.empty() && (line[0] == '-' || line[0] == '\0')) ||
         (hydra && (line.empty() || line[0] == '=' || line[0] == 'Y'));
}

}  // namespace

std::string MpirunStdout::feed(std::string_view bytes) {
  std::string out;
  std::string joined;
  if (!partial_.empty()) {
    joined.swap(partial_);
    joined.append(bytes);
    bytes = joined;
  }
  out.reserve(bytes.size());
  std::size_t pos = 0;
  // The rest of a line already being passed on.
  if (passing_partial_) {
    const std::size_t newline = bytes.find('\n');
    pos = newline == std::string_view::npos ? bytes.size() : newline + 1;
    out.append(bytes.substr(0, pos));
    passing_partial_ = newline == std::string_view::npos;
  }
  // Lines that pass as they are go out in one piece from `run` on.
  std::size_t run = pos;
  while (pos < bytes.size()) {
    const void* found = std::memchr(bytes.data() + pos, '\n', bytes.size() - pos);
    if (!found) break;
    const std::size_t end =
        static_cast<std::size_t>(static_cast<const char*>(found) - bytes.data());
    const std::string_view line = bytes.substr(pos, end - pos);
    if (state_ != State::kNone || may_begin_block_at_all(line, starter_alone_)) {
      out.append(bytes.substr(run, pos - run));
      take_line(line, out);
      run = end + 1;
    }
    pos = end + 1;
  }
  out.append(bytes.substr(run, pos - run));
  const std::string_view rest = bytes.substr(pos);
  if (!rest.empty()) {
    if (may_become_line(rest)) {
      partial_.assign(rest);
    } else {
      release(out);
      out.append(rest);
      passing_partial_ = true;
    }
  }
  return out;
}

void MpirunStdout::take_line(std::string_view line, std::string& out) {
  const std::string_view text = nuls_skipped(line);
  const auto hold = [&](State next) {
    tentative_.append(line).push_back('\n');
    state_ = next;
  };
  // A line of a block recognised: from what was held before it on, the block is the starter's.
  const auto keep = [&](State next) {
    held_.append(tentative_).append(line).push_back('\n');
    tentative_.clear();
    ++block_lines_;
    state_ = next;
  };
  switch (state_) {
    case State::kBlank:
      if (is_rule(text, '=')) return hold(State::kEqualsRule);
      break;
    case State::kEqualsRule:
      if (text == kBadTermination) return keep(State::kHydraBlock);
      break;
    case State::kHydraBlock:
      if (block_lines_ < kMaxBlockLines && starts_with(text, kHydraBlockLine))
        return keep(State::kHydraBlock);
      if (is_rule(text, '=')) return keep(State::kHydraEnd);
      break;
    case State::kHydraEnd:
      if (starts_with(text, kExitString)) return keep(State::kExitString);
      break;
    case State::kExitString:
      if (text == kTypically) return keep(State::kTypically);
      break;
    case State::kTypically:
      if (text == kFaq) return keep(State::kNone);
      break;
    case State::kDashRule:
      for (std::string_view first : kOpenMpiFirstLines)
        if (text == first) return keep(State::kOpenMpiBlock);
      break;
    case State::kOpenMpiBlock:
      if (block_lines_ < kMaxBlockLines) return keep(is_rule(text, '-') ? State::kNone : state_);
      break;
    case State::kNone:
      break;
  }
  // Not what a block would have next: what was held as its possible beginning goes out, and the
  // line is looked at afresh.
  release(out);
  if (is_rule(text, '-')) return hold(State::kDashRule);
  if (starter_alone_) {
    if (text.empty()) return hold(State::kBlank);
    if (is_rule(text, '=')) return hold(State::kEqualsRule);
    if (starts_with(text, kExitString)) return keep(State::kExitString);
  }
  out.append(line).push_back('\n');
}

// What was held as a block's possible beginning, to pass on now.
void MpirunStdout::release(std::string& out) {
  out += tentative_;
  tentative_.clear();
  state_ = State::kNone;
  block_lines_ = 0;
}

// Whether an unfinished line may still become one that begins a block or goes on the one held.
bool MpirunStdout::may_become_line(std::string_view partial) const {
  if (state_ == State::kOpenMpiBlock) return true;
  // None of the starters' lines is this long: memory stays bounded.
  if (partial.size() > kLongestStarterLine) return false;
  const std::string_view text = nuls_skipped(partial);
  if (may_become_beginning(text, starter_alone_)) return true;
  switch (state_) {
    case State::kEqualsRule:
      return may_start_with(text, kBadTermination);
    case State::kHydraBlock:
      return may_start_with(text, kHydraBlockLine);
    case State::kExitString:
      return may_start_with(text, kTypically);
    case State::kTypically:
      return may_start_with(text, kFaq);
    case State::kDashRule:
      for (std::string_view first : kOpenMpiFirstLines)
        if (may_start_with(text, first)) return true;
      return false;
    default:
      return false;
  }
}

std::string MpirunStdout::flush() {
  std::string out;
  release(out);
  if (!partial_.empty()) {
    out += partial_;
    partial_.clear();
    passing_partial_ = true;
  }
  return out;
}

}  // namespace bspg::launcher
