// output_lines.h - the job's output put back together into whole lines (pure: fed bytes, gives
// lines; unit-tested).
//
// A process's output reaches bsprun in pieces (the starter reads about 4 KiB at a time and
// forwards each piece on its own), so a long line of one process can be cut by another's. Where
// the starter says whose each piece is (it writes each process's output to files of its own:
// mpi.h), LineAssembler keeps each process's unfinished line and hands a line on only once it is
// whole.
#ifndef BSPG_LAUNCHER_OUTPUT_LINES_H
#define BSPG_LAUNCHER_OUTPUT_LINES_H

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <string_view>

namespace bspg::launcher {

// One stream (stdout or stderr) of every process: whole lines out, in each process's order.
class LineAssembler {
 public:
  using Clock = std::chrono::steady_clock;
  // Receives text of process `pid`: one or more whole lines (each ending in '\n'), or an
  // unfinished line given up on (it waited too long, grew too long, or the output ended).
  using Sink = std::function<void(int pid, std::string_view text)>;

  // An unfinished line is handed on as it is once it has waited `longest_wait` (e.g. a prompt
  // without newline) or holds `longest_line` bytes (memory stays bounded).
  explicit LineAssembler(Sink sink, Clock::duration longest_wait = std::chrono::seconds(1),
                         std::size_t longest_line = std::size_t{4} << 20);

  // Bytes process pid wrote, in its order; `now` is when they arrived.
  void add(int pid, std::string_view bytes, Clock::time_point now);
  // Hands on the unfinished lines that have waited longest_wait by `now`.
  void flush_waiting(Clock::time_point now);
  // The output ended: every unfinished line, as it is.
  void finish();
  // Whether some process has an unfinished line.
  bool holds_partial() const { return !partial_.empty(); }

 private:
  struct Partial {
    std::string text;
    Clock::time_point since;
  };
  Sink sink_;
  Clock::duration longest_wait_;
  std::size_t longest_line_;
  std::map<int, Partial> partial_;  // pid -> its unfinished line
};

}  // namespace bspg::launcher

#endif
