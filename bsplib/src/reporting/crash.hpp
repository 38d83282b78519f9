// crash.hpp - a process that crashes stops the job with one line naming it and the signal.
#pragma once

namespace bspg {

// Once MPI runs (its own handlers are installed by then).
void install_crash_handlers();

}  // namespace bspg
