// api.cpp - the BSPlib C entry points. Each validates its arguments and names itself in any
// error; the work is recorded in the Runtime and done at the next bsp_sync.
#include <mpi.h>
#include <stdlib.h>

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bsp.h"
#include "bspg.h"
#include "crash.hpp"
#include "errors.hpp"
#include "profile.hpp"
#include "runtime.hpp"
#include "section.hpp"

using bspg::fail;
using bspg::g_phase;
using bspg::g_runtime;
using bspg::Phase;
using bspg::Runtime;

namespace {

bool init_called = false;  // bsp_init named the SPMD function

// Nested runs: each nested bsp_begin sets the outer section's Runtime and profiler aside here
// (innermost last); its bsp_end brings them back.
struct OuterRun {
  Runtime* runtime;
  bspg::Profiler* profiler;
};
std::vector<OuterRun> outer_runs;

using bspg::section::start_mpi;

[[noreturn]] void outside_spmd(const char* call) {
  // Make sure MPI runs, so that one process reports and all stop, even before bsp_begin.
  if (g_phase == Phase::Before) start_mpi();
  fail(call, "called outside the SPMD section (%s)",
       g_phase == Phase::Before ? "before bsp_begin" : "after bsp_end");
}

inline Runtime& spmd(const char* call) {
  if (__builtin_expect(g_runtime == nullptr, 0)) outside_spmd(call);
  return *g_runtime;
}

inline void check_pid(const char* call, const Runtime& rt, int pid) {
  if (__builtin_expect(static_cast<unsigned>(pid) >= static_cast<unsigned>(rt.nprocs), 0))
    fail(call, "pid %d is out of range 0..%d", pid, rt.nprocs - 1);
}

// The argument checks every put and get makes before looking at registrations.
inline void check_transfer(const char* call, const Runtime& rt, int pid, int offset, int nbytes) {
  check_pid(call, rt, pid);
  if (__builtin_expect(offset < 0, 0)) fail(call, "negative offset %d", offset);
  if (__builtin_expect(nbytes < 0, 0)) fail(call, "negative size %d", nbytes);
}

[[noreturn]] void not_registered(const char* call, const char* role, const void* address) {
  if (g_runtime->registry.is_pending_push(address))
    fail(call, "%s %p is registered, but the registration takes effect at the next bsp_sync", role,
         address);
  for (const OuterRun& outer : outer_runs)
    if (outer.runtime->registry.lookup(address) >= 0)
      fail(call,
           "%s %p is registered in an outer SPMD section, not in this nested run (its bsp_begin "
           "started with no registrations; bsp_push_reg it here, then bsp_sync, before use)",
           role, address);
  fail(call, "%s %p is not registered (bsp_push_reg it, then bsp_sync, before use)", role, address);
}

// Slot of a registered area on the remote process, checked against the remote size.
inline int remote_slot(const char* call, const char* role, const char* verb, const Runtime& rt,
                       const void* address, int pid, int offset, int nbytes) {
  int slot = rt.registry.lookup(address);
  if (__builtin_expect(slot < 0, 0)) not_registered(call, role, address);
  std::int64_t registered = rt.registry.size(slot, pid);
  std::int64_t end = static_cast<std::int64_t>(offset) + nbytes;
  if (__builtin_expect(end > registered, 0)) {
    // The same slot with another size here: maybe another variable, registered out of order.
    const std::int64_t here = rt.registry.size(slot, rt.pid);
    char hint[320] = "";
    if (here != registered)
      std::snprintf(hint, sizeof hint,
                    "; its registration slot %d holds %lld bytes on this process and %lld on "
                    "process %d: if those are different variables, bsp_push_reg was called in a "
                    "different order on the two (make the registrations in the same order on "
                    "every process)",
                    slot, static_cast<long long>(here), static_cast<long long>(registered), pid);
    fail(call,
         "%s %lld bytes beyond the area registered on process %d (offset %d + %d bytes > %lld "
         "registered bytes)%s",
         verb, static_cast<long long>(end - registered), pid, offset, nbytes,
         static_cast<long long>(registered), hint);
  }
  return slot;
}

inline void put(const char* call, int pid, const void* src, void* dst, int offset, int nbytes,
                bool unbuffered) {
  Runtime& rt = spmd(call);
  check_transfer(call, rt, pid, offset, nbytes);
  if (nbytes == 0) return;
  int slot = remote_slot(call, "destination", "writes", rt, dst, pid, offset, nbytes);
  if (__builtin_expect(src == nullptr, 0)) fail(call, "source is NULL");
  if (__builtin_expect(bspg::g_profiler != nullptr, 0))
    bspg::g_profiler->count_put(pid, static_cast<std::uint32_t>(nbytes));
  rt.put(pid, slot, static_cast<std::uint32_t>(offset), src, static_cast<std::uint32_t>(nbytes),
         unbuffered);
}

// The checks of every get: the source's slot on pid, or -1 when there is nothing to read.
inline int get_source_slot(const char* call, Runtime& rt, int pid, const void* src, int offset,
                           const void* dst, int nbytes) {
  check_transfer(call, rt, pid, offset, nbytes);
  if (nbytes == 0) return -1;
  int slot = remote_slot(call, "source", "reads", rt, src, pid, offset, nbytes);
  if (__builtin_expect(dst == nullptr, 0)) fail(call, "destination is NULL");
  return slot;
}

inline void get(const char* call, int pid, const void* src, int offset, void* dst, int nbytes,
                bool unbuffered) {
  Runtime& rt = spmd(call);
  const int slot = get_source_slot(call, rt, pid, src, offset, dst, nbytes);
  if (slot < 0) return;
  if (__builtin_expect(bspg::g_profiler != nullptr, 0))
    bspg::g_profiler->count_get(pid, static_cast<std::uint32_t>(nbytes));
  rt.get(pid, slot, static_cast<std::uint32_t>(offset), dst, static_cast<std::uint32_t>(nbytes),
         unbuffered);
}

// Inlined into bsp_send and bsp_hpsend each: a program may send 100,000 messages a superstep.
inline __attribute__((always_inline)) void send(const char* call, int pid, const void* tag,
                                                const void* payload, int payload_nbytes,
                                                bool unbuffered) {
  Runtime& rt = spmd(call);
  check_pid(call, rt, pid);
  if (payload_nbytes < 0) fail(call, "negative size %d", payload_nbytes);
  if (tag == nullptr && rt.tag_nbytes > 0)
    fail(call, "tag is NULL but the tag size is %u bytes", rt.tag_nbytes);
  if (payload == nullptr && payload_nbytes > 0)
    fail(call, "payload is NULL with size %d", payload_nbytes);
  if (__builtin_expect(bspg::g_profiler != nullptr, 0))
    bspg::g_profiler->count_send(pid, rt.tag_nbytes + static_cast<std::uint32_t>(payload_nbytes));
  rt.send(pid, tag, payload, static_cast<std::uint32_t>(payload_nbytes), unbuffered);
}

bspg::Group& member_group(const char* call, int handle) {
  Runtime& rt = spmd(call);
  bspg::Group* group = rt.group(handle);
  if (group == nullptr) {
    if (handle < 0 || static_cast<std::size_t>(handle) >= rt.groups.size())
      fail(call,
           "group %d does not exist (handles come from bspg_group_split or bspg_subjob_group)",
           handle);
    fail(call, "this process is not a member of group %d", handle);
  }
  return *group;
}

// Runs a sync, recording it when the section is profiled. group: its handle, -1 for the world.
template <typename SyncFunction>
void profiled_sync(Runtime& rt, bspg::profile::SyncKind kind, SyncFunction&& sync,
                   const bspg::Group* group = nullptr, int handle = -1) {
  bspg::Profiler* profiler = bspg::g_profiler;
  if (__builtin_expect(profiler == nullptr, 1)) return sync();
  const double call_s = profiler->now();
  const std::uint64_t superstep = rt.world_syncs;  // the number of the one this sync ends
  sync();
  if (group == nullptr || group == rt.world)
    profiler->record_sync(kind, -1, -1, rt.nprocs, call_s, superstep);
  else
    profiler->record_sync(kind, handle, group->members.front(), group->size(), call_s, superstep);
}

// How a section ends: bsp_end, its SPMD part's return (a process that runs parts only), or the
// program's end (exit, or main's return) inside it.
enum class Ending { BspEnd, PartReturned, ProgramEnded };

// bsp_end's work, also for a section that ends without it: the last superstep's communication is
// delivered, and the lowest pid that ended so says it once (for a nested run, naming it so that
// an exit that ends it and the sections around it says so once for each). Returns the pid.
int end_section(Ending ending) {
  const bool ended_by_exit = ending != Ending::BspEnd;
  const bool nested = ended_by_exit && bspg::section::in_nested_run();
  Runtime& rt = *g_runtime;
  profiled_sync(rt, bspg::profile::SyncKind::End, [&] { rt.sync(bspg::SyncCall::End); });
  delete bspg::g_profiler;  // the last records are on disk before anything can go wrong
  bspg::g_profiler = nullptr;
  int first = ended_by_exit ? rt.pid : rt.nprocs;  // the lowest pid that did not call bsp_end
  MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, rt.comm);
  if (ended_by_exit && first == rt.pid) {
    std::fflush(stdout);
    std::fprintf(stderr, "bspg: process %d: %s without bsp_end; ending the %s as bsp_end would\n",
                 rt.pid,
                 ending == Ending::PartReturned || init_called ? "the SPMD function returned"
                                                               : "the program ended (status 0)",
                 nested ? "nested run" : "SPMD section");
    std::fflush(stderr);
  }
  rt.finish();
  const int pid = rt.pid;
  delete g_runtime;
  g_runtime = nullptr;
  g_phase = Phase::After;
  bspg::section::leave();
  if (!outer_runs.empty()) {
    // A nested run ended: the outer section goes on, as it was.
    g_runtime = outer_runs.back().runtime;
    bspg::g_profiler = outer_runs.back().profiler;
    outer_runs.pop_back();
    g_phase = Phase::Inside;
  }
  return pid;
}

// on_exit handler, installed by bsp_begin: the program ends (the SPMD function returned, main
// returned, or exit was called) inside the SPMD section. Status 0 ends the section as bsp_end
// would; any other status stops the job with that status (one line naming the process and the
// status, then one quiet abort).
void end_at_exit(int status, void* /*unused*/) {
  if (g_phase != Phase::Inside || g_runtime == nullptr) return;
  if (status != 0) bspg::stop_after_exit(status);
  // Inside a nested run: it ends first, then each outer section around it.
  while (g_phase == Phase::Inside && g_runtime != nullptr) end_section(Ending::ProgramEnded);
}

// bsp_begin inside a section: a nested run, with processes of its own, this one its pid 0. Not
// profiled (the outer section's profile goes on after it): its pid 0 tells the others, in the
// profiler's start, that there is no profile directory.
void begin_nested(int maxprocs) {
  outer_runs.push_back({g_runtime, bspg::g_profiler});
  g_runtime = nullptr;
  bspg::g_profiler = nullptr;
  const bspg::Membership member = bspg::section::begin_nested(maxprocs);
  g_runtime = new Runtime(member.comm, member.pid, member.nprocs);
  const char* set = std::getenv(bspg::profile::kProfileVariable);
  const bool profiled = set != nullptr;
  const std::string directory = profiled ? set : "";
  if (profiled) unsetenv(bspg::profile::kProfileVariable);
  bspg::g_profiler = bspg::Profiler::start(member.comm, member.pid, member.nprocs);
  if (profiled) setenv(bspg::profile::kProfileVariable, directory.c_str(), 1);
}

// The sections part's hook, set before main: an SPMD part that the sections part ran on a process
// that runs SPMD parts only returned without bsp_end.
void end_section_after_return() {
  if (g_phase == Phase::Inside && g_runtime != nullptr) end_section(Ending::PartReturned);
}

// After a loss, before a recovery in place starts the process again: the section in progress is
// abandoned, not ended (its communicators are revoked, and its windows' peers may be gone). Its
// runtime stays allocated; its checkpoint files are closed (a lock among them).
void forget_section() {
  if (g_runtime != nullptr && g_runtime->checkpoints) g_runtime->checkpoints->abandon();
  for (const OuterRun& outer : outer_runs)
    if (outer.runtime != nullptr && outer.runtime->checkpoints)
      outer.runtime->checkpoints->abandon();
  outer_runs.clear();
  g_runtime = nullptr;
  bspg::g_profiler = nullptr;
  init_called = false;
}

__attribute__((constructor)) void set_sections_hook() {
  bspg::section::set_end_section_hook(end_section_after_return);
  bspg::section::set_forget_section_hook(forget_section);
}

// Checkpoints are a job's (bsprun restarts the job from one): a nested run, whose processes end
// with it, has none.
Runtime& checkpointing_run(const char* call) {
  Runtime& rt = spmd(call);
  if (__builtin_expect(bspg::section::in_nested_run(), 0))
    fail(call,
         "checkpoints are not supported inside a nested run (its processes end with it); "
         "checkpoint in the outer section, after the nested bsp_end");
  return rt;
}

}  // namespace

#pragma GCC visibility push(default)
extern "C" {

void bsp_begin(int maxprocs) {
  if (g_phase == Phase::Inside) {
    // A nested run starts only where bsp_init named its part in this section: a second
    // bsp_begin of a program written for one level is a mistake, not a run of its own.
    if (!bspg::section::nested_part_named())
      fail("bsp_begin",
           "called twice (inside the SPMD section it started; bsp_end it first, or name a nested "
           "run's SPMD part with bsp_init before its bsp_begin)");
    return begin_nested(maxprocs);
  }
  bspg::section::trace_recovery("bsp_begin");
  const bspg::Membership member = bspg::section::begin(maxprocs);
  if (member.comm == MPI_COMM_NULL) return;  // not needed: as after bsp_end
  g_runtime = new Runtime(member.comm, member.pid, member.nprocs);
  g_phase = Phase::Inside;
  bspg::g_profiler = bspg::Profiler::start(member.comm, member.pid, member.nprocs);
  bspg::section::trace_recovery("bsp_begin done");
  // Runs before the handlers installed earlier (those of MPI's start, which expect the section
  // to be over) and before the destructors of anything built so far.
  static bool end_at_exit_installed = false;
  if (!end_at_exit_installed) on_exit(end_at_exit, nullptr);
  end_at_exit_installed = true;
}

void bsp_end(void) {
  spmd("bsp_end");
  bspg::section::after_bsp_end(end_section(Ending::BspEnd));
}

void bsp_init(void (*spmd_part)(void), int argc, char* argv[]) {
  (void)argc;
  (void)argv;
  if (spmd_part == nullptr) fail("bsp_init", "the SPMD function is NULL");
  // Inside a section: names the part of a nested run, which the next bsp_begin starts.
  if (g_phase == Phase::Inside) return bspg::section::init_nested(spmd_part);
  init_called = true;  // before the part runs: its return is reported as the SPMD function's
  bspg::section::init(spmd_part);
}

int bsp_nprocs(void) {
  if (g_runtime) {
    // Between bsp_init inside a section and its nested bsp_begin: what that run may have.
    if (__builtin_expect(bspg::section::nested_part_named(), 0))
      return bspg::section::nested_available();
    return g_runtime->nprocs;
  }
  return bspg::section::nprocs();
}

int bsp_pid(void) { return spmd("bsp_pid").pid; }

double bsp_time(void) {
  Runtime& rt = spmd("bsp_time");
  return MPI_Wtime() - rt.start_time;
}

void bsp_sync(void) {
  Runtime& rt = spmd("bsp_sync");
  profiled_sync(rt, bspg::profile::SyncKind::Sync, [&] { rt.sync(bspg::SyncCall::Sync); });
}

void bsp_abort(const char* format, ...) {
  va_list args;
  va_start(args, format);
  bsp_vabort(format, args);
}

void bsp_vabort(const char* format, va_list args) {
  // With MPI running every process knows its rank, so that before bsp_begin only process 0 prints.
  if (g_phase == Phase::Before) start_mpi();
  bspg::abort_with_user_message(format, args);
}

void bsp_push_reg(const void* ident, int size) {
  Runtime& rt = spmd("bsp_push_reg");
  if (size < 0) fail("bsp_push_reg", "negative size %d", size);
  if (ident == nullptr && size > 0)
    fail("bsp_push_reg", "NULL address with size %d (NULL needs size 0)", size);
  rt.registry.push(ident, size);
  rt.note_deferred_call("bsp_push_reg", __builtin_return_address(0));
}

void bsp_pop_reg(const void* ident) {
  Runtime& rt = spmd("bsp_pop_reg");
  // A registration pushed in this superstep may be popped too: both take effect at the sync, in
  // order.
  if (!rt.registry.pop(ident))
    fail("bsp_pop_reg", "%p is not registered (or all its registrations are already popped)",
         ident);
  rt.note_deferred_call("bsp_pop_reg", __builtin_return_address(0));
}

void bsp_put(int pid, const void* src, void* dst, int offset, int nbytes) {
  put("bsp_put", pid, src, dst, offset, nbytes, false);
}

void bsp_hpput(int pid, const void* src, void* dst, int offset, int nbytes) {
  put("bsp_hpput", pid, src, dst, offset, nbytes, true);
}

void bsp_get(int pid, const void* src, int offset, void* dst, int nbytes) {
  get("bsp_get", pid, src, offset, dst, nbytes, false);
}

void bsp_hpget(int pid, const void* src, int offset, void* dst, int nbytes) {
  get("bsp_hpget", pid, src, offset, dst, nbytes, true);
}

void bsp_direct_get(int pid, const void* src, int offset, void* dst, int nbytes) {
  Runtime& rt = spmd("bsp_direct_get");
  const int slot = get_source_slot("bsp_direct_get", rt, pid, src, offset, dst, nbytes);
  if (slot < 0) return;
  if (__builtin_expect(bspg::g_profiler != nullptr, 0))
    bspg::g_profiler->count_get(pid, static_cast<std::uint32_t>(nbytes));
  rt.direct_get(pid, slot, static_cast<std::uint32_t>(offset), dst,
                static_cast<std::uint32_t>(nbytes));
}

void bsp_set_tagsize(int* tag_nbytes) {
  Runtime& rt = spmd("bsp_set_tagsize");
  if (tag_nbytes == nullptr) fail("bsp_set_tagsize", "tag_nbytes is NULL");
  if (*tag_nbytes < 0) fail("bsp_set_tagsize", "negative tag size %d", *tag_nbytes);
  rt.requested_tag_nbytes = *tag_nbytes;
  rt.note_deferred_call("bsp_set_tagsize", __builtin_return_address(0));
  *tag_nbytes = static_cast<int>(rt.tag_nbytes);
}

void bsp_send(int pid, const void* tag, const void* payload, int payload_nbytes) {
  send("bsp_send", pid, tag, payload, payload_nbytes, false);
}

void bsp_hpsend(int pid, const void* tag, const void* payload, int payload_nbytes) {
  send("bsp_hpsend", pid, tag, payload, payload_nbytes, true);
}

void bsp_qsize(int* nmessages, int* accum_nbytes) {
  Runtime& rt = spmd("bsp_qsize");
  if (nmessages) *nmessages = static_cast<int>(rt.queue.size());
  if (accum_nbytes) *accum_nbytes = static_cast<int>(rt.queue.payload_bytes());
}

void bsp_get_tag(int* status, void* tag) {
  Runtime& rt = spmd("bsp_get_tag");
  if (status == nullptr) fail("bsp_get_tag", "status is NULL");
  if (rt.queue.size() == 0) {
    *status = -1;
    return;
  }
  const bspg::Message& m = rt.queue.front("bsp_get_tag");
  *status = static_cast<int>(m.payload_nbytes);
  if (m.tag_nbytes) {
    if (tag == nullptr)
      fail("bsp_get_tag", "tag buffer is NULL but the message has a %u-byte tag", m.tag_nbytes);
    bspg::copy_bytes(tag, m.tag, m.tag_nbytes);
  }
}

void bsp_move(void* payload, int reception_nbytes) {
  Runtime& rt = spmd("bsp_move");
  if (reception_nbytes < 0) fail("bsp_move", "negative size %d", reception_nbytes);
  if (rt.queue.size() == 0)
    fail("bsp_move", "the message queue is empty (check bsp_qsize or bsp_get_tag's status first)");
  const bspg::Message& m = rt.queue.front("bsp_move");
  std::uint32_t n = m.payload_nbytes < static_cast<std::uint32_t>(reception_nbytes)
                        ? m.payload_nbytes
                        : static_cast<std::uint32_t>(reception_nbytes);
  if (n) {
    if (payload == nullptr)
      fail("bsp_move", "payload buffer is NULL with size %d", reception_nbytes);
    bspg::copy_bytes(payload, m.payload, n);
  }
  rt.queue.pop();
}

int bsp_hpmove(void** tag_ptr_buf, void** payload_ptr_buf) {
  Runtime& rt = spmd("bsp_hpmove");
  if (rt.queue.size() == 0) return -1;
  if (tag_ptr_buf == nullptr || payload_ptr_buf == nullptr)
    fail("bsp_hpmove", "tag_ptr_buf and payload_ptr_buf must not be NULL");
  const bspg::Message& m = rt.queue.front("bsp_hpmove");
  *tag_ptr_buf = const_cast<char*>(m.tag);
  *payload_ptr_buf = const_cast<char*>(m.payload);
  const int nbytes = static_cast<int>(m.payload_nbytes);
  rt.queue.pop();
  return nbytes;
}

int bspg_subjob(void) { return spmd("bspg_subjob").subjob; }

int bspg_nsubjobs(void) { return static_cast<int>(spmd("bspg_nsubjobs").subjob_sizes.size()); }

int bspg_subjob_nprocs(int k) {
  Runtime& rt = spmd("bspg_subjob_nprocs");
  if (k < 0 || static_cast<std::size_t>(k) >= rt.subjob_sizes.size())
    fail("bspg_subjob_nprocs", "subjob %d is out of range 0..%d", k,
         static_cast<int>(rt.subjob_sizes.size()) - 1);
  return rt.subjob_sizes[static_cast<std::size_t>(k)];
}

void bspg_group_sync(int group) {
  bspg::Group& g = member_group("bspg_group_sync", group);
  Runtime& rt = *g_runtime;
  profiled_sync(
      rt, bspg::profile::SyncKind::GroupSync, [&] { rt.sync(g, bspg::SyncCall::Sync); }, &g, group);
}

int bspg_group_nprocs(int group) { return member_group("bspg_group_nprocs", group).size(); }

int bspg_group_pid(int group) { return member_group("bspg_group_pid", group).rank; }

int bspg_group_member(int group, int rank) {
  bspg::Group& g = member_group("bspg_group_member", group);
  if (rank < 0 || rank >= g.size())
    fail("bspg_group_member", "rank %d is out of range 0..%d", rank, g.size() - 1);
  return g.members[static_cast<std::size_t>(rank)];
}

void bspg_persist(void* addr, size_t nbytes) {
  Runtime& rt = checkpointing_run("bspg_persist");
  if (addr == nullptr && nbytes > 0) fail("bspg_persist", "NULL address with size %zu", nbytes);
  rt.checkpointing().persist(addr, nbytes);
}

int bspg_resume(void) {
  Runtime& rt = checkpointing_run("bspg_resume");
  bspg::section::trace_recovery("bspg_resume");
  bspg::Checkpoints& checkpoints = rt.checkpointing();
  const int from = checkpoints.resume();
  bspg::section::trace_recovery("bspg_resume done");
  // A restarted attempt's profile numbers its supersteps on from the checkpoint's (which the
  // runtime's count now holds; a checkpoint of format 2 does not say).
  if (from > 0 && bspg::g_profiler != nullptr && checkpoints.restored_supersteps() > 0)
    bspg::g_profiler->continue_at(rt.world_syncs);
  return from;
}

int bspg_checkpoint(void) {
  Runtime& rt = checkpointing_run("bspg_checkpoint");
  int number = 0;
  // Ends the superstep exactly as bsp_sync does, then saves it.
  profiled_sync(rt, bspg::profile::SyncKind::Checkpoint, [&] {
    rt.sync(bspg::SyncCall::Sync);
    number = rt.checkpointing().checkpoint();
  });
  return number;
}

size_t bspg_sync_metadata_bytes(void) {
  return static_cast<size_t>(spmd("bspg_sync_metadata_bytes").metadata_bytes_last_sync());
}

size_t bspg_sync_cross_subjob_bytes(void) {
  return static_cast<size_t>(spmd("bspg_sync_cross_subjob_bytes").cross_subjob_bytes_last_sync());
}

int bspg_group_split(int color) { return spmd("bspg_group_split").split(color); }

int bspg_subjob_group(void) { return spmd("bspg_subjob_group").subjob_group; }

}  // extern "C"
#pragma GCC visibility pop
