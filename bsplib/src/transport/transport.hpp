// transport.hpp - how the bytes of a superstep move: the engine under the BSPlib semantics
// (runtime.hpp decides what a superstep means; nothing here knows about puts, gets or messages).
//
// A Transport serves one group of processes (the world, a subjob, a bspg group). A sync is one or
// more rounds. In a round each process hands over at most one chunk per peer; the chunk lands whole
// in the peer's receive buffer at an offset the sender reserves there with an atomic fetch-and-add
// (MPI_Rget_accumulate on the peer's counter) and writes with MPI_Put. One reduction of a few
// header words (MPI_Iallreduce, MPI_MAX) ends the round: once it returns, every chunk of the round
// is in place and every process knows the reduced words. A round therefore costs O(k) one-sided
// operations for k peers plus one O(log p) collective, and no process ever holds or scans anything
// of size p x p; an empty superstep is the reduction alone.
//
// A group whose processes are on more than one node (sites of a grid, hosts of a cluster) moves its
// chunks two-sided instead ("wide"): each chunk is one message (MPI_Isend), taken in wherever it
// comes from (MPI_Improbe, MPI_Imrecv), and the round ends with a reduction that also counts the
// chunks each process is sent (in groups of up to kMaxExactCountProcesses; beyond, reductions sum
// the chunks sent and received until the sums agree). A put superstep then costs about half a
// round trip between the farthest processes (the data and the reduction travel together), and a
// get one round trip (the request goes with the data, its receiver answers at once, and the asker
// knows how many answers it is owed), against three for a reservation, a put with its flush, and
// the reduction: what a wide-area network makes expensive. BSPG_TRANSPORT=one-sided or two-sided
// chooses for every group.
//
// A one-sided group whose processes share one node makes the same rounds with no MPI call but
// the reduction: its windows are shared memory that every process maps (MPI_Win_allocate_shared),
// a reservation is the CPU's atomic fetch-and-add on the peer's counter and a chunk is a memory
// copy into the peer's buffer (an MPI_Rget_accumulate with its wait, and an MPI_Put with its
// flush, cost about a microsecond a peer even through shared memory). Where the reduction too
// runs in shared memory (each process has a core), it also carries each chunk's size to its
// receiver, and each receive buffer is cut into a part per sender: no reservation, and no counter
// whose cache line travels between cores at every sync. BSPG_TRANSPORT=mpi-rma keeps MPI's
// one-sided calls on one node too.
//
// Receive buffers alternate between syncs: a process may already deliver into a peer's buffer for
// sync i+1 while that peer still reads what sync i brought, but it can reach the peer's buffer of
// sync i+2 only after passing sync i+1's reduction, which the peer joins only after it finished
// sync i. A buffer too small for what was reserved in it grows in a collective step of the round
// (rare: capacities only grow, by half again at least).
//
// Two world-wide windows sit beside the transports: Mailbox (large puts copied at call time into
// shared memory, when every process is on one node) and DirectWindow (registered memory exposed for
// zero-copy transfers: bsp_hpput, bsp_hpget, bsp_direct_get). A mailbox may also hold lent puts,
// whose bytes the receiver copies from the sender's memory (PageLender, lending.hpp).
//
// Waiting never keeps a core busy for long: every wait polls for a few microseconds, then sleeps
// between polls with a growing pause (wait_idle), so a process waiting at a sync for a slow peer
// costs a few percent of a core at most.
#pragma once

#include <mpi.h>

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "copy.hpp"
#include "lending.hpp"
#include "stream.hpp"

namespace bspg {

// Waits for all n requests; polls, then sleeps between polls (see above). `also`, where given,
// runs at every poll (a wide transport takes in what arrives meanwhile).
void wait_idle(int n, MPI_Request* requests, const std::function<void()>* also = nullptr);
// Says how many processes of the job share this node: where they outnumber its cores, polls yield
// the core (sched_yield) unless the MPI does so itself (Open MPI's mpi_yield_when_idle, which its
// mpirun sets then); MPICH's polls never yield, and a polling process would keep the peer it
// waits for from running.
void processes_on_this_node(int count);
inline void wait_idle(MPI_Request* request, const std::function<void()>* also = nullptr) {
  wait_idle(1, request, also);
}
// Waits until one of the n requests completes (polls, then sleeps); *index says which.
void wait_any_idle(int n, MPI_Request* requests, int* index);

// MPI_MAX and MPI_MIN of MPI_UINT64_T as unsigned numbers. MPICH 4.0 (Debian 12's) compares
// unsigned integers as signed ones, so values from 2^63 up lose to small ones; where the MPI's own
// operation is found to do that (one local MPI_Reduce_local, the first time), an operation of
// bspg's own takes its place. Call after MPI_Init.
MPI_Op unsigned_max_op();
MPI_Op unsigned_min_op();

// An element-wise MAX of a fixed number of 64-bit words over a communicator, in place, every wait
// idle. Up to kMaxShmProcesses processes that share one node and have a core each: through shared
// memory, each process writing its words into a slot of its own and reading the others' (no MPI
// message at all: an empty superstep then costs about what MPI_Barrier does). Otherwise, up to
// kMaxStepProcesses processes by recursive doubling over persistent point-to-point requests set up
// once (ceil(log2 p) exchanges): Open MPI 4.1's non-blocking collectives (libnbc) walk a schedule
// and allocate on every call, which costs a third more than its blocking MPI_Allreduce at p = 2.
// Beyond that a persistent non-blocking MPI_Allreduce (MPI-4's MPI_Allreduce_init or Open MPI 4's
// MPIX_Allreduce_init, set up once; MPI_Iallreduce where the MPI has neither), which is the faster
// of the two where processes outnumber cores. Collective: every process of comm calls run()
// equally often.
class MaxReduction {
 public:
  static constexpr int kMaxStepProcesses = 4;
  static constexpr int kMaxShmProcesses = 8;
  // The last sum_words of the words are summed instead (counts a wide transport agrees on).
  // sites: each rank's site (bsprun's subjob), or empty. Where the ranks are on several sites and
  // not each on one of its own, the reduction goes by sites: inside each site, one exchange
  // between the sites' first ranks (all with all, up to kMaxDirectSites sites), and inside each
  // site again: one wide-area step whatever the sites' number and sizes.
  // notes: through shared memory (shared()), a run also carries one word from each process to
  // each other (run's `notes`, note_from), read only by those that ask.
  MaxReduction(MPI_Comm comm, int words, int tag, int sum_words = 0,
               const std::vector<int>& sites = {}, bool notes = false);
  static constexpr int kMaxDirectSites = 8;
  MaxReduction(const MaxReduction&) = delete;
  MaxReduction& operator=(const MaxReduction&) = delete;
  ~MaxReduction();
  int words() const { return static_cast<int>(mine_.size()); }
  // Whether it runs through shared memory: a run then orders this process's earlier stores before
  // the others' loads after theirs (a release and acquire per slot), as a fence would.
  bool shared() const { return shared_ != MPI_WIN_NULL; }
  // `while_waiting`, where given, runs at every poll while the reduction waits. notes (with
  // shared() and notes asked for at construction): one word for each rank, by rank.
  void run(std::uint64_t* words, const std::function<void()>* while_waiting = nullptr,
           const std::uint64_t* notes = nullptr);
  // After a run: the word `rank` noted for this process in it (valid until the next run).
  std::uint64_t note_from(int rank) const {
    if (rank == rank_) return own_note_;  // a slot holds no note for its own process
    return slot(rank,
                runs_)[notes_at_ + static_cast<std::size_t>(rank_ < rank ? rank_ : rank_ - 1)];
  }
  // Bytes this process sends and receives in one run, or writes and reads in shared memory (for
  // the metadata figures).
  std::uint64_t bytes_per_run() const;

 private:
  struct Step {
    MPI_Request requests[2];
    int count;     // 1 (send or receive only) or 2 (an exchange)
    bool combine;  // fold what arrived into mine_
  };
  MPI_Comm comm_;
  std::vector<std::uint64_t> mine_, theirs_;
  std::vector<Step> steps_;
  bool collective_steps_ = false;  // beyond kMaxStepProcesses: MPI's allreduce
  MPI_Request collective_ = MPI_REQUEST_NULL;
  bool persistent_ = false;
  int messages_ = 0;
  // Shared memory: per process two slots (runs alternate between them, so that a process one run
  // ahead never overwrites what a slower one still reads), each a run number and the words.
  bool open_shared(int rank, int size);
  void run_shared(std::uint64_t* words, const std::function<void()>* while_waiting,
                  const std::uint64_t* notes);
  // into := into combined with from (MAX, and the sum words summed).
  void combine(std::uint64_t* into, const std::uint64_t* from) const;
  std::size_t sum_words_ = 0;
  bool notes_ = false;
  std::size_t notes_at_ = 0;  // in a slot: the notes, right after the run number and the words
  std::uint64_t own_note_ = 0;                   // the last run's note for this process itself
  MPI_Datatype mixed_type_ = MPI_DATATYPE_NULL;  // the words as one element, for a mixed MPI op
  // By sites: the site's reduction, and for its first rank the exchange with the other sites'.
  bool open_sites(int rank, const std::vector<int>& sites, int tag);
  void run_sites(std::uint64_t* words, const std::function<void()>* while_waiting);
  std::unique_ptr<MaxReduction> in_site_, among_sites_;
  MPI_Comm site_comm_ = MPI_COMM_NULL, leaders_comm_ = MPI_COMM_NULL;
  std::vector<MPI_Request> leader_requests_;  // persistent: a send and a receive per other site
  std::vector<std::uint64_t> from_sites_;     // what the other sites' first ranks sent
  std::vector<std::uint64_t> identity_;       // zeros: what a site's other ranks add at the end
  std::uint64_t* slot(int rank, std::uint64_t run) const;
  MPI_Win shared_ = MPI_WIN_NULL;
  std::vector<std::uint64_t*> shared_bases_;
  std::size_t slot_words_ = 0;
  std::uint64_t runs_ = 0;
  int rank_ = 0, size_ = 1;
};

// Paces a polling loop of one's own the same way: idle() after a poll that found nothing (returns
// at once for the first millisecond, then sleeps, longer each time), reset() after progress.
class IdlePacer {
 public:
  void idle();
  void reset() { idle_since_ns_ = 0, pause_ns_ = 0; }

 private:
  long long idle_since_ns_ = 0;
  long pause_ns_ = 0;
};

enum class ChunkKind : std::uint32_t { Stream = 0x6273701u, Reply = 0x6273702u };

// The semantics layer's words that travel with a chunk (runtime.cpp: mailbox bytes for this
// receiver, and what the stream holds of messages).
using ChunkNotes = std::array<std::uint64_t, 3>;

// A chunk as it lies in a receive buffer: this header, then the stream bytes (8-aligned).
struct ChunkHeader {
  std::uint32_t kind;   // ChunkKind
  std::uint32_t src;    // global pid of the sender
  std::uint64_t bytes;  // stream bytes that follow
  ChunkNotes notes;
};
static_assert(sizeof(ChunkHeader) == Stream::kHeadroom,
              "the chunk header fills the stream's headroom");

class Transport {
 public:
  // comm: the group's communicator; pids: group rank -> global pid (ascending); rank: ours.
  Transport(MPI_Comm comm, std::vector<int> pids, int rank);
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;
  ~Transport();
  void close();  // collective over the group when open; frees the windows

  struct Outgoing {
    int dst;         // group rank
    Stream* stream;  // may be empty (then only the notes travel)
    ChunkNotes notes;
  };
  struct Incoming {
    int src;  // global pid
    ChunkKind kind;
    const char* data;  // the stream bytes: valid until the sync after the next begins
    std::uint64_t bytes;
    ChunkNotes notes;
  };

  // One round: delivers every outgoing chunk, then reduces words[0..nwords) with MPI_MAX over the
  // group (in place). Collective. Afterwards incoming(kind) lists the chunks of this round, ordered
  // by sender pid. Costs O(k + log p) messages for k chunks. Each kind of round has receive buffers
  // of its own: a process still reading one round's chunks cannot be overtaken by a faster one
  // delivering the next round's.
  // Wide: on_arrival, where given, sees every stream chunk of the round as it arrives, and may
  // answer it at once with reply(): the stream round then also brings every reply, and ends only
  // once they have all arrived (incoming(Reply) lists them; no reply round follows). replies:
  // how many reply chunks other ranks send this process in the round (each chunk whose receiver
  // answers it with reply() is answered exactly once, so the sender knows): in a small group the
  // round then ends after one reduction, once this process's chunks and replies are here.
  using Arrival = std::function<void(const Incoming&)>;
  void round(ChunkKind kind, const std::vector<Outgoing>& out, std::uint64_t* words, int nwords,
             const Arrival* on_arrival = nullptr, std::uint64_t replies = 0);
  // Wide only, from on_arrival: sends a reply chunk now. The stream must stay as it is until the
  // round ends.
  void reply(const Outgoing& chunk);
  // The chunks of the last round of `kind` (a round of the other kind leaves them be).
  const std::vector<Incoming>& incoming(ChunkKind kind) const { return incoming_[channel(kind)]; }
  // Where an incoming chunk's bytes are.
  const char* at(const Incoming& chunk) const { return chunk.data; }
  // Whether this group's chunks move two-sided (see above; decided when it is made).
  bool wide() const { return wide_; }

  // Collective: nobody returns before everybody has called it (idle waiting).
  void barrier();
  // Ends this process's part of a sync: the next sync uses the other receive buffers. Chunks of
  // this sync stay readable until the sync after the next begins.
  void end_sync();
  // Each group rank's site (subjob), before the first round or barrier: a wide transport's
  // reductions then go by sites (MaxReduction).
  void set_sites(std::vector<int> site_of_rank) { sites_ = std::move(site_of_rank); }

  int size() const { return static_cast<int>(pids_.size()); }
  // Bytes of metadata this process sent and received so far in this sync (chunk headers, counter
  // operations and its share of the reductions), for the scale benchmark.
  std::uint64_t metadata_bytes() const { return metadata_; }
  // Bytes of chunks (headers and data) this process sent in this sync to ranks of another site.
  std::uint64_t across_sites_bytes() const { return across_sites_; }

 private:
  static constexpr int kChannels = 2;  // streams, replies
  static int channel(ChunkKind kind) { return kind == ChunkKind::Stream ? 0 : 1; }
  struct Buffer {
    MPI_Win win = MPI_WIN_NULL;
    char* base = nullptr;
    std::vector<char*> peers;  // local_: every group rank's buffer, mapped here
  };
  void open();
  void open_channel(int channel);
  void allocate(int channel, int parity, std::uint64_t capacity);
  void grow(const std::vector<std::size_t>& late, const std::vector<Outgoing>& out);
  // local_ with a reduction through shared memory: each receive buffer is cut into one part per
  // sender, and the bytes each chunk takes travel as the reduction's notes (no reservation, no
  // counter to read or reset).
  void round_parts(const std::vector<Outgoing>& out, std::uint64_t* words, int nwords,
                   MaxReduction& reduction);
  std::uint64_t part_bytes() const {
    return capacity_[channel_][parity_][0] / static_cast<std::uint64_t>(size()) / 8 * 8;
  }
  std::vector<std::uint64_t> notes_;  // round_parts: bytes sent to each rank
  // round_parts: bytes of the last chunk each rank sent here, per channel (what to prefetch).
  std::vector<std::uint64_t> last_chunk_bytes_[kChannels];
  void put_chunk(const Outgoing& chunk, std::uint64_t offset);
  void flush_targets();
  void scan();
  int counter_index() const { return 2 * channel_ + parity_; }
  void round_wide(const std::vector<Outgoing>& out, std::uint64_t* words, int nwords,
                  const Arrival* on_arrival, std::uint64_t replies);
  int wide_tag(int channel) const;
  // Sends a chunk of `kind` (or keeps it, for ourselves).
  void send_wide(ChunkKind kind, const Outgoing& chunk);
  // Starts receiving every chunk of `channel` that has arrived; counts those done, shows stream
  // chunks to on_arrival.
  void take_in_wide(int channel, const Arrival* on_arrival);
  Incoming wide_incoming(int channel, const ByteBuffer& chunk) const;

  MPI_Comm comm_;
  std::vector<int> pids_;
  int rank_;
  bool wide_ = false;
  // One node: the windows are shared memory that every process maps, and the round's
  // reservations and chunks are the CPU's atomic fetch-and-adds and memory copies (no MPI call
  // before the reduction). Otherwise MPI_Rget_accumulate and MPI_Put.
  bool local_ = false;
  std::vector<std::uint64_t*> counter_peers_;  // local_: every group rank's four counters
  // MPI_Win_allocate, or MPI_Win_allocate_shared with every rank's part looked up (local_).
  void allocate_window(std::uint64_t bytes, int disp_unit, MPI_Info info, char** base, MPI_Win* win,
                       std::vector<char*>* peers);
  std::vector<int> sites_;
  // Wide: each received chunk in a buffer of its own, per channel and parity (reused), the
  // requests under way, and what the round sent and received so far.
  struct WideChannel {
    std::vector<ByteBuffer> chunks[2];  // per parity, reused
    std::size_t used = 0;               // of this sync's buffers
    std::vector<MPI_Request> sends, receives;
    std::vector<std::size_t> receiving;  // the chunk each receive fills
    std::uint64_t received = 0;          // receives completed in this round
  };
  WideChannel wide_channels_[2];
  std::vector<ByteBuffer> wide_laid_out_;  // streams with externals, laid out to send
  bool open_ = false;
  int parity_ = 0;
  int channel_ = 0;  // of the round under way
  ChunkKind kind_ = ChunkKind::Stream;
  // Four u64 per process: bytes reserved in its buffer of (channel, parity), at index
  // 2 * channel + parity.
  MPI_Win counters_ = MPI_WIN_NULL;
  std::uint64_t* counter_base_ = nullptr;
  Buffer buffers_[kChannels][2];
  std::vector<std::uint64_t> capacity_[kChannels][2];  // per group rank, identical everywhere
  bool channel_open_[kChannels] = {false, false};
  std::vector<Incoming> incoming_[kChannels];
  // Per round, reused.
  std::vector<std::uint64_t> sizes_, offsets_;
  std::vector<MPI_Request> requests_;
  std::vector<int> touched_;
  // The reduction ending a round of each channel, and the barrier (a reduction of one word).
  std::unique_ptr<MaxReduction> reductions_[kChannels];
  std::unique_ptr<MaxReduction> barrier_;
  std::vector<std::uint64_t> words_;  // the caller's words and "something is late"
  // Wide rounds: the chunks this round sends to each group rank (exact counts, round_wide), for
  // groups of at most this many processes.
  static constexpr std::size_t kMaxExactCountProcesses = 256;
  std::vector<std::uint64_t> sent_to_;
  std::uint64_t metadata_ = 0;
  std::uint64_t across_sites_ = 0;
  bool across_sites(int rank) const {
    return !sites_.empty() &&
           sites_[static_cast<std::size_t>(rank)] != sites_[static_cast<std::size_t>(rank_)];
  }
};

// Large puts on one node: copied at call time into a shared-memory region the receiver reads at the
// sync (one copy fewer than a stream). One region per (writer, receiver) pair; a sync whose
// processes used any ends with a barrier, so that no region is overwritten while being read.
// Regions start small (8 MiB for all of a process's, at most 1 MiB each) and grow, collectively at
// a sync, to what a superstep's puts needed, within what the node can spare (affordable()): a
// program that puts megabytes at a time then pays two memory copies per put and nothing else.
class Mailbox {
 public:
  void open(MPI_Comm comm, int pid, int nprocs);  // collective; available() only on one node
  void close();
  bool available() const { return win_ != MPI_WIN_NULL; }
  std::uint64_t region_bytes() const { return region_bytes_; }
  // The largest region this process would allocate: every process's regions together (p x p of
  // them on this node) take at most a quarter of the memory and half of the free shared-memory
  // file system, and one region at most kLargestRegion. 0 where the mailbox is not available.
  std::uint64_t affordable() const;
  // Collective over the communicator it was opened on: every region becomes region_bytes (more
  // than now; rounded up to pages). Nothing may be in the regions that is still to be read.
  void grow(std::uint64_t region_bytes);
  static constexpr std::uint64_t kLargestRegion = std::uint64_t{256} << 20;
  // Copies header and payload into this process's region for target, at offset.
  void write(int target, std::uint64_t offset, const void* header, std::size_t header_bytes,
             const void* payload, std::size_t payload_bytes);
  // What this process's copies of n bytes into the regions cost per byte, measured (0: none yet).
  double write_cost_per_byte(std::size_t n) const { return writes_.cost_per_byte(n); }
  void publish();  // before the sync's collective: stores are visible to other processes
  void acquire();  // after it: see what the others stored
  const char* incoming(int src) const {
    return bases_[static_cast<std::size_t>(src)] + static_cast<std::uint64_t>(pid_) * region_bytes_;
  }

 private:
  void allocate();

  MPI_Comm comm_ = MPI_COMM_NULL;  // the job's, not owned
  MPI_Win win_ = MPI_WIN_NULL;
  char* base_ = nullptr;
  int pid_ = 0;
  int nprocs_ = 0;
  std::uint64_t region_bytes_ = 0;
  std::vector<char*> bases_;  // every process's segment
  ChosenCopies writes_;       // puts' copies into the regions
};

// Registered memory exposed to one-sided operations (a dynamic window over the world): transfers
// straight from and into user memory, with no buffer in between.
class DirectWindow {
 public:
  void open(MPI_Comm comm, int pid);
  void close();
  void attach(void* base, std::uint64_t bytes);
  void detach(void* base, std::uint64_t bytes);
  // Copies n bytes from local src to address remote on target (MPI_Put; memcpy for ourselves).
  void put(int target, std::uint64_t remote, const void* src, std::uint64_t n);
  // Starts reading n bytes at address remote on target into local dst (MPI_Rget).
  void get(int target, std::uint64_t remote, void* dst, std::uint64_t n);
  // Every put and get started has completed at both ends (idle waiting for gets).
  void complete();

 private:
  void attach_range(char* begin, char* end);

  MPI_Win win_ = MPI_WIN_NULL;
  int pid_ = 0;
  std::vector<int> targets_;
  std::vector<MPI_Request> gets_;
  // Registered areas may overlap (one area registered twice, parts of one array), and attaching
  // overlapping memory to one window is an error some MPIs report (Open MPI 5's osc/rdma): the
  // window gets the unions of overlapping areas, each attached once.
  std::multimap<char*, std::uint64_t> areas_;  // every attached area: base -> bytes
  std::map<char*, char*> attached_;             // the disjoint unions attached: begin -> end
};

}  // namespace bspg
