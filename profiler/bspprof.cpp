// bspprof.cpp - merge_profile: scan, merge into every output at once, plot, summarize.
#include "bspprof.h"

#include <cstdio>
#include <string>

#include "merge.h"
#include "outputs.h"
#include "params.h"
#include "scan.h"

namespace bspg::profile {

int merge_profile(const MergeOptions& options, std::ostream& summary, std::ostream& errors) {
  ProfileScan scan;
  if (!scan_profile(options.dir, scan, errors)) return kNoProfile;
  if (scan.sections.empty()) {
    errors << "bspprof: no readable profile in " << options.dir << "/raw (no usable "
           << "a<attempt>.s<section>.p<pid>.bspprof file)\n";
    return kNoProfile;
  }
  const BspParameters params =
      read_bsp_parameters(options.params_file.empty() ? "bspbench.dat" : options.params_file);

  const std::string& dir = options.dir;
  CsvOutput csv;
  TraceOutput trace;
  PlotOutput plot(params);
  TrafficOutput traffic;
  SummaryStats stats(params, scan);
  if (!csv.open(dir + "/supersteps.csv", scan.origin_s)) {
    errors << "bspprof: " << csv.error() << "\n";
    return kCannotWrite;
  }
  if (!trace.open(dir + "/profile.json", scan, options.trace_steps)) {
    errors << "bspprof: " << trace.error() << "\n";
    return kCannotWrite;
  }
  const bool plot_data = plot.open(dir);
  if (!plot_data) errors << "bspprof: " << plot.error() << "\n";
  // An old plot would not show this profile.
  for (const char* old : {"/profile.png", "/traffic.png", "/traffic.gp"})
    std::remove((dir + old).c_str());

  std::vector<StepSink*> sinks = {&csv, &trace, &stats, &traffic};
  if (plot_data) sinks.push_back(&plot);
  merge_steps(scan, sinks, errors);

  int status = kMerged;
  std::vector<std::string> written, notes;
  // gnuplot draws PICTURE from SCRIPT (with --no-plot, nothing); a failure is said as "no WHAT".
  const auto draw = [&](const char* script, const char* picture, const std::string& what) {
    if (!options.plot) return;
    const std::string problem = run_gnuplot(dir, script, picture, errors);
    if (problem.empty()) {
      written.push_back(dir + "/" + picture);
      return;
    }
    errors << "bspprof: no " << what << ": " << problem << "\n";
    notes.push_back("no " + what + ": " + problem);
    if (status == kMerged) status = kPlotFailed;
  };
  if (csv.close()) {
    written.push_back(dir + "/supersteps.csv");
  } else {
    errors << "bspprof: " << csv.error() << "\n";
    status = kCannotWrite;
  }
  if (trace.close()) {
    written.push_back(dir + "/profile.json");
    if (trace.steps() < stats.steps())
      notes.push_back("trace: the first " + std::to_string(trace.steps()) + " of " +
                      std::to_string(stats.steps()) +
                      " steps in profile.json (bspprof --trace-steps 0 " + dir + " for all)");
  } else {
    errors << "bspprof: " << trace.error() << "\n";
    status = kCannotWrite;
  }
  if (!traffic.write(dir)) {
    errors << "bspprof: " << traffic.error() << "\n";
    status = kCannotWrite;
  } else {
    written.push_back(dir + "/traffic.csv");
    if (traffic.pairs() == 0) {
      notes.push_back("no traffic picture: no process sent another anything");
    } else {
      written.push_back(dir + "/traffic.gp");
      draw("traffic.gp", "traffic.png", "traffic picture");
    }
  }
  if (!plot_data) {
    status = kCannotWrite;
  } else if (stats.steps() == 0) {
    notes.push_back("no plot: no syncs were recorded");
  } else if (!plot.write(stats, scan)) {
    errors << "bspprof: " << plot.error() << "\n";
    status = kCannotWrite;
  } else {
    written.push_back(dir + "/profile.dat");
    written.push_back(dir + "/profile.waits.dat");
    written.push_back(dir + "/profile.gp");
    draw("profile.gp", "profile.png", "plot");
  }
  if (options.summary) stats.print(summary, dir, written, notes);
  return status;
}

}  // namespace bspg::profile
