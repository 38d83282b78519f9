// bench_support.cpp - see bench_support.h.
#include "bench_support.h"

#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "bsp.h"
#include "command_line.h"

namespace bench {

double seconds_now() {
  using Clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
}

int launcher_rank() {
  // Open MPI sets the first; PMIx and MPICH-style launchers the others.
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"}) {
    if (const char* text = std::getenv(name)) return std::atoi(text);
  }
  return 0;
}

bool parse_count(const std::string& text, long lo, long hi, long* value) {
  if (text.empty() || text[0] == '-' || text[0] == '+') return false;
  errno = 0;
  char* end = nullptr;
  const long parsed = std::strtol(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || parsed < lo || parsed > hi) return false;
  *value = parsed;
  return true;
}

Option flag(const std::string& name, bool* target, bool set_to) {
  return {name, "", [=](const std::string&) {
            *target = set_to;
            return std::string();
          }};
}

Option count(const std::string& name, long lo, long hi, long* target, bool* given) {
  return {name, "value", [=](const std::string& value) {
            if (given != nullptr) *given = true;
            if (parse_count(value, lo, hi, target)) return std::string();
            return "--" + name + " needs a whole number from " + std::to_string(lo) + " to " +
                   std::to_string(hi) + ", not '" + value + "'";
          }};
}

Option text(const std::string& name, const std::string& what,
            std::function<std::string(const std::string& value)> use) {
  return {name, what, [=](const std::string& value) {
            if (value.empty()) return "option --" + name + " needs a non-empty " + what;
            return use(value);
          }};
}

Option text(const std::string& name, const std::string& what, std::string* target) {
  return text(name, what, [=](const std::string& value) {
    *target = value;
    return std::string();
  });
}

Option cases(const std::vector<std::string>& known, std::set<std::string>* chosen) {
  return text("cases", "list of cases", [known, chosen](const std::string& list) {
    std::size_t begin = 0;
    while (begin <= list.size()) {
      const std::size_t end = std::min(list.find(',', begin), list.size());
      const std::string name = list.substr(begin, end - begin);
      if (std::find(known.begin(), known.end(), name) == known.end()) {
        std::string all;
        for (const std::string& k : known) all += (all.empty() ? "" : ", ") + k;
        return "--cases: unknown case '" + name + "' (the cases are " + all + ")";
      }
      chosen->insert(name);
      begin = end + 1;
    }
    return std::string();
  });
}

std::string read_options(int argc, char** argv, const char* program,
                         const std::vector<Option>& options) {
  std::vector<bspg::command_line::Option> table;
  for (const Option& o : options) {
    const bool takes_value = !o.value.empty();
    table.push_back({o.name, takes_value, o.letter,
                     takes_value ? "option --" + o.name + " needs a " + o.value : ""});
  }
  bspg::command_line::Reader reader(argc, argv, table);
  for (;;) {
    using Step = bspg::command_line::Step;
    const Step step = reader.next();
    switch (step.kind) {
      case Step::kEnd:
        return "";
      case Step::kError:
        return step.text;
      case Step::kOperand:
        return "unexpected argument '" + step.text + "' (" + program + " takes only options)";
      case Step::kOption:
        if (std::string error = options[step.option].take(step.text); !error.empty()) return error;
        break;
    }
  }
}

std::string read_options(int argc, char** argv, const char* program, CommonOptions& common,
                         std::vector<Option> own) {
  std::vector<Option> options = {flag("help", &common.help), flag("quick", &common.quick),
                                 count("reps", 1, kRepsLimit, &common.reps, &common.reps_given)};
  options[0].letter = 'h';
  options.insert(options.end(), own.begin(), own.end());
  const std::string error = read_options(argc, argv, program, options);
  if (common.quick && !common.reps_given) common.reps = 7;
  return error;
}

std::optional<int> exit_before_begin(const std::string& error, const CommonOptions& options,
                                     const char* program, const char* usage) {
  const bool speaker = launcher_rank() == 0;
  if (!error.empty()) {
    if (speaker) {
      std::fprintf(stderr, "%s: %s\nTry '%s --help'.\n", program, error.c_str(), program);
      return 2;
    }
    // The others end quietly: a starter that stops the job at the first non-zero exit (Open MPI
    // 5's) would otherwise stop the speaker before it has said why. The job's status is still 2.
    return 0;
  }
  if (options.help) {
    if (speaker) std::fputs(usage, stdout);
    return 0;
  }
  return std::nullopt;
}

std::string overload_note() {
  double load = 0;
  FILE* file = std::fopen("/proc/loadavg", "r");
  if (!file) return "";
  const bool read = std::fscanf(file, "%lf", &load) == 1;
  std::fclose(file);
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  if (!read || cores <= 0 || load <= cores) return "";
  char note[80];
  std::snprintf(note, sizeof note, "load average %.2f on %ld cores", load, cores);
  return note;
}

std::string machine_note() {
  std::string model = "unknown processor";
  if (FILE* file = std::fopen("/proc/cpuinfo", "r")) {
    char line[512];
    while (std::fgets(line, sizeof line, file)) {
      if (std::strncmp(line, "model name", 10) != 0) continue;
      const char* colon = std::strchr(line, ':');
      if (!colon) continue;
      model = colon + 1;
      model.erase(0, model.find_first_not_of(" \t"));
      model.erase(model.find_last_not_of(" \t\n") + 1);
      break;
    }
    std::fclose(file);
  }
  double load = -1;
  if (FILE* file = std::fopen("/proc/loadavg", "r")) {
    if (std::fscanf(file, "%lf", &load) != 1) load = -1;
    std::fclose(file);
  }
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = "";
  int length = 0;
  MPI_Get_library_version(version, &length);
  std::string mpi(version, static_cast<std::size_t>(std::max(length, 0)));
  mpi = mpi.substr(0, mpi.find_first_of(",\n"));
  char note[256];
  std::snprintf(note, sizeof note, "%s, %ld cores, load average %.2f; %s", model.c_str(),
                sysconf(_SC_NPROCESSORS_ONLN), load, mpi.c_str());
  return note;
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  const size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  const double upper = values[mid];
  if (values.size() % 2 == 1) return upper;
  const double lower = *std::max_element(values.begin(), values.begin() + mid);
  return (lower + upper) / 2;
}

LineFit fit_line(const std::vector<double>& x, const std::vector<double>& y) {
  LineFit fit;
  const size_t n = std::min(x.size(), y.size());
  if (n == 0) return fit;
  double mean_x = 0, mean_y = 0;
  for (size_t i = 0; i < n; ++i) {
    mean_x += x[i];
    mean_y += y[i];
  }
  mean_x /= n;
  mean_y /= n;
  double sxy = 0, sxx = 0;
  for (size_t i = 0; i < n; ++i) {
    sxy += (x[i] - mean_x) * (y[i] - mean_y);
    sxx += (x[i] - mean_x) * (x[i] - mean_x);
  }
  fit.slope = sxx > 0 ? sxy / sxx : 0;
  fit.intercept = mean_y - fit.slope * mean_x;
  return fit;
}

void require_mpi_world(const char* program) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    bsp_abort(
        "%s: MPI is not initialised inside the SPMD section; the raw MPI comparison "
        "needs the MPI world bsp_begin starts\n",
        program);
  }
  int size = 0, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (size != bsp_nprocs() || rank != bsp_pid()) {
    bsp_abort(
        "%s: BSP process %d of %d is MPI rank %d of %d; the raw MPI comparison needs "
        "MPI_COMM_WORLD to hold exactly the BSP processes\n",
        program, bsp_pid(), bsp_nprocs(), rank, size);
  }
}

void max_to_root(std::vector<double>& values) {
  const int count = static_cast<int>(values.size());
  if (bsp_pid() == 0) {
    MPI_Reduce(MPI_IN_PLACE, values.data(), count, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  } else {
    MPI_Reduce(values.data(), nullptr, count, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  }
}

std::vector<double> gather_to_root(double value) {
  std::vector<double> all(bsp_pid() == 0 ? bsp_nprocs() : 0);
  MPI_Gather(&value, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return all;
}

Alternation summarize(std::vector<double> bspg_seconds, std::vector<double> raw_seconds) {
  max_to_root(bspg_seconds);
  max_to_root(raw_seconds);
  Alternation result;
  result.bspg_us = median(bspg_seconds) * 1e6;
  result.raw_us = median(raw_seconds) * 1e6;
  if (!bspg_seconds.empty())
    result.bspg_min_us = *std::min_element(bspg_seconds.begin(), bspg_seconds.end()) * 1e6;
  if (!raw_seconds.empty())
    result.raw_min_us = *std::min_element(raw_seconds.begin(), raw_seconds.end()) * 1e6;
  std::vector<double> ratios;
  for (std::size_t i = 0; i < std::min(bspg_seconds.size(), raw_seconds.size()); ++i)
    if (raw_seconds[i] > 0) ratios.push_back(bspg_seconds[i] / raw_seconds[i]);
  if (!ratios.empty()) {
    std::sort(ratios.begin(), ratios.end());
    const std::size_t last = ratios.size() - 1;
    result.ratio_q1 = ratios[last / 4];
    result.ratio_q3 = ratios[last - last / 4];
  }
  return result;
}

}  // namespace bench
