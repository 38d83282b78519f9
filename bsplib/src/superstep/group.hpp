// group.hpp - a set of processes that synchronise together. The world group holds every process
// (bsp_sync); subjob groups and groups the program makes with bspg_group_split synchronise on
// their own (bspg_group_sync), each with its own communicator and transport.
#pragma once

#include <mpi.h>

#include <vector>

#include "transport.hpp"

namespace bspg {

struct Group {
  // members: global pids in ascending order; rank: ours among them; nprocs: of the world.
  Group(MPI_Comm comm_in, std::vector<int> members_in, int rank_in, int nprocs)
      : comm(comm_in),
        members(std::move(members_in)),
        rank(rank_in),
        transport(comm_in, members, rank_in) {
    if (static_cast<int>(members.size()) == nprocs) return;  // every process: rank == pid
    rank_of_pid.assign(static_cast<std::size_t>(nprocs), -1);
    for (std::size_t r = 0; r < members.size(); ++r)
      rank_of_pid[static_cast<std::size_t>(members[r])] = static_cast<int>(r);
  }

  int size() const { return static_cast<int>(members.size()); }
  // The group rank of a global pid, or -1 for a process outside the group.
  int rank_of(int pid) const {
    return rank_of_pid.empty() ? pid : rank_of_pid[static_cast<std::size_t>(pid)];
  }

  MPI_Comm comm;
  std::vector<int> members;      // group rank -> global pid
  int rank;                      // this process's rank in the group
  Transport transport;           // opened at the group's first sync (collective over the group)
  std::vector<int> rank_of_pid;  // empty for a group of every process
};

}  // namespace bspg
