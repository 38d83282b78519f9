// fuzz_probe_answer.cpp - a host's answer to the probe (over SSH, or through srun on a Slurm
// node) through read_probe_answer and read_probe_script_output. A broken or lying host writes
// what it likes: every answer must be read or refused with a reason, and what is read must be
// within what a real machine can report.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "hosts.h"
#include "probe_answer.h"

using bspg::fuzz::expect;
namespace hosts = bspg::hosts;
namespace detail = bspg::hosts::detail;

namespace {

void check_figures(const hosts::ProbeResult& result) {
  for (double load : {result.load1, result.load5, result.load15})
    expect(std::isfinite(load) && load >= 0 && load <= detail::kMaxLoad, "a possible load");
  expect(result.cores >= 0 && result.cores <= detail::kMaxCores, "a possible core count");
  expect(result.mem_available_kb >= 0 && result.mem_available_kb <= detail::kMaxMemoryKb,
         "a possible memory size");
  expect(result.hostname.size() <= detail::kMaxHostName, "a possible host name");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string output = bspg::fuzz::as_text(data, size);
  for (bool program_checked : {false, true}) {
    hosts::ProbeResult result;
    if (detail::read_probe_answer(output, program_checked, result).empty()) {
      check_figures(result);
      expect(result.cores >= 1 && !result.hostname.empty(), "an accepted answer is whole");
    }
    hosts::ProbeResult script_result;
    hosts::read_probe_script_output(output, program_checked, script_result);
  }
  std::vector<std::string> lines;
  hosts::lines_between(output, "bspg-probe-v2", "bspg-probe-end", lines);
  return 0;
}
