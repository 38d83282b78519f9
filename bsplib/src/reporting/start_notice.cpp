// start_notice.cpp - tells bsprun that a process of the job has started. bsprun counts these
// lines (it sets BSPG_SAY_STARTED=1 and takes them out of the output): text its starter prints
// before every process has started, followed by no start within a bound, is the starter's
// failure to start the job, said in one line instead of a wait without end (bsprun(1)).
//
// A library constructor, so that the line comes when the process begins, before anything the
// program prints. Processes a master's bsp_begin spawns are not counted (bsprun started only the
// master), and a program this process starts in turn does not inherit the request.
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "write_all.h"

namespace {

__attribute__((constructor)) void say_started() {
  const char* asked = std::getenv("BSPG_SAY_STARTED");
  if (asked == nullptr) return;
  const bool say = std::strcmp(asked, "1") == 0 && std::getenv("BSPG_SPAWNED_BY_MASTER") == nullptr;
  unsetenv("BSPG_SAY_STARTED");
  // One write: the starter passes it on as one piece, not in the middle of another line.
  if (say) bspg::write_all(STDERR_FILENO, "bspg: process started\n");
}

}  // namespace
