// command_line.cpp - see command_line.h.
#include "command_line.h"

#include <algorithm>

namespace bspg::command_line {
namespace {

// getopt_long returns this plus the index for a long option: apart from every letter.
constexpr int kLongCode = 256;

}  // namespace

Reader::Reader(int argc, char** argv, std::vector<Option> options)
    : argc_(argc), argv_(argv), options_(std::move(options)) {
  // '-': operands come back in order (code 1) whatever POSIXLY_CORRECT says, so that the tool
  // sees them where they stand; ':': a missing value is told apart from an unknown option.
  letters_ = "-:";
  for (std::size_t i = 0; i < options_.size(); ++i) {
    const Option& o = options_[i];
    table_.push_back({o.name.c_str(), o.takes_value ? required_argument : no_argument, nullptr,
                      kLongCode + static_cast<int>(i)});
    if (o.letter != 0) letters_ += std::string(1, o.letter) + (o.takes_value ? ":" : "");
  }
  table_.push_back({nullptr, 0, nullptr, 0});
  optind = 0;  // 0, not 1: getopt_long starts afresh (another Reader may have stopped midway)
  opterr = 0;  // the messages are ours
}

int Reader::option_of(int code) const {
  if (code >= kLongCode && code < kLongCode + static_cast<int>(options_.size()))
    return code - kLongCode;
  for (std::size_t i = 0; i < options_.size(); ++i)
    if (options_[i].letter != 0 && options_[i].letter == code) return static_cast<int>(i);
  return -1;
}

std::string Reader::misspelling(const std::string& word, std::size_t index) const {
  const Option& o = options_[index];
  if (word.rfind("--", 0) == 0) {
    if (word.substr(2, word.find('=') - 2) == o.name) return "";
    return "unknown option '" + word + "'; did you mean --" + o.name + "?";
  }
  // -c alone, or -cVALUE for an option with a value; "-hq" and "-h=1" are not options.
  if (word.size() == 2 || o.takes_value) return "";
  return "unknown option '" + word + "'";
}

Step Reader::next() {
  if (failed_) return {};
  if (operands_from_ > 0) {
    if (operands_from_ >= argc_) return {};
    return {Step::kOperand, 0, argv_[operands_from_++]};
  }
  // Short options stand alone (misspelling refuses the rest), so every call starts at a whole
  // argument: argv_[at] is the one read.
  const int at = std::max(optind, 1);
  const int code = getopt_long(argc_, argv_, letters_.c_str(), table_.data(), nullptr);
  if (code == -1) {
    // The end, or "--": what follows it is operands, never options.
    if (optind >= argc_) return {};
    operands_from_ = optind;
    return next();
  }
  if (code == 1) return {Step::kOperand, 0, optarg};
  const std::string word = at < argc_ ? argv_[at] : "";
  const int index = option_of(code == '?' || code == ':' ? optopt : code);
  if (index < 0) return error("unknown option '" + word + "'");
  const auto i = static_cast<std::size_t>(index);
  if (const std::string wrong = misspelling(word, i); !wrong.empty()) return error(wrong);
  if (code == ':') {
    const Option& o = options_[i];
    return error(o.missing.empty() ? "option --" + o.name + " needs a value" : o.missing);
  }
  if (code == '?') return error("option --" + options_[i].name + " takes no value");
  return {Step::kOption, i, optarg != nullptr ? optarg : ""};
}

}  // namespace bspg::command_line
