// bspprof - merges a profiled job's raw records into a table, a trace, a plot and a summary.
// See --help, which prints bspprof(1) (man/pages/bspprof.1.md, rendered at build time).
#include <cstdint>
#include <iostream>
#include <limits>
#include <string>

#include "bspprof.h"
#include "command_line.h"

namespace bspg::profile {
extern const char kBspprofManual[];
}

namespace {

constexpr const char* kProgram = "bspprof";

int usage_error(const std::string& message) {
  std::cerr << kProgram << ": " << message << "\n"
            << "Usage: bspprof [--params FILE] [--trace-steps N] [--no-plot] [--quiet] DIR\n"
            << "Try 'bspprof --help' for more information.\n";
  return bspg::profile::kUsageError;
}

// A whole number >= 0, in decimal digits only (no sign, no spaces); false if not one or too
// large.
bool parse_count(const std::string& text, std::uint64_t& value) {
  if (text.empty()) return false;
  std::uint64_t n = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return false;
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (n > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) return false;
    n = n * 10 + digit;
  }
  value = n;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  namespace cli = bspg::command_line;
  enum { kHelp, kVersion, kNoPlot, kQuiet, kParams, kTraceSteps };  // in the order below
  cli::Reader reader(argc, argv,
                     {{"help", false, 'h', ""},
                      {"version", false, 0, ""},
                      {"no-plot", false, 0, ""},
                      {"quiet", false, 0, ""},
                      {"params", true, 0, "--params needs a file name"},
                      {"trace-steps", true, 0, "--trace-steps needs a number of steps"}});
  bspg::profile::MergeOptions options;
  bool have_dir = false;
  for (cli::Step step; (step = reader.next()).kind != cli::Step::kEnd;) {
    if (step.kind == cli::Step::kError) return usage_error(step.text);
    if (step.kind == cli::Step::kOperand) {
      if (have_dir) return usage_error("one profile directory only, not also '" + step.text + "'");
      options.dir = step.text;
      have_dir = true;
      continue;
    }
    const std::string& value = step.text;
    switch (step.option) {
      case kHelp:
        std::cout << bspg::profile::kBspprofManual;
        return 0;
      case kVersion:
        std::cout << "bspprof (bspg) " << BSPG_VERSION << "\n";
        return 0;
      case kNoPlot:
        options.plot = false;
        break;
      case kQuiet:
        options.summary = false;
        break;
      case kParams:
        if (value.empty()) return usage_error("--params needs a file name");
        options.params_file = value;
        break;
      case kTraceSteps:
        if (!parse_count(value, options.trace_steps))
          return usage_error("--trace-steps needs a whole number >= 0 (0: all steps), not '" +
                             value + "'");
        break;
    }
  }
  if (!have_dir || options.dir.empty()) return usage_error("which profile directory?");
  return bspg::profile::merge_profile(options, std::cerr, std::cerr);
}
