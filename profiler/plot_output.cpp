// plot_output.cpp - profile.dat, profile.gp, and gnuplot making profile.png of them.
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>

#include "bspprof.h"
#include "outputs.h"
#include "safe_paths.h"

extern char** environ;

namespace bspg::profile {

namespace {

constexpr std::uint64_t kHeatColumns = 400;      // the heat map's steps: means of bins beyond
constexpr int kHeatRows = 256;                   // its processes: means of bins beyond
constexpr std::size_t kCutLabels = 8;            // steps cut by the scale named with their time
constexpr std::uint64_t kCircleMissesFrom = 10;  // fewer steps: no circled misses

// The unit the plot's time axis reads best in, for times up to largest_s.
void time_unit(double largest_s, double& factor, const char*& name) {
  if (largest_s < 1e-3) {
    factor = 1e6;
    name = "us";
  } else if (largest_s < 1) {
    factor = 1e3;
    name = "ms";
  } else {
    factor = 1;
    name = "s";
  }
}

void append_number(std::string& out, double value, int decimals) {
  if (std::isnan(value))
    out += '?';
  else
    append_fixed(out, value, decimals);
}

}  // namespace

PlotOutput::~PlotOutput() {
  if (points_ != nullptr) std::fclose(points_);
  if (waits_ != nullptr) std::fclose(waits_);
}

bool PlotOutput::open(const std::string& dir) {
  dir_ = dir;
  const std::string path = dir + "/profile.steps.tmp";
  std::string why;
  points_ = safe_paths::create_stream(path, "w+b", why, 0600);
  if (points_ == nullptr) {
    error_ = "cannot write " + path + ": " + why;
    return false;
  }
  std::remove(path.c_str());  // it lives while open, and goes whatever happens
  const std::string waits_path = dir + "/profile.waits.tmp";
  waits_ = safe_paths::create_stream(waits_path, "w+b", why, 0600);
  if (waits_ == nullptr) {
    error_ = "cannot write " + waits_path + ": " + why;
    return false;
  }
  std::remove(waits_path.c_str());
  return true;
}

void PlotOutput::add(const Step& step) {
  const Row& slowest = step.slowest();
  Point point{};
  point.index = static_cast<double>(step.index);
  point.superstep = static_cast<double>(step.superstep);
  point.attempt = step.attempt;
  point.compute_s = slowest.compute_s;
  point.comm_s = slowest.comm_s;
  point.wait_s = slowest.wait_s;
  point.h_bytes = static_cast<double>(step.h_bytes);
  point.predicted_s = params_.found
                          ? predicted_seconds(params_, step.max_compute_s(), point.h_bytes)
                          : std::numeric_limits<double>::quiet_NaN();
  point.time_s = slowest.compute_s + slowest.sync_s;
  largest_h_ = std::max(largest_h_, point.h_bytes);
  if (points_ != nullptr && std::fwrite(&point, sizeof point, 1, points_) != 1 && error_.empty())
    error_ = std::string("writing the plot's steps failed: ") + std::strerror(errno);
  // Each process's wait as a share of the step's time (the critical process's compute + sync).
  for (const Row& row : step.rows) {
    processes_ = std::max(processes_, row.pid + 1);
    WaitShare share{step.index, row.pid, 0.0f};
    if (point.time_s > 0)
      share.share = static_cast<float>(std::clamp(row.wait_s / point.time_s, 0.0, 1.0));
    if (waits_ != nullptr && std::fwrite(&share, sizeof share, 1, waits_) != 1 && error_.empty())
      error_ = std::string("writing the plot's waits failed: ") + std::strerror(errno);
  }
  ++count_;
}

bool PlotOutput::rewind(std::FILE* file, const char* what) {
  if (std::fflush(file) == 0 && std::fseek(file, 0, SEEK_SET) == 0) return true;
  error_ = std::string("reading the plot's ") + what + " back failed: " + std::strerror(errno);
  return false;
}

bool PlotOutput::write_waits(std::uint64_t columns_bin, int rows_bin) {
  if (!rewind(waits_, "waits")) return false;
  OutputFile cells;
  if (!cells.open(dir_ + "/profile.waits.dat")) {
    error_ = cells.error();
    return false;
  }
  cells.buffer() +=
      "# bspprof: the heat map of waiting: each process's wait in a step as a share of the\n"
      "# step's time (the critical process's compute + sync), the mean over a cell's steps and\n"
      "# processes\n"
      "# step pid share\n";
  const auto rows = static_cast<std::size_t>((processes_ + rows_bin - 1) / rows_bin);
  std::vector<double> sum(rows, 0.0);
  std::vector<std::uint32_t> n(rows, 0);
  std::uint64_t column = 0;
  bool any = false;
  const auto flush_column = [&]() {
    const double x =
        static_cast<double>(column * columns_bin) + 0.5 * static_cast<double>(columns_bin - 1);
    for (std::size_t r = 0; r < rows; ++r) {
      if (n[r] == 0) continue;
      std::string& out = cells.buffer();
      append_fixed(out, x, 1);
      out += ' ';
      append_fixed(out,
                   static_cast<double>(r * static_cast<std::size_t>(rows_bin)) +
                       0.5 * static_cast<double>(rows_bin - 1),
                   1);
      out += ' ';
      append_fixed(out, sum[r] / n[r], 4);
      out += '\n';
      cells.written();
      sum[r] = 0;
      n[r] = 0;
    }
  };
  WaitShare share;
  while (std::fread(&share, sizeof share, 1, waits_) == 1) {
    const std::uint64_t at = share.index / columns_bin;
    if (any && at != column) flush_column();
    column = at;
    any = true;
    const auto r = static_cast<std::size_t>(share.pid / rows_bin);
    if (r < rows) {
      sum[r] += share.share;
      ++n[r];
    }
  }
  if (any) flush_column();
  if (!cells.close()) {
    error_ = cells.error();
    return false;
  }
  return true;
}

bool PlotOutput::write(const SummaryStats& stats, const ProfileScan& scan) {
  if (points_ == nullptr || !error_.empty()) return false;
  if (!rewind(points_, "steps")) return false;
  const std::uint64_t bin = count_ <= kPlotBars ? 1 : (count_ + kPlotBars - 1) / kPlotBars;

  OutputFile data;
  if (!data.open(dir_ + "/profile.dat")) {
    error_ = data.error();
    return false;
  }
  data.buffer() +=
      "# bspprof: the critical process of every step (the last to call the sync), in the order of\n"
      "# supersteps.csv; times in seconds, h in bytes; predicted: the BSP model w + g*h + l\n"
      "# with w the step's largest compute ('?': no g and l from bspbench)\n";
  if (bin > 1)
    data.buffer() += "# " + std::to_string(count_) + " steps: each row is the mean of " +
                     std::to_string(bin) + " consecutive steps (step: their middle)\n";
  data.buffer() +=
      "# step superstep attempt compute_s comm_s wait_s h_bytes predicted_s time_s steps "
      "largest_time_s\n";

  // Bins of `bin` steps, summed as they are read back.
  Point sum{};
  Point first{};
  std::uint64_t in_bin = 0;
  double largest_in_bin = 0;
  struct Bar {
    double x, time_s;
  };
  std::vector<Bar> bars;  // what the plot's scale is chosen from
  const auto flush_bin = [&]() {
    if (in_bin == 0) return;
    const double n = static_cast<double>(in_bin);
    bars.push_back({first.index + (n - 1) / 2, sum.time_s / n});
    std::string& out = data.buffer();
    append_fixed(out, first.index + (n - 1) / 2, 1);
    out += ' ';
    append_fixed(out, first.superstep, 0);
    out += ' ';
    append_fixed(out, first.attempt, 0);
    for (double value : {sum.compute_s / n, sum.comm_s / n, sum.wait_s / n}) {
      out += ' ';
      append_number(out, value, 9);
    }
    out += ' ';
    append_number(out, sum.h_bytes / n, bin > 1 ? 1 : 0);
    out += ' ';
    append_number(out, sum.predicted_s / n, 9);
    out += ' ';
    append_number(out, sum.time_s / n, 9);
    out += ' ';
    append_integer(out, in_bin);
    out += ' ';
    append_number(out, largest_in_bin, 9);
    out += '\n';
    data.written();
    sum = Point{};
    in_bin = 0;
    largest_in_bin = 0;
  };
  Point point;
  for (std::uint64_t i = 0; i < count_; ++i) {
    if (std::fread(&point, sizeof point, 1, points_) != 1) {
      error_ = "reading the plot's steps back failed";
      return false;
    }
    if (in_bin == 0) first = point;
    sum.compute_s += point.compute_s;
    sum.comm_s += point.comm_s;
    sum.wait_s += point.wait_s;
    sum.h_bytes += point.h_bytes;
    sum.predicted_s += point.predicted_s;
    sum.time_s += point.time_s;
    largest_in_bin = std::max(largest_in_bin, point.time_s);
    if (++in_bin == bin) flush_bin();
  }
  flush_bin();
  if (!data.close()) {
    error_ = data.error();
    return false;
  }

  // The heat map's cells: at most kHeatColumns steps and kHeatRows processes across.
  const std::uint64_t heat_bin =
      count_ <= kHeatColumns ? 1 : (count_ + kHeatColumns - 1) / kHeatColumns;
  const int pid_bin = processes_ <= kHeatRows ? 1 : (processes_ + kHeatRows - 1) / kHeatRows;
  if (!write_waits(heat_bin, pid_bin)) return false;

  // The scale: a step far above most (a set-up, a checkpoint) would flatten the others, so bars
  // above 3 times the 90th percentile are cut at that height and labelled with their time.
  std::vector<double> times;
  for (const Bar& bar : bars) times.push_back(bar.time_s);
  std::sort(times.begin(), times.end());
  const double p90 = times.empty() ? 0 : times[(times.size() - 1) * 9 / 10];
  const double tallest = times.empty() ? 0 : times.back();
  const bool cut = p90 > 0 && tallest > 3 * p90;
  const double top_s = cut ? 3 * p90 : tallest;
  std::vector<Bar> cut_bars;
  if (cut)
    for (const Bar& bar : bars)
      if (bar.time_s > top_s) cut_bars.push_back(bar);

  // The script: paths relative to the profile directory, so that it moves with it.
  OutputFile script;
  if (!script.open(dir_ + "/profile.gp")) {
    error_ = script.error();
    return false;
  }
  double unit = 1;
  const char* unit_name = "s";
  time_unit(top_s, unit, unit_name);
  int min_p = std::numeric_limits<int>::max(), max_p = 0;
  for (const SectionFiles& section : scan.sections) {
    min_p = std::min(min_p, section.nprocs);
    max_p = std::max(max_p, section.nprocs);
  }
  std::string x_to;  // the last step's right edge
  append_fixed(x_to, static_cast<double>(count_) - 0.5, 1);
  const std::string x_from = "-0.5";
  std::string& gp = script.buffer();
  gp +=
      "# bspprof: above, the critical process of every step (the last to call the sync), its "
      "compute and\n# communication stacked, the step's h-relation on the right axis";
  gp += params_.found ? "; the BSP model's cost w + g*h + l, g and l\n# from " +
                            printable_text(params_.file.data(), params_.file.size()) + "."
                      : ".";
  gp +=
      "\n# Below: each process's wait in each step as a share of the step's time "
      "(profile.waits.dat).\n# Redraw with: cd " +
      printable_text(dir_.data(), dir_.size()) + " && gnuplot profile.gp\n";
  gp += "set terminal pngcairo size 1200,900 font 'Sans,10' noenhanced\n";
  gp += "set output 'profile.png'\n";
  gp += "set multiplot title \"bspprof: p = " + std::to_string(min_p) +
        (max_p != min_p ? " to " + std::to_string(max_p) : std::string()) + ", " +
        std::to_string(count_) + (count_ == 1 ? " step" : " steps") +
        (scan.attempts.size() > 1 ? ", " + std::to_string(scan.attempts.size()) + " attempts"
                                  : std::string());
  if (bin > 1) gp += "\\neach bar: the mean of " + std::to_string(bin) + " consecutive steps";
  gp += "\"\n";
  // Both panels share the x axis: the same margins.
  gp += "set lmargin at screen 0.08\nset rmargin at screen 0.87\n";
  gp += "set xrange [" + x_from + ":" + x_to + "]\n";
  gp += "set datafile missing '?'\nunit = ";
  append_fixed(gp, unit, 0);
  gp += "\n";

  // Above: the time line.
  gp += "set tmargin at screen 0.90\nset bmargin at screen 0.43\n";
  gp += "set xlabel 'step (in the order of supersteps.csv)' offset 0,0.5\n";
  gp += std::string("set ylabel 'time of the critical process (") + unit_name + ")'\n";
  gp += "set y2label 'h-relation (bytes)'\n";
  gp += "set ytics nomirror\nset y2tics\nset grid ytics\n";
  gp += "set key at screen 0.5, screen 0.935 center horizontal maxrows 1 samplen 2\n";
  gp += "set yrange [0:";
  append_fixed(gp, top_s > 0 ? 1.12 * top_s * unit : 1, 9);
  gp += "]\nset y2range [0:";
  append_fixed(gp, largest_h_ > 0 ? 1.12 * largest_h_ : 1, 1);
  gp += "]\nset style fill solid 0.85 noborder\nset boxwidth ";
  append_fixed(gp, 0.9 * static_cast<double>(bin), 1);
  gp += " absolute\n";

  int tag = 1;
  for (const SummaryStats::Restart& restart : stats.restarts()) {
    const double x = static_cast<double>(restart.next_step) - 0.5;
    gp += "set arrow " + std::to_string(tag) + " from ";
    append_fixed(gp, x, 1);
    gp += ", graph 0 to ";
    append_fixed(gp, x, 1);
    gp += ", graph 1 nohead front dashtype 2 lw 1.5 lc rgb '#555555'\n";
    gp += "set label " + std::to_string(tag) + " 'restart " + std::to_string(restart.attempt) +
          "' at ";
    append_fixed(gp, x, 1);
    gp += ", graph 0.97 left front offset 0.4,0 textcolor rgb '#555555'\n";
    ++tag;
  }
  // Bars cut by the scale: a mark at the top, and the time of the tallest few above it.
  std::vector<Bar> named = cut_bars;
  std::sort(named.begin(), named.end(),
            [](const Bar& a, const Bar& b) { return a.time_s > b.time_s; });
  if (named.size() > kCutLabels) named.resize(kCutLabels);
  for (const Bar& bar : cut_bars) {
    const bool with_time =
        std::any_of(named.begin(), named.end(), [&](const Bar& n) { return n.x == bar.x; });
    std::string text;
    if (with_time) {
      double factor = 1;
      const char* name = "s";
      time_unit(bar.time_s, factor, name);
      append_fixed(text, bar.time_s * factor, bar.time_s * factor < 10 ? 2 : 0);
      text += std::string(" ") + name;
    }
    gp += "set label " + std::to_string(tag) + " " + gnuplot_quoted(text) + " at ";
    append_fixed(gp, bar.x, 1);
    gp += ", ";
    append_fixed(gp, top_s * unit, 9);
    gp += " center front point pt 9 ps 1.3 lc rgb '#333333' offset 0,0.9\n";
    ++tag;
  }
  // The model's largest misses, circled (not on a short profile, where they would be every step).
  if (count_ >= kCircleMissesFrom)
    for (const SummaryStats::Mismatch& miss : stats.mismatches()) {
      if (miss.measured_s > top_s) continue;  // its bar is cut and labelled already
      gp += "set label " + std::to_string(tag) + " '' at ";
      append_fixed(gp, static_cast<double>(miss.step.index), 1);
      gp += ", ";
      append_fixed(gp, miss.measured_s * unit, 9);
      gp += " front point pt 6 ps 1.8 lw 2 lc rgb '#c0392b'\n";
      ++tag;
    }

  gp +=
      "plot 'profile.dat' using 1:(($4+$5)*unit) with boxes lc rgb '#5dade2' "
      "title 'communication', \\\n"
      "     '' using 1:($4*unit) with boxes lc rgb '#58d68d' title 'compute'";
  if (bin > 1)
    gp +=
        ", \\\n     '' using 1:($11*unit) with points pt 1 ps 0.5 lc rgb '#7f8c8d' "
        "title 'slowest step of each bar'";
  // Points, not lines: each step is a superstep of its own, and a line between them would
  // suggest a trend.
  gp +=
      ", \\\n     '' using 1:7 axes x1y2 with points pt 7 ps 0.6 lc rgb '#8e44ad' "
      "title 'h-relation (bytes, right axis)'";
  if (params_.found) {
    gp += ", \\\n     '' using 1:($8*unit) with points pt 2 ps 0.9 lw 1.5 lc rgb '#c0392b' title ";
    gp += count_ >= kCircleMissesFrom ? "'BSP model w + g*h + l (circled: its largest misses)'"
                                      : "'BSP model w + g*h + l'";
  }
  if (!cut_bars.empty())
    gp +=
        ", \\\n     NaN with points pt 9 ps 1.3 lc rgb '#333333' title 'cut by the scale (time "
        "above)'";
  gp += "\n";

  // Below: who waits, process by step.
  gp += "unset label\nunset arrow\nunset y2tics\nunset y2label\nunset grid\nunset key\n";
  gp += "set tmargin at screen 0.35\nset bmargin at screen 0.07\n";
  gp += "set xlabel 'step' offset 0,0.5\nset ylabel 'process (pid)'\n";
  gp += "set yrange [" + std::to_string(processes_) + "-0.5:-0.5]\n";
  if (processes_ <= 16) gp += "set ytics 1\n";
  gp += "set cbrange [0:1]\nset cblabel 'share of the step spent waiting'\n";
  gp += "set colorbox user origin screen 0.905, screen 0.07 size screen 0.015, screen 0.28\n";
  gp += "set palette defined (0 '#ffffff', 0.25 '#fee391', 0.6 '#fe9929', 1 '#993404')\n";
  // Grey where a process took no part (another group's step): no cell there.
  gp += "set object 1 rectangle from graph 0,0 to graph 1,1 behind fc rgb '#e0e0e0' "
        "fs solid 1.0 noborder\n";
  gp += "plot 'profile.waits.dat' using 1:2:(";
  append_fixed(gp, 0.5 * static_cast<double>(heat_bin), 1);
  gp += "):(";
  append_fixed(gp, 0.5 * pid_bin, 1);
  gp += "):3 with boxxyerror fs solid 1.0 noborder fc palette\n";
  gp += "unset multiplot\n";
  if (!script.close()) {
    error_ = script.error();
    return false;
  }
  return true;
}

std::string run_gnuplot(const std::string& dir, const std::string& script,
                        const std::string& output, std::ostream& errors) {
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0)
    return std::string("cannot run gnuplot: ") + std::strerror(errno);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addchdir_np(&actions, dir.c_str());
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 2);
  std::string program = "gnuplot", script_arg = script;
  char* argv[] = {program.data(), script_arg.data(), nullptr};
  pid_t child = 0;
  const int error = posix_spawnp(&child, "gnuplot", &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  if (error != 0) {
    close(pipe_fds[0]);
    if (error == ENOENT) return "gnuplot not found (install gnuplot-nox, or use --no-plot)";
    return std::string("cannot start gnuplot: ") + std::strerror(error);
  }

  // What gnuplot says goes to errors, a line at a time (the first 64 KiB of it).
  constexpr std::size_t kMessagesKept = 1 << 16;
  std::string said;
  char buffer[4096];
  for (;;) {
    const ssize_t n = read(pipe_fds[0], buffer, sizeof buffer);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (said.size() < kMessagesKept) said.append(buffer, static_cast<std::size_t>(n));
  }
  close(pipe_fds[0]);
  for (std::size_t from = 0; from < said.size();) {
    std::size_t end = said.find('\n', from);
    if (end == std::string::npos) end = said.size();
    const std::string line = printable_text(said.data() + from, end - from);
    if (!line.empty()) errors << "gnuplot: " << line << "\n";
    from = end + 1;
  }

  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
    if (errno == EINTR) continue;
    // Reaped by someone else (a SIGCHLD handler of the program we run in): judge by the plot.
    struct stat st;
    const std::string made = dir + "/" + output;
    if (errno == ECHILD && stat(made.c_str(), &st) == 0 && st.st_size > 0) return "";
    return std::string("waiting for gnuplot: ") + std::strerror(errno);
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
    return "gnuplot not found (install gnuplot-nox, or use --no-plot)";
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return "gnuplot failed on " + dir + "/" + script + " (its messages are above)";
  return "";
}

}  // namespace bspg::profile
