// group.hpp - a set of processes that synchronise together. The world group holds every process
// (bsp_sync); subjob groups and groups the program makes with bspg_group_split synchronise on
// their own (bspg_group_sync), each with its own communicator, schedule matrix and window.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "exchange.hpp"
#include "outbox.hpp"
#include "schedule.hpp"

namespace bspg {

struct Group {
  Group(MPI_Comm comm_in, std::vector<int> members_in, int rank_in)
      : comm(comm_in),
        members(std::move(members_in)),
        rank(rank_in),
        schedule(static_cast<int>(members.size())),
        row(static_cast<std::size_t>(schedule.row_words()), 0),
        replies(members.size()) {}

  int size() const { return static_cast<int>(members.size()); }

  MPI_Comm comm;
  std::vector<int> members;  // group rank -> global pid
  int rank;                  // this process's rank in the group
  Schedule schedule;
  Exchange exchange;         // opened on first use (collective over the group)
  std::vector<std::uint64_t> row;
  std::vector<ByteBuffer> replies;  // per group rank
};

}  // namespace bspg
