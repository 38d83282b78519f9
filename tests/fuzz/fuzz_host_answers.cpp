// fuzz_host_answers.cpp - the other answers bsprun reads from hosts and from Slurm's tools: the
// checkpoint survey (read_survey), the clean-up's report (read_cleanup_output), exit notes
// (read_exit_notes), the job's processes (read_job_processes), sinfo's node list
// (read_sinfo_nodes), srun's labelled output (split_probe_output) and SLURM_JOB_CPUS_PER_NODE
// (expand_cpus_per_node). A host may answer anything; each reader must take what it understands
// and skip or refuse the rest, throwing only what it says it throws.
#include <cstddef>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "checkpoints.h"
#include "cleanup.h"
#include "exit_notes.h"
#include "frozen.h"
#include "fuzz_support.h"
#include "slurm.h"

using bspg::fuzz::expect;
namespace launcher = bspg::launcher;

namespace {

void read_survey(const std::string& output) {
  launcher::Holdings holdings;
  holdings.host = "fuzz";
  launcher::read_survey(output, holdings);
  expect(holdings.skipped.size() <= 20, "at most 20 skipped lines are kept");
  for (const auto& [run_checkpoint, marker] : holdings.complete)
    expect(marker.nprocs > 0 && run_checkpoint.second > 0, "a marker names processes");
  for (const launcher::HeldFile& file : holdings.files) {
    expect(file.pid >= 0 && file.checkpoint > 0, "a held file names a process and checkpoint");
    file.name();
  }
  // What bsprun does next with the holdings of a host.
  launcher::choose_checkpoint({holdings}, 4);
}

void read_job_processes(const std::string& output) {
  bool complete = false;
  for (const launcher::JobProcess& process : launcher::read_job_processes(output, complete))
    expect(process.pid >= 0 && process.rank >= -1, "a process has a pid and a rank or none");
}

void read_slurm(const std::string& text) {
  try {
    launcher::read_sinfo_nodes(text);
  } catch (const std::invalid_argument&) {
  }
  std::string other;
  launcher::split_probe_output(text, other);
  try {
    const std::vector<int> counts = launcher::expand_cpus_per_node(text);
    expect(!counts.empty() && counts.size() <= 1000000, "a bounded list of CPU counts");
  } catch (const std::invalid_argument&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string output = bspg::fuzz::as_text(data, size);
  read_survey(output);
  launcher::read_cleanup_output("fuzz", output);
  launcher::ExitNoteSet notes;
  launcher::read_exit_notes(output, notes);
  notes.not_ended();
  notes.ended_with_failure();
  read_job_processes(output);
  read_slurm(output);
  return 0;
}
