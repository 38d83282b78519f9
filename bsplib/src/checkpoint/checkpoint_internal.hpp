// checkpoint_internal.hpp - what checkpoint/'s files share; nothing outside checkpoint/ uses it.
// Each group names the file that defines it, where its comments are; defaults are given here.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "checkpoint.hpp"
#include "write_all.h"

namespace bspg::checkpoint_internal {

using Problem = Checkpoints::Problem;

constexpr std::uint64_t kChunkBytes = std::uint64_t{8} << 20;  // shard traffic and file I/O

// ---- plan.cpp: run ids and this host -----------------------------------------------------------

std::string hex_id(std::uint64_t id);
std::uint64_t id_value(const std::string& hex);
std::string host_name();

// ---- directory.cpp: files of the checkpoint directory, never through a symbolic link ----------

Problem problem_at(const std::string& file);
int open_regular(int dir, const std::string& name, std::string& why);
std::string first_line(int dir, const std::string& name, std::size_t limit = 256);
std::vector<std::string> entries(int dir);
long long checkpoint_number(const std::string& name);
void remove_entry(int dir, const std::string& name, int depth = 0);

// ---- checkpoint.cpp: collectives on the checkpoints' communicator, waiting idle ----------------

std::uint64_t all_min(std::uint64_t mine, MPI_Comm comm);
void idle_barrier(MPI_Comm comm);
void idle_broadcast(void* data, int bytes, int root, MPI_Comm comm);

}  // namespace bspg::checkpoint_internal
