// outputs.h - what bspprof makes of the steps: the CSV table, the Chrome trace, the plot's data
// and script, and the summary's figures. Each takes the steps one at a time (StepSink) and
// keeps only what it reports, so that their memory does not grow with the job.
#ifndef BSPG_PROFILER_OUTPUTS_H
#define BSPG_PROFILER_OUTPUTS_H

#include <cstdint>
#include <cstdio>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "merge.h"
#include "params.h"
#include "scan.h"
#include "text.h"

namespace bspg::profile {

// supersteps.csv: a row per step and process (columns in bspprof.h).
class CsvOutput : public StepSink {
 public:
  bool open(const std::string& path, double origin_s);  // false: error() says why
  void add(const Step& step) override;
  bool close() { return file_.close(); }
  const std::string& error() const { return file_.error(); }

 private:
  OutputFile file_;
  double origin_s_ = 0;
  const std::string* last_host_ = nullptr;  // whose field last_host_field_ is
  std::string last_host_field_;
};

// profile.json: Chrome trace events, a track per BSP process (all attempts and sections on it).
// Slices of no duration are left out. With max_steps > 0 only the steps of index below it are
// traced, and only the restarts before one of them are marked, so that the trace's timeline
// ends with its last slices.
class TraceOutput : public StepSink {
 public:
  // false: error() says why
  bool open(const std::string& path, const ProfileScan& scan, std::uint64_t max_steps = 0);
  void add(const Step& step) override;
  void restart(int attempt, double begin_s, std::uint64_t next_step) override;
  bool close();
  const std::string& error() const { return file_.error(); }
  std::uint64_t steps() const { return steps_; }  // the steps traced

 private:
  // Writes one event into traceEvents; nothing of it is kept.
  void put(const nlohmann::ordered_json& event);
  // Names the slice event and sets its times, then puts it; not when it lasted no time.
  void slice(nlohmann::ordered_json& event, const char* name, double start_s, double duration_s);

  OutputFile file_;
  double origin_s_ = 0;
  bool several_attempts_ = false;
  bool first_event_ = true;
  std::uint64_t max_steps_ = 0;  // 0: no cap
  std::uint64_t steps_ = 0;
};

// A step named for people, as the summary and the plot show it.
struct StepRef {
  std::uint64_t index = 0;
  int attempt = 0, section = 0;
  std::uint64_t superstep = 0;
  std::int32_t group = -1;
  std::int32_t group_first = -1;
  std::uint64_t group_step = 0;
  std::uint32_t kind = 0;
};
StepRef step_ref(const Step& step);
// "superstep 17 (sync)", "superstep 3 group 1 (lowest pid 2) step 0 (group_sync)", with the
// attempt in front when there were restarts and the section when it is not the first.
std::string step_label(const StepRef& ref, bool with_attempt);

// The figures of the summary, and the steps the model got most wrong (for the plot too).
class SummaryStats : public StepSink {
 public:
  struct Costly {
    StepRef step;
    double time_s;  // the critical process's compute + sync
    std::uint64_t h_bytes;
    int slowest_pid;
    double slowest_compute_s;
  };
  struct Imbalanced {
    StepRef step;
    double lost_s;  // max - mean compute: what the imbalance cost
    double max_s, mean_s;
    int max_pid;
  };
  struct Mismatch {
    StepRef step;
    double measured_s, predicted_s;
  };
  struct Restart {
    int attempt;
    double begin_s;
    std::uint64_t next_step;
  };

  SummaryStats(const BspParameters& params, const ProfileScan& scan);
  void add(const Step& step) override;
  void restart(int attempt, double begin_s, std::uint64_t next_step) override;

  // files: the outputs written; notes: further lines (the plot's fate).
  void print(std::ostream& out, const std::string& dir, const std::vector<std::string>& files,
             const std::vector<std::string>& notes) const;

  std::uint64_t steps() const { return steps_; }
  const std::vector<Mismatch>& mismatches() const { return mismatches_; }
  const std::vector<Restart>& restarts() const { return restarts_; }
  bool several_attempts() const { return scan_.attempts.size() > 1; }

 private:
  const BspParameters& params_;
  const ProfileScan& scan_;
  std::uint64_t steps_ = 0;
  std::vector<std::uint64_t> steps_of_kind_ = std::vector<std::uint64_t>(5, 0);
  double compute_s_ = 0, wait_s_ = 0, comm_s_ = 0;
  double last_return_s_;
  std::vector<Costly> costly_;
  std::vector<Imbalanced> imbalanced_;
  std::vector<Mismatch> mismatches_;
  std::vector<Restart> restarts_;
  std::vector<std::uint64_t> last_to_call_;  // per pid
  std::uint64_t shared_steps_ = 0;           // steps of two or more processes
};

// traffic.csv and traffic.gp (gnuplot makes traffic.png of it): the bytes and messages each
// process sent each other over the whole profile, a row per pair that exchanged anything (from
// -> to, in the data's direction), and the who-to-whom matrix drawn as a heat map. Memory: one
// entry per such pair.
class TrafficOutput : public StepSink {
 public:
  void add(const Step& step) override;
  bool write(const std::string& dir);  // false: error() says why
  const std::string& error() const { return error_; }
  std::size_t pairs() const { return totals_.size(); }

 private:
  struct Total {
    std::uint64_t bytes = 0, messages = 0;
  };
  std::map<std::pair<int, int>, Total> totals_;
  int processes_ = 0;  // the largest p of the profile's sections
  std::string error_;
};

// profile.dat, profile.waits.dat and profile.gp, and running gnuplot on them: above, the
// critical process's compute and communication per step (on a scale that a long set-up step
// does not flatten: steps far above the others are cut and labelled), the h-relation and the
// model; below, aligned with it, a heat map of waiting, process by step. The steps wait in
// unnamed files until their number is known, which decides whether the plot shows them one by
// one or as means of bins.
class PlotOutput : public StepSink {
 public:
  explicit PlotOutput(const BspParameters& params) : params_(params) {}
  PlotOutput(const PlotOutput&) = delete;
  PlotOutput& operator=(const PlotOutput&) = delete;
  ~PlotOutput();

  bool open(const std::string& dir);  // false: error() says why
  void add(const Step& step) override;
  // Writes dir/profile.dat and dir/profile.gp; false: error() says why.
  bool write(const SummaryStats& stats, const ProfileScan& scan);
  const std::string& error() const { return error_; }

 private:
  // One step as the plot shows it: the critical process's parts, h and the model.
  struct Point {
    double index, superstep, attempt, compute_s, comm_s, wait_s, h_bytes, predicted_s, time_s;
  };
  // One process in one step, for the heat map of waiting: its wait as a share of the step.
  struct WaitShare {
    std::uint64_t index;
    std::int32_t pid;
    float share;
  };
  // Flushes file and goes back to its start, to read back what add() wrote; false: error_ says
  // why (what: "steps", "waits").
  bool rewind(std::FILE* file, const char* what);
  // Writes profile.waits.dat (the heat map's cells) from waits_; false: error_ says why.
  bool write_waits(std::uint64_t columns_bin, int rows_bin);
  const BspParameters& params_;
  std::string dir_;
  std::FILE* points_ = nullptr;
  std::FILE* waits_ = nullptr;  // WaitShare records, in step order
  int processes_ = 0;           // the largest p of the steps
  std::uint64_t count_ = 0;
  double largest_h_ = 0;
  std::string error_;
};

// Runs gnuplot on dir/script in dir, where it writes output; its messages go to errors. "" on
// success, else why not.
std::string run_gnuplot(const std::string& dir, const std::string& script,
                        const std::string& output, std::ostream& errors);

}  // namespace bspg::profile

#endif
