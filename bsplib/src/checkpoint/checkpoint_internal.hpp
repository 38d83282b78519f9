// checkpoint_internal.hpp - what checkpoint/'s files share; nothing outside checkpoint/ uses it.
// Each group names the file that defines it, where its comments are; defaults are given here.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "behind.hpp"
#include "checkpoint.hpp"
#include "write_all.h"

namespace bspg::checkpoint_internal {

using Problem = Checkpoints::Problem;

constexpr std::uint64_t kChunkBytes = std::uint64_t{8} << 20;  // shard traffic and file I/O

// ---- plan.cpp: run ids and this host -----------------------------------------------------------

std::string hex_id(std::uint64_t id);
std::uint64_t id_value(const std::string& hex);
std::string host_name();
// Copies of each shard (bsprun --copies, BSPG_COPIES). groups[q] names process q's group (its
// subjob where there are several, else its host), hosts[q] its host (the host's lowest pid).
// Each process's copies go to the next groups, cyclically, one in each, to the process at the
// same index there (modulo the group's size), or the next member on a host that holds no shard or
// copy of that process yet, and only then other hosts of its own group: no host holds two of one
// shard (they would share a file name), so any `copies` hosts lost at once leave a shard or a
// copy of every process. With one host, the next process keeps the one copy there; more would
// share its directory and add nothing.
std::size_t distinct_groups(const std::vector<int>& keys);
// holders[pid]: who keep pid's copies (fewer than `copies` where the hosts run out: at most
// hosts - 1). O(p copies) time.
std::vector<std::vector<int>> copy_holders(const std::vector<int>& groups,
                                           const std::vector<int>& hosts, int copies);

// ---- directory.cpp: files of the checkpoint directory, never through a symbolic link ----------

Problem problem_at(const std::string& file);
int open_regular(int dir, const std::string& name, std::string& why);
std::string first_line(int dir, const std::string& name, std::size_t limit = 256);
std::vector<std::string> entries(int dir);
long long checkpoint_number(const std::string& name);
void remove_entry(int dir, const std::string& name, int depth = 0);
void remove_checkpoints_before(int dir, std::uint64_t n);  // every c<M> with M < n

// ---- checkpoint.cpp: collectives on the checkpoints' communicator, waiting idle ----------------

std::uint64_t all_min(std::uint64_t mine, MPI_Comm comm);
void all_min(std::uint64_t* words, int count, MPI_Comm comm);  // each word's, in place
void idle_barrier(MPI_Comm comm);
void idle_broadcast(void* data, int bytes, int root, MPI_Comm comm);

}  // namespace bspg::checkpoint_internal
