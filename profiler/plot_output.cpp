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

constexpr std::size_t kLinesWithPointsUpTo = 100;  // fewer points than this: mark each one

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
  largest_s_ = std::max(largest_s_, point.time_s);
  if (params_.found) largest_s_ = std::max(largest_s_, point.predicted_s);
  largest_h_ = std::max(largest_h_, point.h_bytes);
  if (points_ != nullptr && std::fwrite(&point, sizeof point, 1, points_) != 1 && error_.empty())
    error_ = std::string("writing the plot's steps failed: ") + std::strerror(errno);
  ++count_;
}

bool PlotOutput::write(const SummaryStats& stats, const ProfileScan& scan) {
  if (points_ == nullptr || !error_.empty()) return false;
  if (std::fflush(points_) != 0 || std::fseek(points_, 0, SEEK_SET) != 0) {
    error_ = std::string("reading the plot's steps back failed: ") + std::strerror(errno);
    return false;
  }
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
  const auto flush_bin = [&]() {
    if (in_bin == 0) return;
    const double n = static_cast<double>(in_bin);
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

  // The script: paths relative to the profile directory, so that it moves with it.
  OutputFile script;
  if (!script.open(dir_ + "/profile.gp")) {
    error_ = script.error();
    return false;
  }
  double unit = 1;
  const char* unit_name = "s";
  time_unit(largest_s_, unit, unit_name);
  int min_p = std::numeric_limits<int>::max(), max_p = 0;
  for (const SectionFiles& section : scan.sections) {
    min_p = std::min(min_p, section.nprocs);
    max_p = std::max(max_p, section.nprocs);
  }
  const bool with_points = (count_ + bin - 1) / bin <= kLinesWithPointsUpTo;
  const char* line_style = with_points ? "linespoints pt 7 ps 0.6" : "lines";
  std::string& gp = script.buffer();
  gp +=
      "# bspprof: the critical process of every step (the last to call the sync), its compute, "
      "communication and wait\n"
      "# stacked; the step's h-relation on the right axis";
  gp += params_.found ? "; the BSP model's cost w + g*h + l, g and l from\n# " +
                            printable_text(params_.file.data(), params_.file.size()) + ".\n"
                      : ".\n";
  gp +=
      "# Redraw with: cd " + printable_text(dir_.data(), dir_.size()) + " && gnuplot profile.gp\n";
  gp += "set terminal pngcairo size 1200,700 font 'Sans,10' noenhanced\n";
  gp += "set output 'profile.png'\n";
  gp += "set title \"bspprof: p = " + std::to_string(min_p) +
        (max_p != min_p ? " to " + std::to_string(max_p) : std::string()) + ", " +
        std::to_string(count_) + (count_ == 1 ? " step" : " steps") +
        (scan.attempts.size() > 1 ? ", " + std::to_string(scan.attempts.size()) + " attempts"
                                  : std::string());
  if (bin > 1) gp += "\\neach bar: the mean of " + std::to_string(bin) + " consecutive steps";
  gp += "\"\n";
  gp += "set xlabel 'step (in the order of supersteps.csv)'\n";
  gp += std::string("set ylabel 'time of the critical process (") + unit_name + ")'\n";
  gp += "set y2label 'h-relation (bytes)'\n";
  gp += "set ytics nomirror\nset y2tics\nset grid ytics\nset key below horizontal\n";
  // Room above the tallest bar and the largest h for the labels.
  gp += "set yrange [0:";
  append_fixed(gp, largest_s_ > 0 ? 1.12 * largest_s_ * unit : 1, 9);
  gp += "]\nset y2range [0:";
  append_fixed(gp, largest_h_ > 0 ? 1.12 * largest_h_ : 1, 1);
  gp += "]\n";
  gp += "set xrange [";
  append_fixed(gp, -0.5 * static_cast<double>(bin) - 0.5, 1);
  gp += ':';
  append_fixed(gp, static_cast<double>(count_) - 0.5 + 0.5 * static_cast<double>(bin), 1);
  gp += "]\nset style fill solid 0.85 noborder\nset boxwidth ";
  append_fixed(gp, 0.9 * static_cast<double>(bin), 1);
  gp += " absolute\nset datafile missing '?'\nunit = ";
  append_fixed(gp, unit, 0);
  gp += "\n";

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
  for (const SummaryStats::Mismatch& miss : stats.mismatches()) {
    std::string text = "superstep " + std::to_string(miss.step.superstep);
    if (miss.step.group >= 0) text += " group " + std::to_string(miss.step.group);
    if (stats.several_attempts())
      text = "attempt " + std::to_string(miss.step.attempt) + " " + text;
    gp += "set label " + std::to_string(tag) + " " + gnuplot_quoted(text) + " at ";
    append_fixed(gp, static_cast<double>(miss.step.index), 1);
    gp += ", ";
    append_fixed(gp, miss.measured_s * unit, 9);
    gp += " front point pt 6 ps 1.5 lw 2 lc rgb '#c0392b' offset 0.8,0.8\n";
    ++tag;
  }

  gp +=
      "plot 'profile.dat' using 1:(($4+$5+$6)*unit) with boxes lc rgb '#f5b041' title 'wait', \\\n"
      "     '' using 1:(($4+$5)*unit) with boxes lc rgb '#5dade2' title 'communication', \\\n"
      "     '' using 1:($4*unit) with boxes lc rgb '#58d68d' title 'compute'";
  if (bin > 1)
    gp +=
        ", \\\n     '' using 1:($11*unit) with lines lw 1 lc rgb '#7f8c8d' "
        "title 'slowest step of each bar'";
  gp += std::string(", \\\n     '' using 1:7 axes x1y2 with ") + line_style +
        " lw 1.5 lc rgb '#8e44ad' title 'h-relation (bytes, right axis)'";
  if (params_.found)
    gp += std::string(", \\\n     '' using 1:($8*unit) with ") + line_style +
          " lw 2 lc rgb '#c0392b' title " +
          "'BSP model w + g*h + l (circled: its 5 largest misses)'";
  gp += "\n";
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
