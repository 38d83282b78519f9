// raw_format.h - what a profiled BSP process writes as it runs (bsprun --profile DIR, or
// BSPG_PROFILE=DIR for programs started by mpirun), and what bspprof reads back.
//
// Each process of each SPMD section of each attempt (a restart is a new attempt) writes one file,
//   DIR/raw/a<attempt>.s<section>.p<pid>.bspprof
// in the byte order and layout of the machine that wrote it (the merge runs where the job's
// files are gathered, on machines of one kind): one FileHeader, then for every sync one
// SyncRecord followed by its n_peers PeerCount entries. Records are appended as each sync returns,
// through a shared mapping of the file that grows ahead of them (so a process's memory does not
// grow with the number of supersteps). The kind of a record is written last. A process that ends
// without closing its file (a crash, a kill) leaves the space reserved ahead as zero bytes: a
// record of kind 0 ends the file, and so does the end of a file cut short.
//
// Times are seconds on one clock for the whole job: each process's monotonic clock plus the offset
// to process 0's clock measured at bsp_begin (the smallest-round-trip of several ping-pongs), so
// that the moment a process called a sync can be compared with when the others did.
#ifndef BSPG_PROFILER_RAW_FORMAT_H
#define BSPG_PROFILER_RAW_FORMAT_H

#include <cstdint>
#include <string>

namespace bspg::profile {

inline constexpr char kMagic[8] = {'B', 'S', 'P', 'G', 'P', 'R', 'F', '1'};
inline constexpr std::uint32_t kVersion = 1;

// The environment variable that switches profiling on: the directory to write into.
inline constexpr const char* kProfileVariable = "BSPG_PROFILE";
// Which attempt of a job this is (bsprun sets it: 0 for the first run, n after n restarts).
inline constexpr const char* kAttemptVariable = "BSPG_PROFILE_ATTEMPT";
// A number bsprun draws for each job, written into every file: when it gathers the files from
// other hosts, it takes only its own job's.
inline constexpr const char* kJobTokenVariable = "BSPG_PROFILE_JOB";

struct FileHeader {
  char magic[8];            // kMagic
  std::uint32_t version;    // kVersion
  std::int32_t pid;         // bsp_pid()
  std::int32_t nprocs;      // bsp_nprocs()
  std::int32_t attempt;     // kAttemptVariable, 0 without it
  std::int32_t section;     // SPMD section of the program: 0, 1, ... (bsp_begin after bsp_end)
  std::uint32_t job_token;  // kJobTokenVariable of process 0, 0 without it: which bsprun's job
  double clock_offset_s;    // added to this process's monotonic clock: process 0's
  double begin_s;           // job clock: when bsp_begin returned on this process
  std::uint64_t first_superstep;  // where this attempt's superstep numbers go on from: 0, or
                                  // after bspg_resume the world supersteps ended at the
                                  // checkpoint it restored (its number for the next world
                                  // sync), so that the attempts of a restarted job share one
                                  // axis; the syncs before bspg_resume keep numbers from 0
                                  // (0 too from a version 2 shard, which does not say)
  char host[64];                  // the host name, NUL-terminated (cut to 63 bytes)
};

enum class SyncKind : std::uint32_t {
  Sync = 1,        // bsp_sync
  GroupSync = 2,   // bspg_group_sync(group)
  Checkpoint = 3,  // bspg_checkpoint: its sync and the checkpoint's writing
  End = 4,         // the sync of bsp_end
};

struct SyncRecord {
  std::uint32_t kind;        // SyncKind
  std::int32_t group;        // group handle of a group sync; -1 for the world
  std::uint64_t superstep;   // world supersteps ended before this sync (the same on every process;
                             // after bspg_resume counted on from the checkpoint's)
  std::uint32_t group_step;  // group syncs of this group since the last world sync; 0 otherwise
  std::int32_t group_first;  // the lowest pid of the group (bspg_group_split gives every group of
                             // one split the same handle: handle and first pid tell them apart);
                             // -1 for the world
  double call_s;             // job clock: when the program called the sync
  double return_s;           // job clock: when the sync returned
  std::uint32_t group_size;  // processes that take part in this sync
  std::uint32_t n_peers;     // PeerCount entries that follow
};

// What this process did with one other process (or itself) in the superstep the sync ends.
// Bytes are the program's payload: puts' and gets' nbytes, sends' tag and payload; nothing of
// bspg's own metadata. hp variants count as their plain kinds.
struct PeerCount {
  std::int32_t peer;           // bsp_pid of the other process
  std::uint32_t put_messages;  // bsp_put / bsp_hpput calls to peer (data: here -> peer)
  std::uint64_t put_bytes;
  std::uint32_t send_messages;  // bsp_send / bsp_hpsend to peer (data: here -> peer)
  std::uint32_t get_messages;   // bsp_get / bsp_hpget from peer (data: peer -> here)
  std::uint64_t send_bytes;
  std::uint64_t get_bytes;
};

// a<attempt>.s<section>.p<pid>.bspprof: the file of one process of one section of one attempt.
inline std::string record_file_name(int attempt, int section, int pid) {
  return "a" + std::to_string(attempt) + ".s" + std::to_string(section) + ".p" +
         std::to_string(pid) + ".bspprof";
}

// The numbers of a name record_file_name made; false for any other name. Numbers have at most
// 9 digits and no leading zero, so that two names never stand for one file's process.
inline bool parse_record_file_name(const std::string& name, int& attempt, int& section, int& pid) {
  std::size_t at = 0;
  const auto literal = [&](const char* text) {
    const std::string expected = text;
    if (name.compare(at, expected.size(), expected) != 0) return false;
    at += expected.size();
    return true;
  };
  const auto number = [&](int& value) {
    const std::size_t start = at;
    long n = 0;
    while (at < name.size() && name[at] >= '0' && name[at] <= '9' && at - start < 9)
      n = n * 10 + (name[at++] - '0');
    if (at == start || (at < name.size() && name[at] >= '0' && name[at] <= '9')) return false;
    if (name[start] == '0' && at - start > 1) return false;
    value = static_cast<int>(n);
    return true;
  };
  return literal("a") && number(attempt) && literal(".s") && number(section) && literal(".p") &&
         number(pid) && literal(".bspprof") && at == name.size();
}

static_assert(sizeof(FileHeader) == 120, "FileHeader layout");
static_assert(sizeof(SyncRecord) == 48, "SyncRecord layout");
static_assert(sizeof(PeerCount) == 40, "PeerCount layout");

}  // namespace bspg::profile

#endif
