// say.h - bsprun's own lines on stderr.
#pragma once

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "untrusted.h"

namespace bspg::launcher {

// Prints "bsprun: LINE". The line may quote host files, RSL files and hosts' answers, so it is
// shown escaped; it goes out in one write, so that it does not mix with the job's output or with
// a line of another thread (the host monitor's).
inline void say(const std::string& line) {
  const std::string text = "bsprun: " + untrusted::printable(line) + "\n";
  const ssize_t ignored = write(STDERR_FILENO, text.data(), text.size());
  (void)ignored;
}

// Seconds as bsprun's lines say them: to a tenth, without trailing zeros ("30", "2.5").
inline std::string seconds_text(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", std::round(s * 10) / 10);
  return text;
}

// More processes than cores (`where`: "4 processes on this machine's 2 cores", ...): said once,
// since they take turns and a BSP program goes at its slowest process's pace.
inline void say_beyond_the_cores(const std::string& where) {
  say(where + ": they take turns on the cores, and every superstep waits for the slowest " +
      "(--quiet leaves this out)");
}

}  // namespace bspg::launcher
