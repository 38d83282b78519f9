// runtime.hpp - the state of one BSP process and the superstep engine (bsp_begin, bsp_sync,
// bsp_end). api.cpp validates the C calls and records them here; sync() moves the data.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "exchange.hpp"
#include "outbox.hpp"
#include "registry.hpp"
#include "schedule.hpp"

namespace bspg {

enum class Phase { Before, Inside, After };

struct Message {
  const char* tag;      // points into the receive window: valid until the next sync
  const char* payload;
  std::uint32_t tag_nbytes;
  std::uint32_t payload_nbytes;
};

struct PendingGet {
  char* dst;
  std::uint32_t nbytes;
};

class Runtime {
 public:
  Runtime(MPI_Comm comm, int pid, int nprocs, bool owns_mpi);

  void sync(SyncCall call);
  void finish();  // after the final sync of bsp_end: frees MPI resources

  // Identity.
  MPI_Comm comm;
  int pid;
  int nprocs;
  bool owns_mpi;  // bspg called MPI_Init, so bsp_end finalizes
  double start_time;

  // DRMA and BSMP state of the current superstep.
  Registry registry;
  std::vector<ByteBuffer> outbox;               // per destination
  std::vector<std::vector<PendingGet>> gets;    // per server, in request order
  std::vector<std::uint64_t> get_bytes;         // per server
  std::uint32_t tag_nbytes = 0;                 // tag size of messages sent now
  std::int64_t requested_tag_nbytes = -1;       // bsp_set_tagsize this superstep (-1: none)

  // Messages received at the last sync.
  std::vector<Message> queue;
  std::size_t queue_head = 0;
  std::uint64_t queue_payload_bytes = 0;

  // Subjobs (bsprun's grid path sets BSPG_SUBJOB).
  int subjob = 0;
  std::vector<int> subjob_sizes;

 private:
  void deliver();  // moves the data of a superstep whose schedule says there is some
  void serve_gets(const char* window);
  void apply_puts_and_messages(const char* window);

  Schedule schedule_;
  Exchange exchange_;
  std::vector<ByteBuffer> replies_;  // per requester
  std::vector<std::uint64_t> row_;
};

// The running process's state: non-null exactly inside the SPMD section.
extern Runtime* g_runtime;
extern Phase g_phase;

// Initialises MPI if nobody has, arranging the MCA settings the library needs.
bool ensure_mpi();

}  // namespace bspg
