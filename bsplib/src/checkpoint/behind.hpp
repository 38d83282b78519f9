// behind.hpp - a checkpoint's disk copy written behind the job (behind.cpp): what its thread
// holds. Only checkpoint/ uses it (through checkpoint_internal.hpp).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "checkpoint.hpp"

namespace bspg {

// What the thread writes: its own descriptors (duplicates: a recovery may drop the in-memory
// files, or close the directory, while it runs) and names. It makes no MPI call.
struct Checkpoints::DiskWrite {
  std::uint64_t n = 0;
  std::uint64_t kept = 0;  // the checkpoint on disk before it, said where it fails
  int dir = -1;            // the checkpoint directory
  std::string path;        // its name, for messages: DIRECTORY/c<n>
  std::vector<std::pair<std::string, int>> files;  // final name in c<n>, in-memory file
  std::string marker_name, marker;                 // complete-<pid> and its line
  std::uint64_t remove_before = 0;                 // the checkpoints before it go first (0: none)
  std::atomic<bool> cancel{false};
  Problem problem;  // the first one; read after the join
  std::thread thread;

  DiskWrite() = default;
  DiskWrite(const DiskWrite&) = delete;
  DiskWrite& operator=(const DiskWrite&) = delete;
  ~DiskWrite();
  // The thread's work. Stops early, leaving .part files (never counted), when cancelled.
  void run();

 private:
  void note(const std::string& file);
  bool copy_out(int at, const std::string& final_name, int from, std::vector<char>& buffer);
  void write_marker(int at);
};

}  // namespace bspg
