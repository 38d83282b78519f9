// bspprof - merges a profiled job's raw records into a table, a trace, a plot and a summary.
// See --help, which prints bspprof(1) (man/pages/bspprof.1.md, rendered at build time).
#include <cstdint>
#include <cstring>
#include <iostream>
#include <limits>
#include <string>

#include "bspprof.h"

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
  bspg::profile::MergeOptions options;
  bool have_dir = false, options_done = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (!options_done && arg.size() > 1 && arg[0] == '-') {
      if (arg == "--") {
        options_done = true;
      } else if (arg == "-h" || arg == "--help") {
        std::cout << bspg::profile::kBspprofManual;
        return 0;
      } else if (arg == "--version") {
        std::cout << "bspprof (bspg) " << BSPG_VERSION << "\n";
        return 0;
      } else if (arg == "--no-plot") {
        options.plot = false;
      } else if (arg == "--quiet") {
        options.summary = false;
      } else if (arg == "--params" || arg.rfind("--params=", 0) == 0) {
        std::string value;
        if (arg == "--params") {
          if (i + 1 >= argc) return usage_error("--params needs a file name");
          value = argv[++i];
        } else {
          value = arg.substr(std::strlen("--params="));
        }
        if (value.empty()) return usage_error("--params needs a file name");
        options.params_file = value;
      } else if (arg == "--trace-steps" || arg.rfind("--trace-steps=", 0) == 0) {
        std::string value;
        if (arg == "--trace-steps") {
          if (i + 1 >= argc) return usage_error("--trace-steps needs a number of steps");
          value = argv[++i];
        } else {
          value = arg.substr(std::strlen("--trace-steps="));
        }
        if (!parse_count(value, options.trace_steps))
          return usage_error("--trace-steps needs a whole number >= 0 (0: all steps), not '" +
                             value + "'");
      } else {
        return usage_error("unknown option '" + arg + "'");
      }
      continue;
    }
    if (have_dir) return usage_error("one profile directory only, not also '" + arg + "'");
    options.dir = arg;
    have_dir = true;
  }
  if (!have_dir || options.dir.empty()) return usage_error("which profile directory?");
  return bspg::profile::merge_profile(options, std::cerr, std::cerr);
}
