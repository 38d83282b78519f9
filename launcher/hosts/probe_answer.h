// probe_answer.h - internal: the command a probe runs on a host, and how its answer is read.
//
// A host's answer is untrusted: every figure is checked against what a real machine can report,
// and anything else is refused with the host's own words (made printable), so that a broken or
// lying host can neither win the ranking nor garble the terminal.
#pragma once

#include <string>

#include "hosts.h"

namespace bspg::hosts::detail {

// A Linux load average counts runnable and waiting tasks, and Linux has at most 2^22 of those
// (PID_MAX_LIMIT); more, like a negative, NaN or infinite load, is impossible.
constexpr double kMaxLoad = 4194304;
// Linux is built for at most 8192 CPUs (NR_CPUS on x86-64 and powerpc); 65536 leaves room.
constexpr int kMaxCores = 65536;
// 2^42 kB = 4 PiB: all the memory that 52-bit physical addresses (x86-64, arm64) can reach.
constexpr long long kMaxMemoryKb = 1LL << 42;
// HOST_NAME_MAX on Linux.
constexpr size_t kMaxHostName = 64;

// The command line for the host's login shell. It prints the figures between markers, checks
// opt.program (absolute path) when given, and cannot outlive the probe: it is killed when its
// stdin (the SSH channel) closes, and after ceil(timeout) + 1 s at the latest where `timeout`
// exists.
std::string probe_command(const ProbeOptions& opt);

// Reads the command's output into `result` (hostname, cores, loads, memory, program status).
// Returns "" or the problem, e.g. "impossible load average '-100' in /proc/loadavg".
std::string read_probe_answer(const std::string& output, bool program_checked, ProbeResult& result);

}  // namespace bspg::hosts::detail
