#include "runtime.hpp"

#include <cstdlib>
#include <cstring>

#include "errors.hpp"

namespace bspg {

Runtime* g_runtime = nullptr;
Phase g_phase = Phase::Before;

bool ensure_mpi() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) return false;
  // Debian's Open MPI leaves only osc/rdma, which fails over TCP and for a single process; sm
  // serves processes on one host and pt2pt everything else. A user's own choice wins.
  if (!std::getenv("OMPI_MCA_osc")) setenv("OMPI_MCA_osc", "sm,pt2pt", 0);
  MPI_Init(nullptr, nullptr);
  return true;
}

namespace {

int subjob_from_environment() {
  const char* text = std::getenv("BSPG_SUBJOB");
  if (!text || !*text) return 0;
  char* end = nullptr;
  long value = std::strtol(text, &end, 10);
  if (*end != '\0' || value < 0 || value > 1000000)
    fail("bsp_begin", "environment variable BSPG_SUBJOB='%s' is not a subjob index (0, 1, ...)", text);
  return static_cast<int>(value);
}

}  // namespace

Runtime::Runtime(MPI_Comm comm_in, int pid_in, int nprocs_in)
    : comm(comm_in),
      pid(pid_in),
      nprocs(nprocs_in),
      start_time(0),
      registry(nprocs_in),
      outbox(static_cast<std::size_t>(nprocs_in)),
      gets(static_cast<std::size_t>(nprocs_in)),
      get_bytes(static_cast<std::size_t>(nprocs_in), 0),
      mailbox_used(static_cast<std::size_t>(nprocs_in), 0) {
  std::vector<int> everyone(static_cast<std::size_t>(nprocs));
  for (int i = 0; i < nprocs; ++i) everyone[static_cast<std::size_t>(i)] = i;
  groups.push_back(std::make_unique<Group>(comm, everyone, pid));
  world = groups[0].get();
  world->exchange.open(comm, pid, nprocs);
  mailbox.open(comm, pid, nprocs);

  subjob = subjob_from_environment();
  std::vector<int> all(static_cast<std::size_t>(nprocs));
  MPI_Allgather(&subjob, 1, MPI_INT, all.data(), 1, MPI_INT, comm);
  for (int k : all) {
    if (static_cast<std::size_t>(k) >= subjob_sizes.size()) subjob_sizes.resize(static_cast<std::size_t>(k) + 1, 0);
    ++subjob_sizes[static_cast<std::size_t>(k)];
  }
  subjob_group = split(subjob);
  MPI_Barrier(comm);
  start_time = MPI_Wtime();
}

int Runtime::split(int color) {
  MPI_Comm group_comm;
  MPI_Comm_split(comm, color >= 0 ? color : MPI_UNDEFINED, pid, &group_comm);
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
  groups.push_back(std::make_unique<Group>(group_comm, std::move(members), rank));
  return handle;
}

void Runtime::check_group_superstep(const Group& group) const {
  if (registry.pending_push_count() || !registry.pending_pops().empty())
    fail("bspg_group_sync", "bsp_push_reg and bsp_pop_reg take effect only at bsp_sync, not at a group sync");
  if (requested_tag_nbytes >= 0)
    fail("bspg_group_sync", "bsp_set_tagsize takes effect only at bsp_sync, not at a group sync");
  // Communication with processes outside the group would wait for a sync that never includes them.
  std::size_t member = 0;
  for (int d = 0; d < nprocs; ++d) {
    if (member < group.members.size() && group.members[member] == d) {
      ++member;
      continue;
    }
    if (outbox[static_cast<std::size_t>(d)].size() || get_bytes[static_cast<std::size_t>(d)] ||
        mailbox_used[static_cast<std::size_t>(d)])
      fail("bspg_group_sync",
           "this superstep puts, gets or sends to process %d, which is not in the group; only bsp_sync delivers that",
           d);
  }
}

void Runtime::sync(Group& group, SyncCall call) {
  const int q = group.size();
  if (&group != world) check_group_superstep(group);
  std::uint64_t* row = group.row.data();
  row[Schedule::kCall] = static_cast<std::uint64_t>(call);
  row[Schedule::kPushCount] = registry.pending_push_count();
  row[Schedule::kPopCount] = registry.pending_pops().size();
  row[Schedule::kPopDigest] = registry.pending_pop_digest();
  row[Schedule::kFirstPop] =
      registry.pending_pops().empty() ? 0 : static_cast<std::uint64_t>(registry.pending_pops()[0]) + 1;
  row[Schedule::kTagSize] = requested_tag_nbytes < 0 ? 0 : static_cast<std::uint64_t>(requested_tag_nbytes) + 1;
  for (int i = 0; i < q; ++i) {
    auto d = static_cast<std::size_t>(group.members[static_cast<std::size_t>(i)]);
    pad_to_8(outbox[d]);
    row[Schedule::stream_word(i)] = outbox[d].size();
    row[Schedule::reply_word(i)] = get_bytes[d];
    row[Schedule::mailbox_word(i)] = mailbox_used[d];
  }
  // The one collective of every superstep: everybody learns the whole schedule matrix.
  MPI_Allgather(row, group.schedule.row_words(), MPI_UINT64_T, group.schedule.matrix(),
                group.schedule.row_words(), MPI_UINT64_T, group.comm);
  Schedule::Disagreement verdict = group.schedule.check();
  if (verdict.found)
    fail_collective(group.members[static_cast<std::size_t>(verdict.reporter)], verdict.call, "%s",
                    verdict.message.c_str());

  // Messages of the last superstep are gone; this superstep's arrive now.
  queue.clear();
  queue_head = 0;
  queue_payload_bytes = 0;
  if (group.schedule.any_data()) deliver(group);
  for (int d : group.members) {
    outbox[static_cast<std::size_t>(d)].clear();
    gets[static_cast<std::size_t>(d)].clear();
    get_bytes[static_cast<std::size_t>(d)] = 0;
    mailbox_used[static_cast<std::size_t>(d)] = 0;
  }
  mailbox_written = false;
  if (&group != world) return;

  // Registrations and pops take effect now, after this superstep's data has moved.
  if (row[Schedule::kPushCount] || row[Schedule::kPopCount]) {
    std::vector<std::uint64_t> mine = registry.pending_push_words();
    std::vector<std::uint64_t> gathered(mine.size() * static_cast<std::size_t>(q));
    if (!mine.empty())
      MPI_Allgather(mine.data(), static_cast<int>(mine.size()), MPI_UINT64_T, gathered.data(),
                    static_cast<int>(mine.size()), MPI_UINT64_T, comm);
    registry.apply(gathered);
  }
  if (requested_tag_nbytes >= 0) {
    tag_nbytes = static_cast<std::uint32_t>(requested_tag_nbytes);
    requested_tag_nbytes = -1;
  }
}

void Runtime::deliver(Group& group) {
  const int q = group.size();
  const Schedule& schedule = group.schedule;
  if (!group.exchange.is_open()) group.exchange.open(group.comm, group.rank, q);
  group.exchange.ensure_capacity(schedule);
  for (int k = 0; k < q; ++k) {
    int d = schedule.send_target(group.rank, k);
    const ByteBuffer& stream = outbox[static_cast<std::size_t>(group.members[static_cast<std::size_t>(d)])];
    if (stream.size()) group.exchange.put(d, schedule.stream_offset(group.rank, d), stream.data(), stream.size());
  }
  if (mailbox_written) mailbox.flush();
  group.exchange.complete();
  mailbox.sync_memory();

  const char* window = group.exchange.window();
  // Gets read this process's memory as it was before any put of the superstep.
  if (schedule.gets_for(group.rank)) serve_gets(group, window);
  apply_puts_and_messages(group, window);
  // Writers may fill their mailboxes again once every receiver has applied them.
  if (schedule.any_mailbox()) MPI_Barrier(group.comm);

  if (!schedule.any_gets()) return;
  for (int k = 0; k < q; ++k) {
    int r = schedule.send_target(group.rank, k);
    ByteBuffer& reply = group.replies[static_cast<std::size_t>(r)];
    if (reply.size()) group.exchange.put(r, schedule.reply_offset(r, group.rank), reply.data(), reply.size());
  }
  group.exchange.complete();
  for (int server = 0; server < q; ++server) {
    const char* at = group.exchange.window() + schedule.reply_offset(group.rank, server);
    for (const PendingGet& get : gets[static_cast<std::size_t>(group.members[static_cast<std::size_t>(server)])]) {
      std::memcpy(get.dst, at, get.nbytes);
      at += get.nbytes;
    }
    group.replies[static_cast<std::size_t>(server)].clear();
  }
}

void Runtime::serve_gets(Group& group, const char* window) {
  const Schedule& schedule = group.schedule;
  for (int src = 0; src < group.size(); ++src) {
    if (!schedule.reply_bytes(src, group.rank)) continue;
    ByteBuffer& reply = group.replies[static_cast<std::size_t>(src)];
    bool ok = unpack_stream(
        window + schedule.stream_offset(src, group.rank), schedule.stream_bytes(src, group.rank),
        [](int, std::uint32_t, const char*, std::uint32_t) {},
        [&](int slot, std::uint32_t offset, std::uint32_t nbytes) {
          reply.append(registry.address(slot, pid) + offset, nbytes);
        },
        [](const char*, std::uint32_t, const char*, std::uint32_t) {});
    if (!ok) fail("bsp_sync", "internal error: malformed data stream from process %d", group.members[static_cast<std::size_t>(src)]);
  }
}

void Runtime::apply_puts_and_messages(Group& group, const char* window) {
  const Schedule& schedule = group.schedule;
  for (int src = 0; src < group.size(); ++src) {
    auto apply_put = [&](int slot, std::uint32_t offset, const char* payload, std::uint32_t nbytes) {
      copy_bytes(registry.address(slot, pid) + offset, payload, nbytes);
    };
    // The mailbox holds the source's first puts to us this superstep, so it goes first.
    if (std::uint64_t direct = schedule.mailbox_bytes(src, group.rank)) {
      int global_src = group.members[static_cast<std::size_t>(src)];
      if (!unpack_stream(mailbox.incoming(global_src), direct, apply_put,
                         [](int, std::uint32_t, std::uint32_t) {},
                         [](const char*, std::uint32_t, const char*, std::uint32_t) {}))
        fail("bsp_sync", "internal error: malformed mailbox from process %d", global_src);
    }
    std::uint64_t length = schedule.stream_bytes(src, group.rank);
    if (!length) continue;
    bool ok = unpack_stream(
        window + schedule.stream_offset(src, group.rank), length, apply_put,
        [](int, std::uint32_t, std::uint32_t) {},
        [&](const char* tag, std::uint32_t tag_nbytes, const char* payload, std::uint32_t nbytes) {
          queue.push_back({tag, payload, tag_nbytes, nbytes});
          queue_payload_bytes += nbytes;
        });
    if (!ok) fail("bsp_sync", "internal error: malformed data stream from process %d", group.members[static_cast<std::size_t>(src)]);
  }
}

bool Runtime::try_direct_put(int dst, int slot, std::uint32_t offset, const void* src, std::uint32_t nbytes) {
  auto d = static_cast<std::size_t>(dst);
  // Only while nothing else went to dst this superstep: the receiver applies the mailbox first.
  if (outbox[d].size()) return false;
  std::uint64_t record = kHeaderBytes + align4(nbytes);
  if (mailbox_used[d] + record > mailbox.region_bytes()) return false;
  std::uint32_t header[3] = {static_cast<std::uint32_t>(slot) << 2 | kPut, offset, nbytes};
  mailbox.put(dst, mailbox_used[d], header, kHeaderBytes, src, nbytes);
  mailbox_used[d] += record;
  mailbox_written = true;
  return true;
}

void Runtime::finish() {
  mailbox.close();
  for (auto& group : groups) {
    if (!group) continue;
    group->exchange.close();  // a no-op for a group that never moved data
    if (group.get() != world) MPI_Comm_free(&group->comm);
  }
  groups.clear();
  world = nullptr;
  MPI_Comm_free(&comm);
}

}  // namespace bspg
