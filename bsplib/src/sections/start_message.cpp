// start_message.cpp - the start message's exchange: one broadcast that the waiting processes poll
// gently.
#include "start_message.hpp"

#include <time.h>
#include <unistd.h>

#include <cstdio>

#include "errors.hpp"
#include "lost_peers.hpp"

namespace bspg {

namespace {

constexpr int kHeldTag = 0x6b01;  // point-to-point on the start messages' communicator: only here

void pause_half_ms() {
  const timespec pause{0, 500000};
  nanosleep(&pause, nullptr);
}

double seconds_now() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

}  // namespace

// Process 0 sends, the others receive. Those waiting may wait long (process 0 runs main, or the
// sequential part between sections), so they poll gently instead of spinning on a core.
StartMessage exchange_start_message(MPI_Comm comm, StartMessage mine) {
  MPI_Request request;
  MPI_Ibcast(&mine, static_cast<int>(sizeof mine), MPI_BYTE, 0, comm, &request);
  int done = 0;
  for (long polls = 0;; ++polls) {
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) return mine;
    lost_peers::check();
    if (polls > 2000) pause_half_ms();
  }
}

void hold_waiting_processes(MPI_Comm comm, int status) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  if (size < 2) return;
  exchange_start_message(comm, {kHold, status, {}});
  const double deadline = seconds_now() + 2.0;
  for (int held = 1; held < size; ++held) {
    MPI_Request request;
    MPI_Irecv(nullptr, 0, MPI_BYTE, MPI_ANY_SOURCE, kHeldTag, comm, &request);
    int done = 0;
    while (!done && seconds_now() < deadline) {
      MPI_Test(&request, &done, MPI_STATUS_IGNORE);
      if (!done) pause_half_ms();
    }
    if (!done) return;  // the abort comes anyway; the request dies with the process
  }
}

void hold_until_stopped(MPI_Comm comm, const StartMessage& hold) {
  std::fflush(stdout);
  std::fflush(stderr);
  MPI_Send(nullptr, 0, MPI_BYTE, 0, kHeldTag, comm);
  // Rank 0's abort ends this process too, except where it does not reach processes a master
  // spawned (Open MPI 5): those stop themselves, with the same status, once it has had its turn.
  const double deadline = seconds_now() + 0.5;
  while (seconds_now() < deadline) pause_half_ms();
  stop_job(hold.value);
}

}  // namespace bspg
