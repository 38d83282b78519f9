// test_support.h - what the profiler tests share: raw files written as a profiled process
// writes them, a scratch directory, the CSV read back, and the merge or the tool run on it.
#ifndef BSPG_TESTS_PROFILER_TEST_SUPPORT_H
#define BSPG_TESTS_PROFILER_TEST_SUPPORT_H

#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "bspprof.h"
#include "raw_format.h"

namespace bspprof_test {

using bspg::profile::FileHeader;
using bspg::profile::PeerCount;
using bspg::profile::SyncKind;
using bspg::profile::SyncRecord;

// A fresh directory, removed with everything in it at the end of the test.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }
  std::string raw() const { return path_ + "/raw"; }  // made by the constructor

 private:
  std::string path_;
};

// One process's raw file, written record by record.
class RawWriter {
 public:
  // Writes the header; edit may change it first (to damage it).
  RawWriter(const std::string& profile_dir, int attempt, int section, int pid, int nprocs,
            double begin_s, const std::string& host = "",
            const std::function<void(FileHeader&)>& edit = {});
  ~RawWriter();
  RawWriter(const RawWriter&) = delete;
  RawWriter& operator=(const RawWriter&) = delete;

  // group_first: the lowest pid of the group of a group sync, -1 for the world.
  void sync(SyncKind kind, std::int32_t group, std::int32_t group_first, std::uint64_t superstep,
            std::uint32_t group_step, double call_s, double return_s, std::uint32_t group_size,
            const std::vector<PeerCount>& peers = {});
  // A world sync of all nprocs processes.
  void world(std::uint64_t superstep, double call_s, double return_s,
             const std::vector<PeerCount>& peers = {}, SyncKind kind = SyncKind::Sync);
  void bytes(const void* data, std::size_t size);  // anything, to damage the file
  void close();
  const std::string& path() const { return path_; }

 private:
  std::FILE* file_ = nullptr;
  std::string path_;
  int nprocs_;
};

// The name bspg gives a raw file.
std::string raw_name(int attempt, int section, int pid);
std::string host_name(int pid);  // "node<pid>"

PeerCount put(int peer, std::uint64_t bytes, std::uint32_t messages = 1);
PeerCount get(int peer, std::uint64_t bytes, std::uint32_t messages = 1);
PeerCount send(int peer, std::uint64_t bytes, std::uint32_t messages = 1);

struct Csv {
  std::vector<std::string> columns;
  std::vector<std::map<std::string, std::string>> rows;
  double number(std::size_t row, const std::string& column) const;
  std::string text(std::size_t row, const std::string& column) const;
};
Csv read_csv(const std::string& path);

struct MergeResult {
  int status = -1;
  std::string summary;
  std::string errors;
};
// merge_profile on dir, without gnuplot unless plot, with model parameters from params and the
// first trace_steps steps in the trace (0: all).
MergeResult merge(const std::string& dir, bool plot = false,
                  const std::string& params = "/nonexistent/bspbench.dat",
                  std::uint64_t trace_steps = bspg::profile::MergeOptions{}.trace_steps);

struct ToolResult {
  int status = -1;
  std::string output;  // standard output and error together
};
ToolResult run_tool(const std::vector<std::string>& args);

bool gnuplot_available();
std::string read_file(const std::string& path);
bool file_exists(const std::string& path);
// The sample of bspbench's results in tests/profiler/data.
std::string sample_params();

}  // namespace bspprof_test

#endif
