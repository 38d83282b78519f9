// bench_support.h - small helpers shared by bspbench and bspratio: option values, clock,
// statistics, and the link between the BSP processes and MPI_COMM_WORLD that lets both
// programs run raw MPI next to bspg in the same run.
#pragma once

#include <functional>
#include <optional>
#include <set>
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

// One option of a benchmark: a flag (--name) or one with a value (--name VALUE, --name=VALUE).
// take gets the value ("" for a flag) and returns "" or the message for the user.
struct Option {
  std::string name;   // without "--"
  std::string value;  // what the value is, for "option --NAME needs a VALUE"; "" for a flag
  std::function<std::string(const std::string& value)> take;
  char letter = 0;  // also -letter (only -h, for --help)
};

// The kinds every benchmark has, so that they word their errors alike.
// A flag: sets *target to set_to.
Option flag(const std::string& name, bool* target, bool set_to = true);
// A whole number in [lo, hi] into *target: "--NAME needs a whole number from LO to HI, not 'V'";
// *given (when not null) says that the option was there.
Option count(const std::string& name, long lo, long hi, long* target, bool* given = nullptr);
// A value that may not be empty ("option --NAME needs a non-empty WHAT"), given to use.
Option text(const std::string& name, const std::string& what,
            std::function<std::string(const std::string& value)> use);
// The same into *target.
Option text(const std::string& name, const std::string& what, std::string* target);
// --cases A,B,...: the rows to run, each one of `known`, into *chosen ("--cases: unknown case
// 'X' (the cases are A, B, ...)").
Option cases(const std::vector<std::string>& known, std::set<std::string>* chosen);

// Reads the whole command line (getopt_long, names in full: command_line.h). An argument that
// is no option is an error: the benchmarks take options only. Returns the first error, or "".
std::string read_options(int argc, char** argv, const char* program,
                         const std::vector<Option>& options);

// The options both benchmarks take, with the same meaning: -h/--help, --quick, and
// --reps N (1 to kRepsLimit; default 51, or 7 with --quick unless --reps is given).
constexpr long kRepsLimit = 100000;
struct CommonOptions {
  bool help = false;
  bool quick = false;
  long reps = 51;
  bool reps_given = false;
};

// read_options with the common options, into `common`, before the program's own.
std::string read_options(int argc, char** argv, const char* program, CommonOptions& common,
                         std::vector<Option> own);

// Before bsp_begin, after read_options: the exit status when the program ends here, that
// is 2 after an option error (message and a hint on stderr) and 0 for --help (usage on
// stdout); none to go on measuring. Every process runs this, the launcher's rank 0 prints.
std::optional<int> exit_before_begin(const std::string& error, const CommonOptions& options,
                                     const char* program, const char* usage);

// "load average X on N cores" when the 1-minute load average exceeds the cores online, so
// that other programs compete with the measurement for the CPUs; "" otherwise.
std::string overload_note();
// "PROCESSOR, N cores, load average X; MPI LIBRARY": what a figure's reader needs to compare it
// (the processor's model name, the 1-minute load average when it was taken, the MPI's version).
std::string machine_note();

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
  // The spread: the quartiles of the ratios of each bspg repetition to the raw MPI one that
  // followed it (half the pairs lie between them).
  double ratio_q1 = 0, ratio_q3 = 0;
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
