// runtime.hpp - the state of one BSP process and the superstep engine (bsp_begin, bsp_sync,
// bsp_end). api.cpp validates the C calls and records them here; sync() moves the data.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "exchange.hpp"
#include "group.hpp"
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
  Runtime(MPI_Comm comm, int pid, int nprocs);

  // A superstep boundary of every process (world group) or of one group's members.
  void sync(SyncCall call) { sync(*world, call); }
  void sync(Group& group, SyncCall call);
  void finish();  // after the final sync of bsp_end: frees MPI resources

  // Collective over all processes: processes of equal color >= 0 form a group. Returns its
  // handle (the same on every process) or -1 for color < 0.
  int split(int color);
  Group* group(int handle) {
    return handle >= 0 && static_cast<std::size_t>(handle) < groups.size() ? groups[static_cast<std::size_t>(handle)].get() : nullptr;
  }

  // Identity.
  MPI_Comm comm;
  int pid;
  int nprocs;
  double start_time;

  // DRMA and BSMP state of the current superstep.
  Registry registry;
  std::vector<ByteBuffer> outbox;               // per destination
  std::vector<std::vector<PendingGet>> gets;    // per server, in request order
  std::vector<std::uint64_t> get_bytes;         // per server
  std::uint32_t tag_nbytes = 0;                 // tag size of messages sent now
  std::int64_t requested_tag_nbytes = -1;       // bsp_set_tagsize this superstep (-1: none)

  // Large puts go straight to a mailbox (see Mailbox) while nothing else went to dst.
  bool try_direct_put(int dst, int slot, std::uint32_t offset, const void* src, std::uint32_t nbytes);
  static constexpr std::uint32_t kDirectPutBytes = 16 * 1024;
  Mailbox mailbox;
  std::vector<std::uint64_t> mailbox_used;  // per destination, this superstep
  bool mailbox_written = false;

  // Messages received at the last sync.
  std::vector<Message> queue;
  std::size_t queue_head = 0;
  std::uint64_t queue_payload_bytes = 0;

  // Subjobs (bsprun's grid path sets BSPG_SUBJOB).
  int subjob = 0;
  std::vector<int> subjob_sizes;
  int subjob_group = -1;

  // groups[0] is the world group; a null entry is a group this process is not in.
  std::vector<std::unique_ptr<Group>> groups;
  Group* world = nullptr;

 private:
  void check_group_superstep(const Group& group) const;
  void deliver(Group& group);  // moves the data of a superstep whose schedule says there is some
  void serve_gets(Group& group, const char* window);
  void apply_puts_and_messages(Group& group, const char* window);
};

// The running process's state: non-null exactly inside the SPMD section.
extern Runtime* g_runtime;
extern Phase g_phase;

// Initialises MPI if nobody has, arranging the MCA settings the library needs.
bool ensure_mpi();

}  // namespace bspg
