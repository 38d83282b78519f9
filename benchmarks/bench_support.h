// bench_support.h - small helpers shared by bspbench and bspratio: option values, clock,
// statistics, and the link between the BSP processes and MPI_COMM_WORLD that lets both
// programs run raw MPI next to bspg in the same run.
#pragma once

#include <string>
#include <vector>

namespace bench {

// Seconds on a monotonic clock; one clock for bspg and raw MPI alike.
double seconds_now();

// Rank the MPI launcher gave this process (from its environment), 0 when started without
// one. Lets exactly one process print before bsp_begin (help text, option errors).
int launcher_rank();

// Parses a whole number in [lo, hi]; false (value untouched) on anything else.
bool parse_count(const std::string& text, long lo, long hi, long* value);

// "load average X on N cores" when the 1-minute load average exceeds the cores online, so
// that other programs compete with the measurement for the CPUs; "" otherwise.
std::string overload_note();

// Median of the values (mean of the two middle ones for an even count); 0 for none.
double median(std::vector<double> values);

// Least-squares line y = slope * x + intercept.
struct LineFit {
  double slope = 0;
  double intercept = 0;
};
LineFit fit_line(const std::vector<double>& x, const std::vector<double>& y);

// Inside the SPMD section: aborts with a message unless MPI_COMM_WORLD holds exactly the
// BSP processes with rank == bsp_pid(), which the raw MPI comparison relies on.
void require_mpi_world(const char* program);

// Element-wise maximum over all processes, left on process 0 (others keep their own).
// A superstep's time is the time of its slowest process.
void max_to_root(std::vector<double>& values);

// Gathers one value from every process onto process 0 (empty elsewhere).
std::vector<double> gather_to_root(double value);

}  // namespace bench
