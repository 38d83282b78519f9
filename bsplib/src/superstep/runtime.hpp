// runtime.hpp - one BSP process: what a superstep means (BSPlib semantics). api.cpp validates the
// C calls and records them here; sync() decides what happens at the end of a superstep, in the
// order the standard requires: every process agrees on the superstep; gets read the memory as it
// was when the superstep ended and their results are written first; then puts land (so where a
// get and a put hit the same memory, the put wins); messages become readable; registrations,
// pops and the tag size take effect. How the bytes move is the transport's business
// (transport.hpp), which knows nothing of this.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "agreement.hpp"
#include "checkpoint.hpp"
#include "group.hpp"
#include "queue.hpp"
#include "records.hpp"
#include "registry.hpp"
#include "stream.hpp"
#include "transport.hpp"

namespace bspg {

enum class Phase { Before, Inside, After };

// The subjob of the job's process `pid` on bsprun's grid path: BSPG_SUBJOB where bsprun set it
// (an app context per subjob), else found from BSPG_SUBJOB_SIZES (one app context for all: sizes
// "4,2" put pids 0-3 in subjob 0, 4-5 in subjob 1, later ones, spares, in subjob 2), else 0.
// Fails in one line, naming the variable, where a value is malformed.
int subjob_of_process(int pid);

class Runtime {
 public:
  Runtime(MPI_Comm comm, int pid, int nprocs);
  ~Runtime();

  // A superstep boundary of every process (world group) or of one group's members.
  void sync(SyncCall call) { sync(*world, call); }
  void sync(Group& group, SyncCall call);
  void finish();  // after the final sync of bsp_end: frees MPI resources

  // Collective over all processes: processes of equal color >= 0 form a group. Returns its
  // handle (the same on every process) or -1 for color < 0.
  int split(int color);
  Group* group(int handle) {
    return handle >= 0 && static_cast<std::size_t>(handle) < groups.size()
               ? groups[static_cast<std::size_t>(handle)].get()
               : nullptr;
  }

  // The operations of a superstep, already validated (slot is the destination's or source's
  // registration). unbuffered: the hp variants, whose memory may be used until the sync.
  void put(int dst, int slot, std::uint32_t offset, const void* src, std::uint32_t nbytes,
           bool unbuffered) {
    if (nbytes < kMailboxBytes) {  // the common case, inline: into the stream
      Peer& p = peer(dst);
      pack_put(p.stream, slot, offset, src, nbytes);
      p.way = Way::Stream;
      return;
    }
    put_large(dst, slot, offset, src, nbytes, unbuffered);
  }
  void get(int server, int slot, std::uint32_t offset, void* dst, std::uint32_t nbytes,
           bool unbuffered);
  void send(int dst, const void* tag, const void* payload, std::uint32_t nbytes,
            bool unbuffered) {  // inline: 100,000 sends a superstep are no rarity
    Peer& p = peer(dst);
    ++p.messages;
    p.message_bytes += nbytes;
    if (unbuffered && nbytes >= kUnbufferedSendBytes)
      pack_message_unbuffered(p.stream, tag, tag_nbytes, payload, nbytes);
    else
      pack_message(p.stream.records(), tag, tag_nbytes, payload, nbytes);
  }
  // Reads the remote registered memory now (bsp_direct_get); blocks until the data is here.
  void direct_get(int server, int slot, std::uint32_t offset, void* dst, std::uint32_t nbytes);

  // Bytes of metadata this process sent and received at its last sync (see Transport).
  std::uint64_t metadata_bytes_last_sync() const { return last_metadata_bytes_; }
  std::uint64_t cross_subjob_bytes_last_sync() const { return last_cross_subjob_bytes_; }

  // Identity.
  MPI_Comm comm;
  int pid;
  int nprocs;
  double start_time;

  Registry registry;
  std::uint32_t tag_nbytes = 0;            // tag size of messages sent now
  std::int64_t requested_tag_nbytes = -1;  // bsp_set_tagsize this superstep (-1: none)
  // The last call of this superstep that takes effect at the sync (bsp_push_reg, bsp_pop_reg,
  // bsp_set_tagsize) and the address it returns to in the program: a misuse of it is found only
  // at the sync, and its message names where it was made (call_site.hpp).
  void note_deferred_call(const char* call, const void* return_address) {
    deferred_call = call;
    deferred_call_return = return_address;
  }
  const char* deferred_call = nullptr;
  const void* deferred_call_return = nullptr;
  // World syncs ended in this SPMD section, counted on from the checkpoint's after bspg_resume:
  // what a checkpoint keeps, and the profile's superstep numbers.
  std::uint64_t world_syncs = 0;

  // Messages received at the last sync.
  MessageQueue queue;

  // Subjobs (bsprun's grid path: subjob_of_process).
  int subjob = 0;
  std::vector<int> subjob_sizes;
  int subjob_group = -1;
  std::vector<int> subjob_of_pid;

  // Superstep checkpoints (bspg_persist, bspg_checkpoint, bspg_resume): made at first use.
  std::unique_ptr<Checkpoints> checkpoints;
  Checkpoints& checkpointing() {
    if (!checkpoints) checkpoints = std::make_unique<Checkpoints>(*this);
    return *checkpoints;
  }

  // groups[0] is the world group; a null entry is a group this process is not in.
  std::vector<std::unique_ptr<Group>> groups;
  Group* world = nullptr;

  // Sizes that choose how a transfer travels (see put and get).
  static constexpr std::uint32_t kMailboxBytes = 16 * 1024;     // puts from here on: mailbox
  static constexpr std::uint32_t kDirectBytes = 64 * 1024;      // and from here: straight
  static constexpr std::uint32_t kHpputMailboxBytes = 1 << 20;  // bsp_hpput: mailbox up to here
  static constexpr std::uint32_t kUnbufferedSendBytes = 1024;   // hpsend payloads left in place
  // A stream's second note: its message count, with this bit when it also holds puts or gets,
  // and this one when it holds gets (its receiver answers it with exactly one reply).
  static constexpr std::uint64_t kNotOnlyMessages = std::uint64_t{1} << 63;
  static constexpr std::uint64_t kHoldsGets = std::uint64_t{1} << 62;
  static constexpr std::uint64_t kNoteFlags = kNotOnlyMessages | kHoldsGets;

 private:
  // How this process's puts to one destination travel this superstep. They are applied there in
  // this order (direct first, then the mailbox, then the stream), so a put may only take a way at
  // least as late as the ways earlier puts to that destination took: overlapping puts of one
  // process land in program order.
  enum class Way : std::uint8_t { None, Direct, Mailbox, Stream };
  struct PendingGet {
    char* dst;
    std::uint32_t nbytes;
  };
  struct Peer {  // what this process sends one destination in the current superstep
    Stream stream;
    std::vector<PendingGet> gets;  // replies this server owes us, in request order
    std::uint64_t mailbox_bytes = 0;
    std::uint64_t messages = 0, message_bytes = 0;  // of the stream (bsp_qsize's, there)
    Way way = Way::None;
    bool touched = false;
  };
  struct DirectPut {
    int dst;
    std::uint64_t remote;
    const char* src;
    std::uint64_t nbytes;
    std::unique_ptr<char[]> copy;  // bsp_put's call-time copy (src points into it)
  };
  struct DirectGet {
    int server;
    std::uint64_t remote;
    char* dst;
    std::uint64_t nbytes;
  };

  Peer& peer(int pid) {
    Peer& p = peers_[static_cast<std::size_t>(pid)];
    if (!p.touched) {
      p.touched = true;
      touched_.push_back(pid);
    }
    return p;
  }
  void put_large(int dst, int slot, std::uint32_t offset, const void* src, std::uint32_t nbytes,
                 bool unbuffered);
  // A large bsp_put to a process of this node whose pages are lent to the receiver
  // (lending.hpp); false where it must go another way.
  bool lend_put(Peer& p, int dst, int slot, std::uint32_t offset, const void* src,
                std::uint32_t nbytes);
  // Writes a lent put's record into p's mailbox region: the receiver reads nbytes_word bytes
  // (with kLiveBit: before any put lands) at `address` in this process.
  void write_lent_record(Peer& p, int dst, int slot, std::uint32_t offset, const void* address,
                         std::uint32_t nbytes_word);
  // A bsp_hpput to a process of this node that reads it where it lies, before any put lands
  // (read_live_puts); false where it must go another way.
  bool read_where_it_lies(Peer& p, int dst, int slot, std::uint32_t offset, const void* src,
                          std::uint32_t nbytes);
  std::uint64_t remote_address(int slot, int pid, std::uint32_t offset) const {
    return reinterpret_cast<std::uintptr_t>(registry.address(slot, pid)) + offset;
  }
  void check_group_superstep(const Group& group) const;
  [[noreturn]] void report_disagreement(Group& group, const Header& mine);
  void exchange_gets(Group& group, const std::vector<Transport::Incoming>& streams);
  void serve_gets(Group& group, const Transport::Incoming& chunk);
  void run_direct_puts();
  void apply_puts_and_messages(Group& group, const std::vector<Transport::Incoming>& streams);
  void apply_registrations();
  void end_superstep();
  void grow_mailbox();  // collective, at bsp_sync: regions as large as this superstep wanted
  // Large bsp_hpputs to this process read where they lie in their senders (records with
  // kLiveBit), with the direct puts: before any other put lands.
  void read_live_puts(const std::vector<Transport::Incoming>& streams);

  std::vector<Peer> peers_;   // per global pid
  std::vector<int> touched_;  // pids whose Peer holds something this superstep
  std::vector<DirectPut> direct_puts_;
  std::vector<DirectGet> direct_gets_;
  bool asks_for_data_ = false;  // a get this superstep
  bool mailbox_written_ = false;
  bool live_reads_ = false;           // a large bsp_hpput read where it lies (read_live_puts)
  std::uint64_t mailbox_wanted_ = 0;  // region bytes a put of this superstep found missing
  Mailbox mailbox_;
  PageLender lender_;       // large puts on this node whose pages are lent, not copied
  ChosenCopies put_copies_;  // the sync's copies of large puts into their destinations
  DirectWindow direct_;
  std::vector<Transport::Outgoing> outgoing_;
  std::deque<Stream> replies_;  // (a deque: a reply under way keeps its place as others are added)
  std::size_t replies_used_ = 0;
  std::uint64_t last_metadata_bytes_ = 0;
  // Bytes of puts to other subjobs that skip the transport's chunks (the one-node mailbox, direct
  // puts), recorded since the last sync; and what the last sync sent across subjobs in all.
  std::uint64_t cross_subjob_recorded_ = 0;
  std::uint64_t last_cross_subjob_bytes_ = 0;
  bool other_subjob(int dst) const {
    return subjob_of_pid[static_cast<std::size_t>(dst)] !=
           subjob_of_pid[static_cast<std::size_t>(pid)];
  }
};

// The running process's state: non-null exactly inside the SPMD section.
extern Runtime* g_runtime;
extern Phase g_phase;

// Initialises MPI if nobody has, arranging the MCA settings the library needs.
bool ensure_mpi();

}  // namespace bspg
