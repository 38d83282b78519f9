// section.cpp - the rule of who runs what, for each way a process was started:
//   - all at once by a starter (mpirun -np N, bsprun -p N): every process starts MPI before main,
//     and the others than process 0 wait there for one start message from process 0, at its
//     first bsp_begin (how many take part, and the SPMD part bsp_init named, which they then run
//     instead of main; no part: they run main too) or when its program ends (they end too);
//   - a master, started alone by bsprun: it runs main; its bsp_begin spawns the others;
//   - a process a master spawned: it runs the part the master named, or main where there is none.
//   - inside a section, a process whose bsp_begin starts a nested run: it spawns the others as a
//     master does (from MPI_COMM_SELF, no pool), which run as a master's spawned processes, and
//     goes on in its own section after the nested bsp_end (begin_nested, leave).
// Between sections the processes that run SPMD parts only wait ("park") for the next start
// message, which names the part to run, instead of ending at bsp_end; they end when process 0
// ends. A program that starts MPI itself, or a plain run without a starter, runs main everywhere.
//
// This file and startup.cpp are the top of sections/: they call down into all_at_once.cpp and
// master.cpp, which call neither each other nor up, and all into the pieces both share
// (start_message, part_location, spmd_part, mpi_state, exit_notes) and the globals
// (docs/code-layout.md draws it). The one call up, ending a section whose SPMD part returned, is
// the API layer's hook (set_end_section_hook).
#include "section.hpp"

#include <fcntl.h>
#include <mpi.h>
#include <setjmp.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "all_at_once.hpp"
#include "crash.hpp"
#include "errors.hpp"
#include "exit_notes.hpp"
#include "globals.hpp"
#include "in_place.hpp"
#include "master.hpp"
#include "mpi_state.hpp"
#include "part_location.hpp"
#include "runtime.hpp"
#include "spmd_part.hpp"
#include "start_message.hpp"
#include "stop_notice.hpp"

namespace bspg::section {
namespace {

void (*end_section_hook)() = nullptr;  // the API layer's
bool parked_loop_running = false;
jmp_buf park_point;  // where a parked process returns to at the end of each later section
bool has_pending_start = false;
StartMessage pending_start{};
bool has_first_start = false;  // received before main, for the parked loop's first round
StartMessage first_start{};
bool sections_begun = false;  // this process took part in a section already
bool init_called = false;     // bsp_init ran on this process
int last_nprocs = 1;          // the last section's processes

// Nested runs: the part bsp_init named inside a section (for the next nested bsp_begin), and what
// each nested bsp_begin set aside of the outer section, for its bsp_end.
void (*nested_part)(void) = nullptr;
struct OuterSection {
  int last_nprocs;
  int reporting_pid;
  void (*part)(void);
  bool part_named_since_last_section;
};
std::vector<OuterSection> outer_sections;

void end_section_after_return() {
  if (end_section_hook != nullptr) end_section_hook();
}

// MPI's end for this process; process 0 first lets the spares (bsprun --spares) end too.
void finalize() {
  if (in_place::before_finalize()) MPI_Finalize();
}

// Whether this process (process 0, or a master) may start another SPMD section after bsp_end:
// bspg owns MPI, which then stays initialised until the program ends (the later section's part
// must be named with bsp_init).
bool later_sections_possible() {
  if (!bspg_owns_mpi()) return false;
  const master::Role role = master::role("bsp_init");
  return role == master::Role::Master || (role == master::Role::Spmd && all_at_once::rank() == 0);
}

// Whether this process, at bsp_end (or not needed at bsp_begin), waits for a later section
// instead of ending: a process other than 0 of a run started all at once (where bspg owns MPI),
// or one a master spawned to run a part that bsp_init named.
bool parks_between_sections() {
  if (!bspg_owns_mpi()) return false;
  const master::Role role = master::role("bsp_end");
  if (role == master::Role::Spawned) return master::pool_stays();
  return role == master::Role::Spmd && all_at_once::rank() != 0;
}

// bsp_init: whether this process runs the SPMD part at once (every process but 0, and every
// process spawned in master mode) instead of returning to main.
bool runs_spmd_part_at_once() {
  switch (master::role("bsp_init")) {
    case master::Role::Spmd:
      return all_at_once::rank() != 0;
    case master::Role::Master:
      return false;
    case master::Role::Spawned:
      return true;
  }
  return false;
}

// Between sections: wait for the next start message, run the SPMD part it names, and come back
// here when that section ends. Never returns: an end message ends the process.
[[noreturn]] void park() {
  if (parked_loop_running) longjmp(park_point, 1);
  parked_loop_running = true;
  setjmp(park_point);
  for (;;) {
    const bool spawned = master::role("bsp_end") == master::Role::Spawned;
    StartMessage start = first_start;
    if (has_first_start)
      has_first_start = false;
    else if (spawned)
      start = exchange_start_message(master::pool(), {0, 0, {}});
    else
      start = all_at_once::exchange({0, 0, {}});
    if (start.kind == kHold)
      hold_until_stopped(spawned ? master::pool() : in_place::job_world(), start);
    if (start.kind == kEnd) {
      g_phase = Phase::After;
      if (spawned) master::end_pool();
      finalize();
      std::exit(0);
    }
    pending_start = start;
    has_pending_start = true;
    void (*part)(void) = find_part(start.part);
    name_spmd_part(part);
    part();
    end_section_after_return();  // the SPMD part returned without bsp_end
  }
}

// A process that runs SPMD parts only: runs `part` (named, as bsp_init would), then waits between
// sections for more until process 0 ends. Never returns.
[[noreturn]] void run_spmd_part_only(void (*part)(void)) {
  name_spmd_part(part);
  part();
  end_section_after_return();  // the SPMD part returned without bsp_end
  if (parks_between_sections()) park();
  std::exit(0);
}

// Who takes part in the section bsp_begin starts here; comm (when not null) is the caller's.
// Under bsp_init only process 0's maxprocs counts. The others learn here if process 0 ended the
// program instead, and end as well, with status 0.
Membership join(int maxprocs) {
  if (master::role("bsp_begin") != master::Role::Spmd) {
    const StartMessage* received = has_pending_start ? &pending_start : nullptr;
    has_pending_start = false;
    Membership member = master::join(maxprocs, received);
    if (member.comm == MPI_COMM_NULL && parks_between_sections()) {
      g_phase = Phase::After;
      park();  // not needed in this section; perhaps in a later one
    }
    return member;
  }
  StartMessage start;
  if (has_pending_start) {
    start = pending_start;  // received while parked
    has_pending_start = false;
  } else {
    // The others wait before main for the first section: they run main too where its part needs
    // what main builds on each process (MulticoreBSP's C++ begin, bsp_init_with_user_data).
    const bool run_main = !sections_begun && others_run_main();
    start = all_at_once::exchange(
        {kBegin, maxprocs, run_main ? PartLocation{} : locate(current_spmd_part())});
  }
  sections_begun = true;
  if (start.kind == kHold) hold_until_stopped(in_place::job_world(), start);
  if (start.kind == kEnd) {
    // Process 0 ended the program in main before bsp_begin: so does this process.
    g_phase = Phase::After;
    finalize();
    std::exit(0);
  }
  Membership member = all_at_once::split(start);
  if (member.comm == MPI_COMM_NULL && parks_between_sections()) {
    g_phase = Phase::After;
    park();  // not needed in this section; perhaps in a later one
  }
  return member;
}

// Process 0 (or the master) ends the program with a non-zero status, which stops the job: the
// processes waiting for a section leave MPI first (hold_waiting_processes says why).
void hold_the_waiting(int status) {
  switch (master::role("exit")) {
    case master::Role::Spmd:
      if (all_at_once::size() > 1 && all_at_once::rank() == 0)
        hold_waiting_processes(in_place::job_world(), status);
      break;
    case master::Role::Master:
      if (master::pool() != MPI_COMM_NULL) hold_waiting_processes(master::pool(), status);
      break;
    case master::Role::Spawned:
      break;
  }
}

// A process ending as process 0 does: where process 0 stops the job instead, it waits for that.
StartMessage hold_if_asked(MPI_Comm comm, const StartMessage& got) {
  if (got.kind == kHold) hold_until_stopped(comm, got);
  return got;
}

// on_exit handler: the program ends (returns from main or calls exit) before bsp_begin, or after
// a section where MPI was kept for later ones.
void end_before_begin(int status, void* /*unused*/) {
  int finalized = 0;  // installed once MPI runs: it is initialized
  MPI_Finalized(&finalized);
  if (finalized || g_phase == Phase::Inside) return;
  if (g_phase == Phase::After) {
    fflush(stdout);
    if (status != 0) {
      hold_the_waiting(status);
      stop_job(status);
    }
    // The parked processes end too.
    if (master::role("exit") == master::Role::Spmd && all_at_once::size() > 1)
      hold_if_asked(in_place::job_world(), all_at_once::exchange({kEnd, 0, {}}));
    // A spawned process that ran main ends with it, as the master does: it takes the master's
    // end first (finalizing before it, the master's last words met a closed socket: SIGPIPE).
    if (master::role("exit") == master::Role::Spawned && master::pool() != MPI_COMM_NULL) {
      const StartMessage got = exchange_start_message(master::pool(), {kEnd, 0, {}});
      if (hold_if_asked(master::pool(), got).kind == kBegin)
        fail("exit",
             "the program ended after bsp_end on this process, but process 0 called bsp_begin");
    }
    if (master::role("exit") != master::Role::Spmd) master::end_pool();
    finalize();
    return;
  }
  fflush(stdout);
  master::Role role = master::role("exit");
  if (role == master::Role::Spawned) master::stop_before_begin(status);
  // One quiet abort carries the status to mpirun: a process that finalizes and then ends with a
  // non-zero status earns a banner from mpirun.
  if (status != 0) {
    hold_the_waiting(status);
    stop_job(status);
  }
  if (role == master::Role::Spmd && all_at_once::size() > 1) {
    StartMessage got = hold_if_asked(in_place::job_world(), all_at_once::exchange({kEnd, 0, {}}));
    if (got.kind == kBegin) {
      fail_alone(
          "exit",
          "the program ended before bsp_begin on this process, but process 0 called bsp_begin");
    }
  }
  finalize();
}

// Whether the MPI's starter (or a master's bsp_begin) started this process as another than the
// first.
bool started_as_other_than_first() {
  if (const char* mark = std::getenv("BSPG_SPAWNED_BY_MASTER"); mark && *mark) return true;
  return all_at_once::rank_from_starter() > 0;
}

// Before main: only process 0 reads the user's input; every other process reads end-of-file at
// once. A program may read standard input before bsp_init or bsp_begin, and the processes a
// master spawns run main again, on a standard input that never ends.
__attribute__((constructor)) void give_input_to_process_0_only() {
  if (!started_as_other_than_first()) return;
  const int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null >= 0 && null != STDIN_FILENO) {
    dup2(null, STDIN_FILENO);  // dup2 clears close-on-exec: a program it runs reads EOF too
    close(null);
  }
}

}  // namespace

void set_end_section_hook(void (*end_section)()) { end_section_hook = end_section; }

void set_forget_section_hook(void (*forget)()) { in_place::set_forget_section_hook(forget); }

void trace_recovery(const char* what) { in_place::trace_moment(what); }

void start_mpi() {
  if (!start_mpi_as_owner()) return;
  in_place::start();  // with spares: the job's world without them
  // A process spawned in master mode reports and stops through the master from now on; a program
  // that ends before bsp_begin (a usage message and exit(0), say) ends with its own status and
  // without Open MPI's complaint that a process did not finalize.
  master::note_how_started();
  start_exit_notes();
  in_place::watch_named_losses();      // with spares: bsprun's word of a frozen host
  on_exit(end_before_begin, nullptr);  // runs before the exit notes' (handlers run last first)
  install_crash_handlers();
}

void before_main() {
  // A program that starts MPI itself runs main everywhere, as it was written to.
  if (program_starts_mpi_itself()) {
    if (const char* spares = std::getenv("BSPG_SPARES"); spares && *spares)
      fail("bsp_begin",
           "BSPG_SPARES=%s asks for spares (bsprun --spares), but this program starts MPI itself, "
           "so every process runs main: let bspg start MPI, or run without spares",
           spares);
    return;
  }
  if (const char* mark = std::getenv("BSPG_SPAWNED_BY_MASTER"); mark && *mark) {
    // Spawned by a master: the SPMD part the master named with bsp_init, or, where there is none,
    // main itself. MPI first, whatever main does: the master's spawn waits until every process
    // it started has joined MPI.
    start_mpi();
    const char* part = std::getenv("BSPG_SPMD_PART");
    if (part == nullptr || *part == '\0') return;
    void (*named)(void) = master::spmd_part_from_master(nullptr);
    if (named == nullptr)
      fail("bsp_begin", "started as a master's process, but no master spawned this process");
    run_spmd_part_only(named);
  }
  if (all_at_once::rank_from_starter() < 0) return;  // a plain run: no others to hold back
  // Every process of the starter's world starts MPI at once; process 0 runs main, the others
  // wait for what its first bsp_begin (or its end) says.
  start_mpi();
  if (in_place::is_spare()) in_place::serve_as_spare();
  if (all_at_once::size() == 1 || all_at_once::rank() == 0 ||
      master::role("main") != master::Role::Spmd)
    return;
  first_start = all_at_once::exchange({0, 0, {}});
  if (first_start.kind == kBegin && first_start.part.object < 0) {
    // bsp_begin without bsp_init (in main, or MulticoreBSP's C++ begin): main runs here too, and
    // its bsp_begin takes this start message.
    pending_start = first_start;
    has_pending_start = true;
    return;
  }
  has_first_start = true;
  park();
}

void init(void (*part)(void)) {
  start_mpi();
  if (g_phase == Phase::After && !later_sections_possible())
    fail("bsp_init",
         "called after an SPMD section in a program that started MPI itself: its other "
         "processes ended at that section's bsp_end (let bspg start MPI to have several)");
  const bool first = !init_called;
  init_called = true;
  // Where the program started MPI itself, every process runs main: the others go straight to the
  // SPMD part here (elsewhere they never ran main: before_main).
  if (first && runs_spmd_part_at_once()) run_spmd_part_only(master::spmd_part_from_master(part));
  name_spmd_part(part);
}

void let_others_run_main() { bspg::let_others_run_main(); }

Membership begin(int maxprocs) {
  // The others run a later section's part, which only bsp_init can name to them.
  if (g_phase == Phase::After && !parks_between_sections() &&
      (!later_sections_possible() || current_spmd_part() == nullptr))
    fail("bsp_begin",
         "called twice: a later SPMD section needs its SPMD part in a function named by bsp_init, "
         "called before this bsp_begin%s",
         bspg_owns_mpi() ? ""
                         : ", and MPI started by bspg (this program started MPI itself, so its "
                           "other processes ended at the first bsp_end)");
  start_mpi();
  const Membership member = join(maxprocs);
  last_nprocs = member.nprocs;
  if (member.comm == MPI_COMM_NULL) {
    // Not needed for this run: wait for the others to finish, then leave quietly.
    g_phase = Phase::After;
    if (bspg_owns_mpi()) {
      finalize();
      std::exit(0);
    }
    return member;
  }
  set_reporting_pid(member.pid);
  // Before the first check that can stop the job (the globals'): a process that stops it tells
  // the others on its machine, which is what ends Open MPI 5's master when a spawned one stops.
  know_stop_peers(member.comm);
  share_globals(member.comm, 0);
  return member;
}

void init_nested(void (*part)(void)) { nested_part = part; }

bool nested_part_named() { return nested_part != nullptr; }

int nested_available() {
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  return online > 0 ? static_cast<int>(online) : 1;
}

Membership begin_nested(int maxprocs) {
  outer_sections.push_back(
      {last_nprocs, reporting_pid_if_set(), current_spmd_part(), part_named_since_last_section()});
  // The nested run's processes run the part bsp_init named in this section (the API layer starts
  // no nested run without one); master::join checks maxprocs as a master's bsp_begin does.
  name_spmd_part(nested_part);
  nested_part = nullptr;
  master::begin_nested(maxprocs);
  const Membership member = master::join(maxprocs, nullptr);
  last_nprocs = member.nprocs;
  set_reporting_pid(member.pid);
  set_aside_stop_peers();
  know_stop_peers(member.comm);
  share_globals(member.comm, 0);
  return member;
}

bool in_nested_run() { return master::in_nested_run(); }

void leave() {
  if (!outer_sections.empty()) {
    // A nested run's end: its processes part from this one, which goes on in the outer section.
    master::leave();
    master::end_nested();
    const OuterSection outer = outer_sections.back();
    outer_sections.pop_back();
    last_nprocs = outer.last_nprocs;
    set_reporting_pid(outer.reporting_pid);
    bring_back_stop_peers();
    name_spmd_part(outer.part);
    if (!outer.part_named_since_last_section) forget_part_named_since_last_section();
    return;
  }
  nested_part = nullptr;  // named inside the section, but no nested run started
  forget_part_named_since_last_section();
  master::leave();
  // MPI stays up where a later section may follow; the program's end finalizes it then.
  if (bspg_owns_mpi() && !later_sections_possible() && !parks_between_sections()) finalize();
}

void after_bsp_end(int pid) {
  // The standard: all processes but 0 end here; process 0 continues sequentially. Under
  // bsp_init the others wait here for a later section instead, until process 0 ends.
  if (pid != 0 && parks_between_sections()) park();
  if (bspg_owns_mpi() && pid != 0) std::exit(0);
}

int nprocs() {
  // After a section: that section's processes, as the standard says, until bsp_init names the
  // next part; then what a later section could have (MulticoreBSP's examples expect that).
  if (g_phase == Phase::After && !part_named_since_last_section()) return last_nprocs;
  start_mpi();
  if (master::role("bsp_nprocs") != master::Role::Spmd) return master::available("bsp_nprocs");
  return all_at_once::size();
}

}  // namespace bspg::section

namespace bspg::in_place {

void forget_sections() {
  using namespace section;
  parked_loop_running = false;
  has_pending_start = false;
  has_first_start = false;
  sections_begun = false;
  init_called = false;
  last_nprocs = 1;
  nested_part = nullptr;
  outer_sections.clear();
  forget_spmd_parts();
  g_phase = Phase::Before;
}

}  // namespace bspg::in_place
