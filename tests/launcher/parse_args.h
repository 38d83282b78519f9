// parse_args.h - bsprun's command-line parser driven from a test: the options of a command line
// given as words (without "bsprun"), or the usage error it is refused with.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "options.h"

namespace bspg::launcher::test_cli {

inline Options parse(std::vector<std::string> args) {
  args.insert(args.begin(), "bsprun");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  return parse_options(static_cast<int>(argv.size()), argv.data());
}

// The usage error parse() throws for args, or "no error".
inline std::string message(std::vector<std::string> args) {
  try {
    parse(std::move(args));
  } catch (const UsageError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace bspg::launcher::test_cli
