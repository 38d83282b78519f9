// bench_support.h - small helpers shared by bspbench and bspratio: option values, clock,
// statistics, and the link between the BSP processes and MPI_COMM_WORLD that lets both
// programs run raw MPI next to bspg in the same run.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace bench {

// Seconds on a monotonic clock; one clock for bspg and raw MPI alike.
double seconds_now();

// Rank the MPI launcher gave this process (from its environment), 0 when started without
// one. Lets exactly one process print before bsp_begin (help text, option errors).
int launcher_rank();

// Parses a whole number in [lo, hi]; false (value untouched) on anything else.
bool parse_count(const std::string& text, long lo, long hi, long* value);

// Walks a command line of long options ("--name value" or "--name=value"), flags and the
// short "-h". Each method that checks something returns "" or the message for the user,
// so that both benchmarks word their option errors alike.
class OptionReader {
 public:
  OptionReader(int argc, char** argv, const char* program)
      : argc_(argc), argv_(argv), program_(program) {}

  // Moves to the next argument; false when there are no more.
  bool next();
  // The option's name: the part before '=' of "--name=value", otherwise the whole argument.
  const std::string& name() const { return name_; }
  // The value after '=', or the one take_value read; "" before either.
  const std::string& value() const { return value_; }

  // A flag: sets *target to set_to, or "option NAME takes no value" for "--name=value".
  std::string flag(bool* target, bool set_to = true);
  // Takes the value after '=', or else the next argument: "option NAME needs a WHAT" when
  // there is neither.
  std::string take_value(const std::string& what = "value");
  // Takes a value that may not be empty into *text (untouched on error); adds the message
  // "option NAME needs a non-empty WHAT".
  std::string take_text(const std::string& what, std::string* text);
  // Takes the value and parses it as a whole number in [lo, hi] into *count (untouched on
  // error): "NAME needs a whole number from LO to HI, not 'VALUE'".
  std::string take_count(long lo, long hi, long* count);
  // For an argument no option matched: "unknown option 'ARG'" when it starts with '-',
  // otherwise "unexpected argument 'ARG' (PROGRAM takes only options)".
  std::string unmatched() const;

 private:
  int argc_;
  char** argv_;
  const char* program_;
  int index_ = 0;  // argv_[index_] is the current argument (0: not started)
  std::string arg_, name_, value_;
  bool inline_value_ = false;  // the value came after '=' in the argument itself
};

// The options both benchmarks take, with the same meaning: -h/--help, --quick, and
// --reps N (1 to kRepsLimit; default 51, or 7 with --quick unless --reps is given).
constexpr long kRepsLimit = 100000;
struct CommonOptions {
  bool help = false;
  bool quick = false;
  long reps = 51;
  bool reps_given = false;
};

// Reads the whole command line: the common options into `common`, any other argument
// through handle(reader), which returns "" or an error, and reader.unmatched() for a name
// it does not know. Returns the first error, or "".
std::string read_options(int argc, char** argv, const char* program, CommonOptions& common,
                         const std::function<std::string(OptionReader&)>& handle);

// Before bsp_begin, after read_options: the exit status when the program ends here, that
// is 2 after an option error (message and a hint on stderr) and 0 for --help (usage on
// stdout); none to go on measuring. Every process runs this, the launcher's rank 0 prints.
std::optional<int> exit_before_begin(const std::string& error, const CommonOptions& options,
                                     const char* program, const char* usage);

// "load average X on N cores" when the 1-minute load average exceeds the cores online, so
// that other programs compete with the measurement for the CPUs; "" otherwise.
std::string overload_note();

// Median of the values (mean of the two middle ones for an even count); 0 for none.
double median(std::vector<double> values);

// Least-squares line y = slope * x + intercept.
struct LineFit {
  double slope = 0;
  double intercept = 0;
};
LineFit fit_line(const std::vector<double>& x, const std::vector<double>& y);

// Inside the SPMD section: aborts with a message unless MPI_COMM_WORLD holds exactly the
// BSP processes with rank == bsp_pid(), which the raw MPI comparison relies on.
void require_mpi_world(const char* program);

// Element-wise maximum over all processes, left on process 0 (others keep their own).
// A superstep's time is the time of its slowest process.
void max_to_root(std::vector<double>& values);

// Gathers one value from every process onto process 0 (empty elsewhere).
std::vector<double> gather_to_root(double value);

// Medians and minimums (microseconds, on process 0) of the slowest process's times of a bspg and
// a raw MPI variant, timed alternately so that machine noise hits both alike.
struct Alternation {
  double bspg_us = 0, raw_us = 0;          // medians
  double bspg_min_us = 0, raw_min_us = 0;  // fastest repetitions: the cost without noise
  double ratio() const { return raw_us > 0 ? bspg_us / raw_us : 0; }
  double min_ratio() const { return raw_min_us > 0 ? bspg_min_us / raw_min_us : 0; }
};
Alternation summarize(std::vector<double> bspg_seconds, std::vector<double> raw_seconds);

// Runs both variants `reps` times, alternating, after `warmup` rounds. Each variant takes a
// serial number (which may select the data) and returns its time in seconds.
template <typename Bspg, typename Raw>
Alternation time_alternating(long reps, int warmup, Bspg bspg_once, Raw raw_once) {
  int serial = 0;
  for (int w = 0; w < warmup; ++w) {
    bspg_once(serial++);
    raw_once(serial++);
  }
  std::vector<double> bspg(static_cast<std::size_t>(reps)), raw(static_cast<std::size_t>(reps));
  for (std::size_t rep = 0; rep < bspg.size(); ++rep) {
    bspg[rep] = bspg_once(serial++);
    raw[rep] = raw_once(serial++);
  }
  return summarize(std::move(bspg), std::move(raw));
}

}  // namespace bench
