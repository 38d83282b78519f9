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

Runtime::Runtime(MPI_Comm comm_in, int pid_in, int nprocs_in, bool owns_mpi_in)
    : comm(comm_in),
      pid(pid_in),
      nprocs(nprocs_in),
      owns_mpi(owns_mpi_in),
      start_time(0),
      registry(nprocs_in),
      outbox(static_cast<std::size_t>(nprocs_in)),
      gets(static_cast<std::size_t>(nprocs_in)),
      get_bytes(static_cast<std::size_t>(nprocs_in), 0),
      schedule_(nprocs_in),
      replies_(static_cast<std::size_t>(nprocs_in)),
      row_(static_cast<std::size_t>(schedule_.row_words()), 0) {
  subjob = subjob_from_environment();
  std::vector<int> all(static_cast<std::size_t>(nprocs));
  MPI_Allgather(&subjob, 1, MPI_INT, all.data(), 1, MPI_INT, comm);
  for (int k : all) {
    if (static_cast<std::size_t>(k) >= subjob_sizes.size()) subjob_sizes.resize(static_cast<std::size_t>(k) + 1, 0);
    ++subjob_sizes[static_cast<std::size_t>(k)];
  }
  exchange_.open(comm, pid, nprocs);
  MPI_Barrier(comm);
  start_time = MPI_Wtime();
}

void Runtime::sync(SyncCall call) {
  const int p = nprocs;
  std::uint64_t* row = row_.data();
  row[Schedule::kCall] = static_cast<std::uint64_t>(call);
  row[Schedule::kPushCount] = registry.pending_push_count();
  row[Schedule::kPopCount] = registry.pending_pops().size();
  row[Schedule::kPopDigest] = registry.pending_pop_digest();
  row[Schedule::kFirstPop] =
      registry.pending_pops().empty() ? 0 : static_cast<std::uint64_t>(registry.pending_pops()[0]) + 1;
  row[Schedule::kTagSize] = requested_tag_nbytes < 0 ? 0 : static_cast<std::uint64_t>(requested_tag_nbytes) + 1;
  for (int d = 0; d < p; ++d) {
    pad_to_8(outbox[static_cast<std::size_t>(d)]);
    row[Schedule::kHeaderWords + 2 * d] = outbox[static_cast<std::size_t>(d)].size();
    row[Schedule::kHeaderWords + 2 * d + 1] = get_bytes[static_cast<std::size_t>(d)];
  }
  // The one collective of every superstep: everybody learns the whole schedule matrix.
  MPI_Allgather(row, schedule_.row_words(), MPI_UINT64_T, schedule_.matrix(), schedule_.row_words(),
                MPI_UINT64_T, comm);
  Schedule::Disagreement verdict = schedule_.check();
  if (verdict.found) fail_collective(verdict.reporter, verdict.call, "%s", verdict.message.c_str());

  // Messages of the last superstep are gone; this superstep's arrive now.
  queue.clear();
  queue_head = 0;
  queue_payload_bytes = 0;
  if (schedule_.any_data()) deliver();
  for (int d = 0; d < p; ++d) {
    outbox[static_cast<std::size_t>(d)].clear();
    gets[static_cast<std::size_t>(d)].clear();
    get_bytes[static_cast<std::size_t>(d)] = 0;
  }

  // Registrations and pops take effect now, after this superstep's data has moved.
  if (row[Schedule::kPushCount] || row[Schedule::kPopCount]) {
    std::vector<std::uint64_t> mine = registry.pending_push_words();
    std::vector<std::uint64_t> gathered(mine.size() * static_cast<std::size_t>(p));
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

void Runtime::deliver() {
  const int p = nprocs;
  exchange_.ensure_capacity(schedule_);
  for (int k = 0; k < p; ++k) {
    int d = schedule_.send_target(pid, k);
    const ByteBuffer& stream = outbox[static_cast<std::size_t>(d)];
    if (stream.size()) exchange_.put(d, schedule_.stream_offset(pid, d), stream.data(), stream.size());
  }
  exchange_.complete();

  const char* window = exchange_.window();
  // Gets read this process's memory as it was before any put of the superstep.
  if (schedule_.gets_for(pid)) serve_gets(window);
  apply_puts_and_messages(window);

  if (!schedule_.any_gets()) return;
  for (int k = 0; k < p; ++k) {
    int r = schedule_.send_target(pid, k);
    ByteBuffer& reply = replies_[static_cast<std::size_t>(r)];
    if (reply.size()) exchange_.put(r, schedule_.reply_offset(r, pid), reply.data(), reply.size());
  }
  exchange_.complete();
  for (int server = 0; server < p; ++server) {
    const char* at = exchange_.window() + schedule_.reply_offset(pid, server);
    for (const PendingGet& get : gets[static_cast<std::size_t>(server)]) {
      std::memcpy(get.dst, at, get.nbytes);
      at += get.nbytes;
    }
    replies_[static_cast<std::size_t>(server)].clear();
  }
}

void Runtime::serve_gets(const char* window) {
  for (int src = 0; src < nprocs; ++src) {
    if (!schedule_.reply_bytes(src, pid)) continue;
    ByteBuffer& reply = replies_[static_cast<std::size_t>(src)];
    bool ok = unpack_stream(
        window + schedule_.stream_offset(src, pid), schedule_.stream_bytes(src, pid),
        [](int, std::uint32_t, const char*, std::uint32_t) {},
        [&](int slot, std::uint32_t offset, std::uint32_t nbytes) {
          reply.append(registry.address(slot, pid) + offset, nbytes);
        },
        [](const char*, std::uint32_t, const char*, std::uint32_t) {});
    if (!ok) fail("bsp_sync", "internal error: malformed data stream from process %d", src);
  }
}

void Runtime::apply_puts_and_messages(const char* window) {
  for (int src = 0; src < nprocs; ++src) {
    std::uint64_t length = schedule_.stream_bytes(src, pid);
    if (!length) continue;
    bool ok = unpack_stream(
        window + schedule_.stream_offset(src, pid), length,
        [&](int slot, std::uint32_t offset, const char* payload, std::uint32_t nbytes) {
          std::memcpy(registry.address(slot, pid) + offset, payload, nbytes);
        },
        [](int, std::uint32_t, std::uint32_t) {},
        [&](const char* tag, std::uint32_t tag_nbytes, const char* payload, std::uint32_t nbytes) {
          queue.push_back({tag, payload, tag_nbytes, nbytes});
          queue_payload_bytes += nbytes;
        });
    if (!ok) fail("bsp_sync", "internal error: malformed data stream from process %d", src);
  }
}

void Runtime::finish() {
  exchange_.close();
  MPI_Comm_free(&comm);
}

}  // namespace bspg
