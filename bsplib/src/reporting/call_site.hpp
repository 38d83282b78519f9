// call_site.hpp - where in the user's program the failing call was made, for misuse messages:
// the source file and line (with -g) or the function, read with elfutils' libdw.
#pragma once

#include <string>

namespace bspg {

// "at FILE:LINE in FUNCTION", "in FUNCTION" or "": the first frame of this thread's stack
// outside libbspg and bspg's headers, which is the user's call of the BSPlib function that is
// failing. "" when that frame is not the program's (an exit handler run by the C library) or
// nothing is known of it. FILE is relative to the working directory when it lies below it.
//
// Cost: a stack walk and, the first time, loading libdw (dlopen, not linked: a program pays
// nothing until it fails) and reading the program's debug information, some milliseconds. Error
// paths only; not async-signal-safe.
std::string user_call_site();

// The same for a return address recorded earlier (a call whose misuse is found later).
std::string call_site_of(const void* return_address);

}  // namespace bspg
