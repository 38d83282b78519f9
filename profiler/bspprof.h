// bspprof.h - the offline part of bspg's superstep profiler.
//
// A profiled job (bsprun --profile DIR, or BSPG_PROFILE=DIR under mpirun) leaves one raw file per
// process, SPMD section and attempt in DIR/raw (raw_format.h). merge_profile reads them and
// writes, into DIR:
//
//   supersteps.csv  one row per step and process (columns below)
//   profile.json    Chrome trace events (Perfetto, chrome://tracing): a track per process with
//                   its compute, wait and communication slices, and a mark at every restart;
//                   only the first MergeOptions::trace_steps steps (default 100000, some 50 MB
//                   per process), with the marks of the restarts before one of them, so that
//                   viewers can open it (the other outputs cover every step; the summary says
//                   when the trace was cut)
//   profile.dat     the critical process of every step (the last to call the sync), for the plot
//                   (means of bins of steps when there are more than kPlotBars steps)
//   profile.waits.dat  each process's wait per step as a share of the step, for the plot's heat
//                   map (means of cells of at most 400 steps by 256 processes across)
//   profile.gp      the gnuplot script drawing profile.png from those two
//   profile.png     that plot (only when gnuplot runs)
//   traffic.csv     the bytes and messages each process sent each other over the profile
//   traffic.gp      the gnuplot script drawing traffic.png, the who-to-whom matrix, from it
//   traffic.png     that picture (only when gnuplot runs and some process sent another data)
//
// A step is one sync as all its processes saw it: the processes' records that share attempt,
// section, superstep, group, group_first and group_step (the groups one bspg_group_split makes
// share a handle; each record names its group's lowest pid, group_first, which tells them
// apart). For every process in a step:
//   compute_s  its call of this sync minus the return of its previous sync (or of bsp_begin)
//   sync_s     return minus call
//   wait_s     how long it waited for the step's last process to call the sync (latest call
//              minus its own call, within [0, sync_s]); comm_s = sync_s - wait_s
//   bytes_out  payload it put and sent, plus what other processes got from it
//   bytes_in   payload it got, plus what others put and sent to it
//   messages   likewise: puts and sends count at the sender, a get counts as one message from
//              the process read to the getter
//   h_bytes    the step's h-relation: the largest bytes_out or bytes_in of its processes
// Traffic of a process with itself counts both out and in: it is what the program asked bspg
// to move, and bspg moves it through the same machinery at the sync.
//
// Row order of supersteps.csv: by attempt, section and superstep; within a superstep its group
// syncs (by group_step, group, then group_first) come before the world sync that ends it;
// within a step, by pid. That is the order in which steps complete. start_s is measured from
// the earliest bsp_begin of the first attempt.
//
// Memory stays bounded for long jobs: the files of one section are read in lockstep, one world
// superstep at a time, and every output is written as the steps come.
//
// Free of MPI: bsprun links it to merge a profile when the job ends.
#ifndef BSPG_PROFILER_BSPPROF_H
#define BSPG_PROFILER_BSPPROF_H

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>

namespace bspg::profile {

// Beyond this many steps the plot shows means of bins of consecutive steps, so that gnuplot
// stays quick however long the job ran.
inline constexpr std::size_t kPlotBars = 2000;

struct MergeOptions {
  std::string dir;          // the profile directory: reads dir/raw, writes into dir
  std::string params_file;  // bspbench's results, for the model's g and l; empty: bspbench.dat
                            // in the current directory
  bool plot = true;         // run gnuplot (profile.dat and profile.gp are written regardless)
  bool summary = true;      // print the summary
  // profile.json holds the slices of the first trace_steps steps only (in the order of
  // supersteps.csv; about 500 bytes per step and process); 0: every step.
  std::uint64_t trace_steps = 100000;
};

// merge_profile's result, which is also bspprof's exit status.
enum MergeStatus : int {
  kMerged = 0,       // every file written; the plot made unless options.plot was false
  kPlotFailed = 1,   // every file written but profile.png: gnuplot missing or failed
  kUsageError = 2,   // bspprof only: a bad command line
  kNoProfile = 3,    // nothing usable in dir/raw; nothing written
  kCannotWrite = 4,  // an output file could not be written
};

// Merges the profile in options.dir. The summary (under 30 lines: where the time went, the
// costliest and most imbalanced steps, who came last to the syncs, restarts, the files) goes to
// summary; every problem (unusable or damaged files, unwritable outputs, gnuplot's complaints)
// goes to errors as it is met, naming the file.
int merge_profile(const MergeOptions& options, std::ostream& summary, std::ostream& errors);

}  // namespace bspg::profile

#endif
