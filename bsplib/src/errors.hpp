// errors.hpp - how bspg reports misuse: one line "bspg: process P: call: cause" on stderr, printed
// once, then every process stops with a non-zero exit.
#pragma once

namespace bspg {

// A misuse seen by this process alone. Prints and stops the whole job. Processes other than 0
// wait a moment (longer for higher pids) before printing, so that when every process makes the
// same mistake the message appears once: the lowest pid's abort stops the others first.
[[noreturn]] void fail(const char* call, const char* format, ...) __attribute__((format(printf, 2, 3)));

// A misuse every process sees at the same collective point (e.g. processes disagree at a sync).
// Only `reporter` prints; the others wait to be stopped by its abort.
[[noreturn]] void fail_collective(int reporter, const char* call, const char* format, ...)
    __attribute__((format(printf, 3, 4)));

// bsp_abort/bsp_vabort: the user's message, verbatim, then stop everything.
[[noreturn]] void abort_with_user_message(const char* format, __builtin_va_list args);

// This process's id for messages (world rank before bsp_begin, -1 when MPI is not running).
void set_reporting_pid(int pid);

}  // namespace bspg
