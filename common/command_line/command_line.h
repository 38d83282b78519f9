// command_line.h - the long options of bspg's tools (bspprof, the benchmarks), read by glibc's
// getopt_long with the project's rules on top: names are written in full (getopt_long would take
// an unambiguous start, "--rep" for "--reps"), short options stand alone ("-h", never "-hq"),
// and every problem is one message naming the argument, for the tool to print.
//
// Forms: --name, --name VALUE, --name=VALUE, -c, -c VALUE, -cVALUE. Options and operands may
// come in any order; "--" ends the options. getopt_long keeps its state in globals: one Reader
// at a time.
#ifndef BSPG_COMMON_COMMAND_LINE_H
#define BSPG_COMMON_COMMAND_LINE_H

#include <getopt.h>

#include <cstddef>
#include <string>
#include <vector>

namespace bspg::command_line {

struct Option {
  std::string name;          // the long name, without "--"
  bool takes_value = false;  // one value, required
  char letter = 0;           // also -letter; 0: none
  std::string missing;       // the message for a missing value; "": "option --NAME needs a value"
};

// One argument (with its value) as next() read it.
struct Step {
  enum Kind { kOption, kOperand, kEnd, kError };
  Kind kind = kEnd;
  std::size_t option = 0;  // kOption: which one (index into the options given to Reader)
  std::string text;        // kOption: its value ("" for a flag); kOperand: the argument;
                           // kError: the message
};

class Reader {
 public:
  Reader(int argc, char** argv, std::vector<Option> options);
  // The next option or operand; kEnd after the last, kError (then stop) at a bad argument:
  //   unknown option 'ARG'                     no such option, or several start so
  //   unknown option 'ARG'; did you mean --N?  the start of --N only: names are written in full
  //   option --NAME takes no value             a flag given as --NAME=VALUE
  //   Option::missing                          no value after the last argument
  Step next();

 private:
  Step error(const std::string& message) {
    failed_ = true;
    return {Step::kError, 0, message};
  }
  // Which option getopt_long's code (its return value or optopt) stands for, or -1.
  int option_of(int code) const;
  // The error for `word`, read as options_[index], when it is not that option's exact spelling.
  std::string misspelling(const std::string& word, std::size_t index) const;

  int argc_;
  char** argv_;
  std::vector<Option> options_;
  std::string letters_;               // getopt's optstring
  std::vector<struct option> table_;  // getopt_long's long options, ending with zeros
  int operands_from_ = 0;             // after "--": the next operand; 0 before
  bool failed_ = false;
};

}  // namespace bspg::command_line

#endif
