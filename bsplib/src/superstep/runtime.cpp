#include "runtime.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "call_site.hpp"
#include "errors.hpp"
#include "lost_peers.hpp"
#include "records.hpp"
#include "stop_notice.hpp"

namespace bspg {

Runtime* g_runtime = nullptr;
Phase g_phase = Phase::Before;

namespace {

// The MPI this library was compiled with, for messages.
#if defined(OPEN_MPI)
constexpr const char* kBuiltWith = "Open MPI";
#elif defined(MPICH_VERSION)
constexpr const char* kBuiltWith = "MPICH";
#else
constexpr const char* kBuiltWith = "this MPI";
#endif

bool set_in_environment(const char* name) {
  const char* value = std::getenv(name);
  return value && *value;
}

// A program started by another MPI's starter would run as N separate one-process jobs, each its
// own process 0: say so once (where that starter says this is its first process) and stop.
void refuse_foreign_starter() {
  const char* foreign = nullptr;
  const char* first = nullptr;
#if defined(OPEN_MPI)
  // Hydra (MPICH's mpiexec, and its derivatives') gives each process PMI_RANK and PMI_SIZE.
  if (set_in_environment("PMI_SIZE") && !set_in_environment("OMPI_COMM_WORLD_SIZE") &&
      !set_in_environment("PMIX_RANK")) {
    foreign = "MPICH's mpiexec (Hydra)";
    first = std::getenv("PMI_RANK");
  }
#else
  if (set_in_environment("OMPI_COMM_WORLD_SIZE")) {
    foreign = "Open MPI's mpirun";
    first = std::getenv("OMPI_COMM_WORLD_RANK");
  }
#endif
  if (!foreign) return;
  // The others end quietly with 0, so that a starter which stops the job at the first non-zero
  // exit (Open MPI 5's) does not stop the speaker before it has spoken; its 1 is the job's status.
  if (first && *first && std::strcmp(first, "0") != 0) _exit(0);
  std::fprintf(stderr,
               "bspg: this program was built with %s (bspg's %s) but started by %s; start it "
               "with bsprun, or with %s\n",
               kBuiltWith, BSPG_MPI_NAME, foreign, BSPG_MPI_STARTER);
  // The starter tears the job down at this exit; the line must have left the pipe first.
  drain_output();
  _exit(1);
}

// What the one-sided transport needs from this MPI, set before MPI_Init; a user's own choice
// (the variable already set) wins.
void choose_one_sided_components() {
#if defined(OPEN_MPI) && defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION < 5
  // Debian's Open MPI 4 leaves only osc/rdma, which fails over TCP and for a single process; sm
  // serves processes on one host and pt2pt everything else (and dynamic windows).
  setenv("OMPI_MCA_osc", "sm,pt2pt", 0);
  // The reduction that ends every superstep is non-blocking (so that waiting can sleep); for its
  // few words recursive doubling takes log2(p) steps, fewer than libnbc's default choice.
  setenv("OMPI_MCA_coll_libnbc_iallreduce_algorithm", "4", 0);
#elif defined(OPEN_MPI)
  // Open MPI 5 has no osc/pt2pt: osc/rdma drives every BTL (shared memory and TCP alike, with
  // its own emulation of what TCP cannot do remotely), sm serves processes on one host.
  setenv("OMPI_MCA_osc", "sm,rdma", 0);
#endif
#if defined(OPEN_MPI)
  // osc/rdma attaches at most 64 areas to a dynamic window by default (and hangs at the next
  // attach after refusing one); every registration is one.
  setenv("OMPI_MCA_osc_rdma_max_attach", "65536", 0);
#endif
  // MPICH: its own RMA (ch4) serves every path; nothing to choose.
}

}  // namespace

bool ensure_mpi() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) return false;
  refuse_foreign_starter();
  choose_one_sided_components();
  MPI_Init(nullptr, nullptr);
  return true;
}

namespace {

// A subjob index or size from bsprun's environment, strictly: digits only, at most a million.
long subjob_number(const char* text, std::size_t length) {
  if (length == 0 || length > 7) return -1;
  long value = 0;
  for (std::size_t k = 0; k < length; ++k) {
    if (text[k] < '0' || text[k] > '9') return -1;
    value = value * 10 + (text[k] - '0');
  }
  return value <= 1000000 ? value : -1;
}

}  // namespace

int subjob_of_process(int pid) {
  if (const char* text = std::getenv("BSPG_SUBJOB"); text != nullptr && *text != '\0') {
    const long value = subjob_number(text, std::strlen(text));
    if (value < 0)
      fail("bsp_begin", "environment variable BSPG_SUBJOB='%s' is not a subjob index (0, 1, ...)",
           text);
    return static_cast<int>(value);
  }
  // One app context for every subjob: the subjobs' pids follow each other in order.
  const char* sizes = std::getenv("BSPG_SUBJOB_SIZES");
  if (sizes == nullptr || *sizes == '\0') return 0;
  long first = 0;
  int subjob = 0;
  for (const char* at = sizes;; ++subjob) {
    const char* comma = std::strchr(at, ',');
    const std::size_t length =
        comma != nullptr ? static_cast<std::size_t>(comma - at) : std::strlen(at);
    const long size = subjob_number(at, length);
    if (size <= 0)
      fail("bsp_begin",
           "environment variable BSPG_SUBJOB_SIZES='%s' is not a list of subjob sizes (4,2,...)",
           sizes);
    if (pid < first + size) return subjob;
    first += size;
    if (comma == nullptr) return subjob + 1;  // a spare: one past the job's subjobs
    at = comma + 1;
  }
}

Runtime::Runtime(MPI_Comm comm_in, int pid_in, int nprocs_in)
    : comm(comm_in),
      pid(pid_in),
      nprocs(nprocs_in),
      start_time(0),
      registry(nprocs_in),
      peers_(static_cast<std::size_t>(nprocs_in)) {
  std::vector<int> everyone(static_cast<std::size_t>(nprocs));
  for (int i = 0; i < nprocs; ++i) everyone[static_cast<std::size_t>(i)] = i;
  groups.push_back(std::make_unique<Group>(comm, everyone, pid, nprocs));
  world = groups[0].get();
  mailbox_.open(comm, pid, nprocs);
  lender_.open(comm, pid, mailbox_.available());
  direct_.open(comm, pid);

  subjob = subjob_of_process(pid);
  std::vector<int> all(static_cast<std::size_t>(nprocs));
  MPI_Allgather(&subjob, 1, MPI_INT, all.data(), 1, MPI_INT, comm);
  for (int k : all) {
    if (static_cast<std::size_t>(k) >= subjob_sizes.size())
      subjob_sizes.resize(static_cast<std::size_t>(k) + 1, 0);
    ++subjob_sizes[static_cast<std::size_t>(k)];
  }
  subjob_of_pid = all;
  world->transport.set_sites(all);  // subjobs are sites: reductions between nodes go by them
  subjob_group = split(subjob);
  MPI_Barrier(comm);
  start_time = MPI_Wtime();
}

Runtime::~Runtime() { forget_stop_peers(); }

int Runtime::split(int color) {
  // MPI_Comm_split blocks (spinning) until every process is there: wait idly for them first.
  if (world) world->transport.barrier();
  MPI_Comm group_comm;
  MPI_Comm_split(comm, color >= 0 ? color : MPI_UNDEFINED, pid, &group_comm);
  lost_peers::watch(group_comm);
  int handle = static_cast<int>(groups.size());
  if (group_comm == MPI_COMM_NULL) {
    groups.push_back(nullptr);
    return -1;
  }
  int size = 0, rank = 0;
  MPI_Comm_size(group_comm, &size);
  MPI_Comm_rank(group_comm, &rank);
  std::vector<int> members(static_cast<std::size_t>(size));
  MPI_Allgather(&pid, 1, MPI_INT, members.data(), 1, MPI_INT, group_comm);
  std::vector<int> sites;
  for (int member : members) sites.push_back(subjob_of_pid[static_cast<std::size_t>(member)]);
  groups.push_back(std::make_unique<Group>(group_comm, std::move(members), rank, nprocs));
  groups.back()->transport.set_sites(std::move(sites));
  return handle;
}

// ---- Recording the superstep's operations -----------------------------------------------------

void Runtime::put_large(int dst, int slot, std::uint32_t offset, const void* src,
                        std::uint32_t nbytes, bool unbuffered) {
  Peer& p = peer(dst);
  // bsp_hpput beyond kHpputMailboxBytes goes straight from the user's memory: no copy of a large
  // area to keep, in the mailbox or elsewhere. On one node the receiver reads it where it lies
  // (as MPI's single-copy transfers do; MPICH 4.0's MPI_Put of 16 MiB took 9x as long), else
  // MPI_Put (below). Smaller ones take the mailbox where it has room, but never make it grow:
  // two copies of memory the cache holds were the faster on an AMD EPYC (a read through the
  // kernel moved a quarter of a memcpy's bytes per second there), not on an Intel Xeon (where
  // both moved alike), so from PageLender::kMinLendBytes the lender's timings choose.
  const bool direct_hpput = unbuffered && (nbytes > kHpputMailboxBytes ||
                                           (p.way <= Way::Direct && lender_.reads_hpput(nbytes)));
  if (direct_hpput && read_where_it_lies(p, dst, slot, offset, src, nbytes)) return;
  if (p.way <= Way::Mailbox && mailbox_.available() && !unbuffered &&
      nbytes >= PageLender::kMinLendBytes &&
      lender_.worth(nbytes, mailbox_.write_cost_per_byte(nbytes)) &&
      lend_put(p, dst, slot, offset, src, nbytes))
    return;
  if (p.way <= Way::Mailbox && mailbox_.available() && !direct_hpput) {
    // Copied now into shared memory the receiver reads at the sync: one copy fewer than a stream.
    const std::uint64_t record = kHeaderBytes + align4(nbytes);
    if (p.mailbox_bytes + record <= mailbox_.region_bytes()) {
      std::uint32_t header[3] = {static_cast<std::uint32_t>(slot) << 2 | kPut, offset, nbytes};
      mailbox_.write(dst, p.mailbox_bytes, header, kHeaderBytes, src, nbytes);
      p.mailbox_bytes += record;
      if (other_subjob(dst)) cross_subjob_recorded_ += record;
      p.way = Way::Mailbox;
      mailbox_written_ = true;
      return;
    }
    // Too small: this put goes another way, and the regions grow at the next bsp_sync.
    if (!unbuffered) mailbox_wanted_ = std::max(mailbox_wanted_, p.mailbox_bytes + record);
    if (unbuffered && nbytes >= kDirectBytes &&
        read_where_it_lies(p, dst, slot, offset, src, nbytes))
      return;
  }
  // Between nodes (a wide world) a one-sided put would add its flush's round trip to the sync:
  // large puts travel in the stream there, as messages.
  if (nbytes >= kDirectBytes && p.way <= Way::Direct && !world->transport.wide()) {
    // Straight into the destination's registered memory at the sync: from the user's memory for
    // bsp_hpput, from the call-time copy for bsp_put; never through a receive buffer.
    DirectPut direct{dst, remote_address(slot, dst, offset), static_cast<const char*>(src), nbytes,
                     nullptr};
    if (!unbuffered) {
      direct.copy.reset(new char[nbytes]);
      std::memcpy(direct.copy.get(), src, nbytes);
      direct.src = direct.copy.get();
    }
    if (other_subjob(dst)) cross_subjob_recorded_ += nbytes;
    direct_puts_.push_back(std::move(direct));
    p.way = Way::Direct;
    return;
  }
  pack_put(p.stream, slot, offset, src, nbytes);
  p.way = Way::Stream;
}

bool Runtime::read_where_it_lies(Peer& p, int dst, int slot, std::uint32_t offset, const void* src,
                                 std::uint32_t nbytes) {
  if (p.way > Way::Direct || !mailbox_.available() || !lender_.reads_peers() ||
      p.mailbox_bytes + kLentRecordBytes > mailbox_.region_bytes())
    return false;
  // Read before any put of the superstep lands, as MPI_Put would have written it (a direct put:
  // first among the ways, see Way).
  write_lent_record(p, dst, slot, offset, src, nbytes | kLiveBit);
  if (other_subjob(dst)) cross_subjob_recorded_ += kLentRecordBytes + nbytes;
  p.way = Way::Direct;
  mailbox_written_ = live_reads_ = true;
  return true;
}

void Runtime::write_lent_record(Peer& p, int dst, int slot, std::uint32_t offset,
                                const void* address, std::uint32_t nbytes_word) {
  const std::uint32_t header[3] = {static_cast<std::uint32_t>(slot) << 2 | kGet, offset,
                                   nbytes_word};
  const std::uint64_t at = reinterpret_cast<std::uintptr_t>(address);
  mailbox_.write(dst, p.mailbox_bytes, header, kHeaderBytes, &at, sizeof at);
  p.mailbox_bytes += kLentRecordBytes;
}

bool Runtime::lend_put(Peer& p, int dst, int slot, std::uint32_t offset, const void* src,
                       std::uint32_t nbytes) {
  // The source's whole pages are lent (lending.hpp); the bytes before and after them are copied.
  const auto at = reinterpret_cast<std::uintptr_t>(src);
  constexpr std::uintptr_t kPage = 4096;
  const std::uintptr_t first = (at + kPage - 1) / kPage * kPage;
  const std::uintptr_t last = (at + nbytes) / kPage * kPage;
  if (last <= first) return false;
  const std::uint32_t head = static_cast<std::uint32_t>(first - at),
                      middle = static_cast<std::uint32_t>(last - first),
                      tail = static_cast<std::uint32_t>(at + nbytes - last);
  const std::uint64_t records = (head ? kHeaderBytes + align4(head) : 0) + kLentRecordBytes +
                                (tail ? kHeaderBytes + align4(tail) : 0);
  if (p.mailbox_bytes + records > mailbox_.region_bytes()) return false;
  const char* lent = lender_.lend(reinterpret_cast<char*>(first), middle, nbytes);
  if (lent == nullptr) return false;
  const auto write_put = [&](std::uint32_t into, const void* from, std::uint32_t bytes) {
    const std::uint32_t header[3] = {static_cast<std::uint32_t>(slot) << 2 | kPut, into, bytes};
    mailbox_.write(dst, p.mailbox_bytes, header, kHeaderBytes, from, bytes);
    p.mailbox_bytes += kHeaderBytes + align4(bytes);
  };
  if (head) write_put(offset, src, head);
  write_lent_record(p, dst, slot, offset + head, lent, middle);
  if (tail) write_put(offset + head + middle, reinterpret_cast<const char*>(last), tail);
  if (other_subjob(dst)) cross_subjob_recorded_ += records + middle;
  p.way = Way::Mailbox;
  mailbox_written_ = true;
  return true;
}

void Runtime::get(int server, int slot, std::uint32_t offset, void* dst, std::uint32_t nbytes,
                  bool unbuffered) {
  Peer& p = peer(server);
  asks_for_data_ = true;
  // A large get reads the server's memory straight into dst. For bsp_get only when dst is not
  // registered memory: another process may read that memory in this superstep and must see it as it
  // was, so the result can only be written once every read is done (the reply round).
  if (nbytes >= kDirectBytes && (unbuffered || !registry.overlaps_local(dst, nbytes)) &&
      !world->transport.wide()) {  // between nodes the reply round is no slower than MPI_Rget
    direct_gets_.push_back(
        {server, remote_address(slot, server, offset), static_cast<char*>(dst), nbytes});
    return;
  }
  // A get that continues the stream's last record (the next bytes of the same area, into the
  // next bytes of dst) grows it: a run of single-word gets travels as one request and one reply
  // piece, a twelfth of the request bytes.
  ByteBuffer& records = p.stream.records();
  if (const std::size_t last = p.stream.last_get();
      last != 0 && last + kHeaderBytes == records.size() && !p.gets.empty() &&
      p.gets.back().dst + p.gets.back().nbytes == static_cast<char*>(dst)) {
    // Three 4-byte loads, as the last request's stores wrote them (see pack_put).
    const char* head = records.data() + last;
    const std::uint32_t head0 = load_word(head), head1 = load_word(head + 4),
                        head2 = load_word(head + 8);
    if (head0 == (static_cast<std::uint32_t>(slot) << 2 | kGet) && head1 + head2 == offset &&
        head1 <= offset && head2 < (1u << 30) && nbytes < (1u << 30)) {
      const std::uint32_t grown = head2 + nbytes;
      std::memcpy(records.data() + last + 8, &grown, 4);
      p.gets.back().nbytes = grown;
      return;
    }
  }
  p.stream.set_last_get(records.size());
  pack_get(records, slot, offset, nbytes);
  p.gets.push_back({static_cast<char*>(dst), nbytes});
}

void Runtime::direct_get(int server, int slot, std::uint32_t offset, void* dst,
                         std::uint32_t nbytes) {
  direct_.get(server, remote_address(slot, server, offset), dst, nbytes);
  direct_.complete();
}

// ---- The end of a superstep --------------------------------------------------------------------

void Runtime::check_group_superstep(const Group& group) const {
  // Where the program made the call that waits for a bsp_sync: "; the last: CALL at FILE:LINE".
  const auto last_call = [this]() -> std::string {
    if (deferred_call == nullptr) return "";
    const std::string site = call_site_of(deferred_call_return);
    return site.empty() ? "" : std::string("; the last such call: ") + deferred_call + " " + site;
  };
  if (registry.pending_push_count() || registry.pending_pop_count())
    fail("bspg_group_sync",
         "bsp_push_reg and bsp_pop_reg take effect only at bsp_sync, not at a group sync%s",
         last_call().c_str());
  if (requested_tag_nbytes >= 0)
    fail("bspg_group_sync", "bsp_set_tagsize takes effect only at bsp_sync, not at a group sync%s",
         last_call().c_str());
  // Communication with processes outside the group would wait for a sync that never includes them.
  for (int d : touched_)
    if (group.rank_of(d) < 0)
      fail("bspg_group_sync",
           "this superstep puts, gets or sends to process %d, which is not in the group; only "
           "bsp_sync delivers that",
           d);
}

void Runtime::report_disagreement(Group& group, const Header& mine) {
  // Only now, on the error path, does every process learn every header.
  std::vector<Header> headers(static_cast<std::size_t>(group.size()));
  MPI_Allgather(&mine, sizeof mine, MPI_BYTE, headers.data(), sizeof mine, MPI_BYTE, group.comm);
  Disagreement verdict = find_disagreement(headers, group.members);
  // Where in the program each process made its sync call and its last call of the superstep
  // that takes effect at the sync (bsp_push_reg, bsp_pop_reg, bsp_set_tagsize): the message
  // names those of the first process and of the reporter, whose sync ends the line (errors.hpp).
  constexpr std::size_t kSiteBytes = 256;
  const std::size_t n = static_cast<std::size_t>(group.size());
  char mine_sites[2 * kSiteBytes] = {};
  std::snprintf(mine_sites, kSiteBytes, "%s", user_call_site().c_str());
  if (deferred_call != nullptr) {
    const std::string where = call_site_of(deferred_call_return);
    if (!where.empty())
      std::snprintf(mine_sites + kSiteBytes, kSiteBytes, "%s %s", deferred_call, where.c_str());
  }
  std::vector<char> sites(n * 2 * kSiteBytes);
  MPI_Allgather(mine_sites, 2 * kSiteBytes, MPI_CHAR, sites.data(), 2 * kSiteBytes, MPI_CHAR,
                group.comm);
  const auto sync_site = [&](std::size_t rank) {
    return std::string(&sites[rank * 2 * kSiteBytes]);
  };
  const auto last_call = [&](std::size_t rank) {
    return std::string(&sites[rank * 2 * kSiteBytes + kSiteBytes]);
  };
  const auto reporter = static_cast<std::size_t>(verdict.reporter);
  std::string message = verdict.found ? verdict.message : "processes disagree at this sync";
  for (std::size_t rank : {std::size_t{0}, reporter}) {
    if (last_call(rank).empty() || (rank == reporter && reporter == 0)) continue;
    message += "; process " + std::to_string(group.members[rank]) +
               "'s last call that takes effect at the sync: " + last_call(rank);
  }
  const std::string first = sync_site(0);  // "at FILE:LINE in FUNCTION" or ""
  if (reporter != 0 && !first.empty() && !sync_site(reporter).empty())
    message += "; process " + std::to_string(group.members[0]) + " reached this sync " + first +
               ", this process";
  fail_collective(group.members[reporter], verdict.found ? verdict.call : "bsp_sync", "%s",
                  message.c_str());
}

void Runtime::sync(Group& group, SyncCall call) {
  if (&group != world) check_group_superstep(group);
  Header header;
  header.field[Header::kCall] = static_cast<std::uint64_t>(call);
  header.field[Header::kPushCount] = registry.pending_push_count();
  header.field[Header::kPopCount] = registry.pending_pop_count();
  header.field[Header::kOpOrder] = registry.op_order_digest();
  header.field[Header::kTagSize] =
      requested_tag_nbytes < 0 ? 0 : static_cast<std::uint64_t>(requested_tag_nbytes) + 1;
  if (asks_for_data_) header.flags |= Header::kGets;
  if (!direct_puts_.empty() || live_reads_) header.flags |= Header::kDirectPuts;
  if (mailbox_written_) header.flags |= Header::kMailbox;
  // Regions grow only where every process takes part: at bsp_sync, not at a group's sync.
  if (mailbox_wanted_ > 0 && &group == world) {
    header.flags |= Header::kMailbox;
    header.mailbox_short = true;
  }

  outgoing_.clear();
  std::uint64_t replies = 0;  // servers other than this process that answer requests of ours
  for (int d : touched_) {
    Peer& p = peers_[static_cast<std::size_t>(d)];
    if (p.stream.empty() && p.mailbox_bytes == 0) continue;
    if (!p.stream.empty()) pad_to_8(p.stream.records());
    // Whether the stream holds more than messages: the receiver's sync then walks it for puts.
    const bool not_only_messages = p.way == Way::Stream || !p.gets.empty();
    if (!p.gets.empty() && d != pid) ++replies;
    outgoing_.push_back({group.rank_of(d),
                         &p.stream,
                         {p.mailbox_bytes,
                          p.messages | (not_only_messages ? kNotOnlyMessages : 0) |
                              (p.gets.empty() ? 0 : kHoldsGets),
                          p.message_bytes}});
  }
  if (mailbox_written_) mailbox_.publish();

  // Round 1: every stream lands, and one reduction tells everybody what the superstep needs.
  std::uint64_t words[Header::kWords];
  header.encode(words);
  // A wide transport answers get requests as they arrive: the replies travel while the round
  // is still confirming that every chunk arrived.
  const Transport::Arrival serve_early = [this, &group](const Transport::Incoming& chunk) {
    serve_gets(group, chunk);
  };
  group.transport.round(ChunkKind::Stream, outgoing_, words, Header::kWords,
                        group.transport.wide() ? &serve_early : nullptr, replies);
  const Agreement agreement(words);
  if (!agreement.unanimous()) report_disagreement(group, header);
  if (agreement.any(Header::kMailbox)) mailbox_.acquire();

  // Messages of the last superstep are gone; this superstep's arrive now.
  queue.clear();
  const std::vector<Transport::Incoming>& streams = group.transport.incoming(ChunkKind::Stream);
  if (agreement.any(Header::kGets)) exchange_gets(group, streams);
  if (agreement.any(Header::kDirectPuts)) {
    // Get results are written before any put lands.
    if (agreement.any(Header::kGets)) group.transport.barrier();
    run_direct_puts();
    read_live_puts(streams);
    group.transport.barrier();
  }
  apply_puts_and_messages(group, streams);
  // Writers may fill their mailbox regions again once every receiver has read them.
  if (agreement.any(Header::kMailbox)) group.transport.barrier();
  if (lender_.lending()) lender_.give_back();  // every receiver has read what was lent
  if (agreement.mailbox_short()) grow_mailbox();
  end_superstep();
  last_metadata_bytes_ = group.transport.metadata_bytes();
  last_cross_subjob_bytes_ = group.transport.across_sites_bytes() + cross_subjob_recorded_;
  cross_subjob_recorded_ = 0;
  group.transport.end_sync();
  if (&group != world) return;
  ++world_syncs;

  // Registrations and pops take effect now, after this superstep's data has moved.
  if (header.field[Header::kPushCount] || header.field[Header::kPopCount]) apply_registrations();
  if (requested_tag_nbytes >= 0) {
    tag_nbytes = static_cast<std::uint32_t>(requested_tag_nbytes);
    requested_tag_nbytes = -1;
  }
}

void Runtime::serve_gets(Group& group, const Transport::Incoming& chunk) {
  // Read this process's memory now, as it was when the superstep ended (no put has landed yet).
  if (!(chunk.notes[1] & kHoldsGets)) return;  // puts and messages alone: nothing asked
  if (replies_used_ == replies_.size()) replies_.emplace_back();
  Stream& reply = replies_[replies_used_];
  bool ok = unpack_stream(
      group.transport.at(chunk), chunk.bytes,
      [](int, std::uint32_t, const char*, std::uint32_t) {},
      [&](int slot, std::uint32_t offset, std::uint32_t nbytes) {
        reply.records().append(registry.address(slot, pid) + offset, nbytes);
      },
      [](const char*, std::uint32_t, const char*, std::uint32_t) {});
  if (!ok) fail("bsp_sync", "internal error: malformed data stream from process %d", chunk.src);
  // Every chunk that holds gets has one reply, empty or not: the asker counts on it (sync()).
  ++replies_used_;
  ByteBuffer& bytes = reply.records();
  // Replies are read by length: the padding is never read.
  bytes.extend(align8(bytes.size()) - bytes.size());
  const Transport::Outgoing out{group.rank_of(chunk.src), &reply, {0, 0, 0}};
  if (group.transport.wide())
    group.transport.reply(out);
  else
    outgoing_.push_back(out);
}

void Runtime::exchange_gets(Group& group, const std::vector<Transport::Incoming>& streams) {
  // A wide transport has served every chunk as it arrived, and brought the replies with the
  // stream round (sync()); here the others.
  outgoing_.clear();
  if (!group.transport.wide())
    for (const Transport::Incoming& chunk : streams) serve_gets(group, chunk);
  // Large gets read the servers' memory straight into their destinations, finished before the
  // round's reduction, so every read of the superstep is done when it ends.
  for (const DirectGet& g : direct_gets_) direct_.get(g.server, g.remote, g.dst, g.nbytes);
  direct_.complete();
  if (!group.transport.wide()) group.transport.round(ChunkKind::Reply, outgoing_, nullptr, 0);
  for (const Transport::Incoming& chunk : group.transport.incoming(ChunkKind::Reply)) {
    const char* at = group.transport.at(chunk);
    for (const PendingGet& g : peers_[static_cast<std::size_t>(chunk.src)].gets) {
      std::memcpy(g.dst, at, g.nbytes);
      at += g.nbytes;
    }
  }
  for (std::size_t i = 0; i < replies_used_; ++i) replies_[i].clear();
  replies_used_ = 0;
}

void Runtime::run_direct_puts() {
  // MPI does not order two puts to the same memory in one epoch: a put that overlaps an earlier one
  // to the same process waits until that one has landed.
  for (std::size_t i = 0; i < direct_puts_.size(); ++i) {
    const DirectPut& put = direct_puts_[i];
    for (std::size_t j = 0; j < i; ++j) {
      const DirectPut& earlier = direct_puts_[j];
      if (earlier.dst == put.dst && earlier.remote < put.remote + put.nbytes &&
          put.remote < earlier.remote + earlier.nbytes) {
        direct_.complete();
        break;
      }
    }
    direct_.put(put.dst, put.remote, put.src, put.nbytes);
  }
  direct_.complete();
}

void Runtime::apply_puts_and_messages(Group& group,
                                      const std::vector<Transport::Incoming>& streams) {
  auto apply_put = [&](int slot, std::uint32_t offset, const char* payload, std::uint32_t nbytes) {
    char* dst = registry.address(slot, pid) + offset;
    if (nbytes >= kMidChosenBytes)
      put_copies_.copy(dst, payload, nbytes);
    else
      copy_bytes(dst, payload, nbytes);
  };
  auto no_get = [](int, std::uint32_t, std::uint32_t) {};
  auto no_message = [](const char*, std::uint32_t, const char*, std::uint32_t) {};
  for (const Transport::Incoming& chunk : streams) {
    // The mailbox holds the source's puts that came before its stream's (see Way).
    const std::uint64_t mailbox_bytes = chunk.notes[0], messages = chunk.notes[1];
    const auto apply_lent = [&](int slot, std::uint32_t offset, const char* from,
                                std::uint32_t nbytes, bool live) {
      if (!live) lender_.read(chunk.src, from, registry.address(slot, pid) + offset, nbytes);
    };
    if (mailbox_bytes &&
        !unpack_mailbox(mailbox_.incoming(chunk.src), mailbox_bytes, apply_put, apply_lent))
      fail("bsp_sync", "internal error: malformed mailbox from process %d", chunk.src);
    if (!chunk.bytes) continue;
    const char* records = group.transport.at(chunk);
    // Messages are read where they lie when the program asks (queue.hpp); a stream of messages
    // alone is not walked here at all.
    if ((messages & kNotOnlyMessages) &&
        !unpack_stream(records, chunk.bytes, apply_put, no_get, no_message))
      fail("bsp_sync", "internal error: malformed data stream from process %d", chunk.src);
    queue.add_stream(chunk.src, records, chunk.bytes, messages & ~kNoteFlags, chunk.notes[2]);
  }
}

void Runtime::read_live_puts(const std::vector<Transport::Incoming>& streams) {
  for (const Transport::Incoming& chunk : streams)
    if (chunk.notes[0] != 0)
      unpack_live_prefix(mailbox_.incoming(chunk.src), chunk.notes[0],
                         [&](int slot, std::uint32_t offset, const char* from, std::uint32_t n) {
                           lender_.read(chunk.src, from, registry.address(slot, pid) + offset, n);
                         });
}

void Runtime::grow_mailbox() {
  // The largest region a put wanted, and the smallest any process can afford (as a complement
  // under MPI_MAX), agreed by all.
  std::uint64_t words[2] = {mailbox_wanted_, ~mailbox_.affordable()}, reduced[2] = {0, 0};
  MPI_Request request;
  // The checker knows MPI_Wait only; wait_idle waits with MPI_Test.
  // NOLINTBEGIN(clang-analyzer-optin.mpi.MPI-Checker)
  MPI_Iallreduce(words, reduced, 2, MPI_UINT64_T, unsigned_max_op(), comm, &request);
  wait_idle(&request);
  mailbox_wanted_ = 0;
  // NOLINTEND(clang-analyzer-optin.mpi.MPI-Checker)
  // By half again at least, so that a program whose puts grow step by step reallocates rarely.
  const std::uint64_t wanted = std::max(reduced[0], mailbox_.region_bytes() / 2 * 3);
  mailbox_.grow(std::min(wanted, ~reduced[1]));
}

void Runtime::end_superstep() {
  for (int d : touched_) {
    Peer& p = peers_[static_cast<std::size_t>(d)];
    p.stream.clear();
    p.gets.clear();
    p.mailbox_bytes = 0;
    p.messages = p.message_bytes = 0;
    p.way = Way::None;
    p.touched = false;
  }
  touched_.clear();
  direct_puts_.clear();
  direct_gets_.clear();
  asks_for_data_ = false;
  mailbox_written_ = live_reads_ = false;
  deferred_call = nullptr;  // the calls of the next superstep
}

void Runtime::apply_registrations() {
  // Pops first agree on what they name (flexible NULL pops take what the others name).
  std::vector<std::uint64_t> decided;
  const std::vector<std::uint64_t> codes = registry.pop_codes();
  if (!codes.empty()) {
    std::vector<std::uint64_t> words(2 * codes.size()), reduced(2 * codes.size());
    encode_pops(codes, words.data());
    MPI_Request request;
    // NOLINTBEGIN(clang-analyzer-optin.mpi.MPI-Checker): wait_idle waits (MPI_Test)
    MPI_Iallreduce(words.data(), reduced.data(), static_cast<int>(words.size()), MPI_UINT64_T,
                   unsigned_max_op(), comm, &request);
    wait_idle(&request);
    PopDecision decision = decide_pops(reduced.data(), codes.size());
    // NOLINTEND(clang-analyzer-optin.mpi.MPI-Checker)
    if (!decision.agreed) {
      std::vector<std::uint64_t> gathered(codes.size() * static_cast<std::size_t>(nprocs));
      MPI_Allgather(codes.data(), static_cast<int>(codes.size()), MPI_UINT64_T, gathered.data(),
                    static_cast<int>(codes.size()), MPI_UINT64_T, comm);
      Disagreement verdict =
          find_pop_disagreement(gathered, codes.size(), world->members, &Registry::describe_pop);
      fail_collective(verdict.reporter, "bsp_pop_reg", "%s", verdict.message.c_str());
    }
    decided = std::move(decision.codes);
  }
  // Every process learns every process's address and size of the new registrations. Each attaches
  // its new areas to the dynamic window first: a process that has the addresses may read them at
  // once (bsp_direct_get), and some MPIs (Open MPI 5's osc/rdma) look a target's attached ranges
  // up without its help.
  const std::vector<std::uint64_t> mine = registry.pending_push_words();
  for (std::size_t i = 0; i + 1 < mine.size(); i += 2)
    direct_.attach(reinterpret_cast<char*>(static_cast<std::uintptr_t>(mine[i])), mine[i + 1]);
  std::vector<std::uint64_t> gathered(mine.size() * static_cast<std::size_t>(nprocs));
  if (!mine.empty()) {
    MPI_Request request;
    // NOLINTBEGIN(clang-analyzer-optin.mpi.MPI-Checker): wait_idle waits (MPI_Test)
    MPI_Iallgather(mine.data(), static_cast<int>(mine.size()), MPI_UINT64_T, gathered.data(),
                   static_cast<int>(mine.size()), MPI_UINT64_T, comm, &request);
    wait_idle(&request);
  }
  Registry::Change change = registry.apply(decided, gathered);
  // NOLINTEND(clang-analyzer-optin.mpi.MPI-Checker)
  if (!change.error.empty()) fail("bsp_pop_reg", "%s", change.error.c_str());
  // Registered memory is reachable by one-sided transfers (bsp_hpput, bsp_hpget, bsp_direct_get):
  // what was added is attached already, what was removed (a push and its pop in one superstep
  // included) leaves the window now.
  for (const auto& [area, bytes] : change.removed)
    direct_.detach(area, static_cast<std::uint64_t>(bytes));
}

void Runtime::finish() {
  if (checkpoints) checkpoints->close();
  for (auto& group : groups) {
    if (!group) continue;
    group->transport.close();  // a no-op for a group that never synchronised
    if (group.get() != world) MPI_Comm_free(&group->comm);
  }
  lender_.close();
  mailbox_.close();
  direct_.close();
  groups.clear();
  world = nullptr;
  MPI_Comm_free(&comm);
}

}  // namespace bspg
