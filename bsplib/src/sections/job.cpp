// job.cpp - who runs what, and the start and end of each SPMD section. With every process started
// at once, the others than process 0 wait before main (before_main) for one start message from
// process 0: at its first bsp_begin (how many take part, and the SPMD part bsp_init named, which
// they then run instead of main; no part: they run main too), or when its program ends (end too).
// Between sections the others wait ("park") for the next start message, which names the SPMD part
// to run, instead of ending at bsp_end; they end when process 0 ends.
#include "job.hpp"

#include <fcntl.h>
#include <link.h>
#include <setjmp.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "crash.hpp"
#include "errors.hpp"
#include "globals.hpp"
#include "master.hpp"
#include "runtime.hpp"

namespace bspg {
namespace {

void (*spmd_part)(void) = nullptr;  // the SPMD part bsp_init named last
bool parked_loop_running = false;
jmp_buf park_point;  // where a parked process returns to at the end of each later section
bool has_pending_start = false;
StartMessage pending_start{};
bool has_first_start = false;  // received before main, for the parked loop's first round
StartMessage first_start{};
bool owns_mpi = false;              // bspg called MPI_Init (so the program's end finalizes it)
bool named_since_section = false;   // an SPMD part was named since the last section ended
bool others_run_main_flag = false;  // the others run main up to the part (MulticoreBSP's C++)
bool sections_begun = false;        // this process took part in a section already

int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

int world_size() {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

StartMessage exchange_in_world(StartMessage mine) {
  return exchange_start_message(MPI_COMM_WORLD, mine);
}

struct ObjectSearch {
  std::uintptr_t address;
  int index = 0;
  int found = -1;
  std::uintptr_t base = 0;
  bool executable = false;
  std::uint64_t layout = 0;  // of the object found
  std::string build_id = {};
};

// dl_iterate_phdr visits the loaded objects in the same order in every process of one executable.
int visit_object(dl_phdr_info* info, std::size_t /*size*/, void* data) {
  auto* search = static_cast<ObjectSearch*>(data);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& segment = info->dlpi_phdr[i];
    if (segment.p_type != PT_LOAD) continue;
    const std::uintptr_t start = info->dlpi_addr + segment.p_vaddr;
    if (search->address >= start && search->address < start + segment.p_memsz) {
      search->found = search->index;
      search->base = info->dlpi_addr;
      search->executable = (segment.p_flags & PF_X) != 0;
      search->layout = object_layout(*info);
      search->build_id = object_build_id(*info);
      return 1;
    }
  }
  ++search->index;
  return 0;
}

}  // namespace

PartLocation locate(void (*part)(void)) {
  ObjectSearch search{reinterpret_cast<std::uintptr_t>(part)};
  dl_iterate_phdr(visit_object, &search);
  if (search.found < 0 || !search.executable) return {};
  PartLocation where{search.found, search.address - search.base, search.layout};
  where.build_id_nbytes =
      static_cast<std::uint32_t>(std::min(search.build_id.size(), sizeof where.build_id));
  std::memcpy(where.build_id, search.build_id.data(), where.build_id_nbytes);
  return where;
}

namespace {

struct ObjectByIndex {
  int wanted;
  int index = 0;
  std::uintptr_t base = 0;
  bool found = false;
  std::uint64_t layout = 0;
  std::string build_id = {};
};

int visit_by_index(dl_phdr_info* info, std::size_t /*size*/, void* data) {
  auto* search = static_cast<ObjectByIndex*>(data);
  if (search->index++ != search->wanted) return 0;
  search->base = info->dlpi_addr;
  search->found = true;
  search->layout = object_layout(*info);
  search->build_id = object_build_id(*info);
  return 1;
}

// The SPMD part process 0 named, in this process; fails where it is not code of this program.
void (*find_part(const PartLocation& where))(void) {
  ObjectByIndex object{where.object};
  if (where.object >= 0) dl_iterate_phdr(visit_by_index, &object);
  // (A part named in BSPG_SPMD_PART comes without a layout: the master spawned its own executable.)
  if (object.found && where.layout != 0 && object.layout != where.layout) {
    // Another build (an MPMD start of two programs): the offset is not the part here, and running
    // what lies there would be running anything.
    const std::string ids = builds_named(
        object.build_id,
        std::string(reinterpret_cast<const char*>(where.build_id),
                    std::min<std::size_t>(where.build_id_nbytes, sizeof where.build_id)),
        "its code is laid out differently");
    fail_alone("bsp_begin",
               "this process runs another executable than process 0 (%s), so process 0's SPMD part "
               "is not code here; start the same program on every process",
               ids.c_str());
  }
  if (object.found) {
    const std::uintptr_t address = object.base + where.offset;
    ObjectSearch check{address};
    dl_iterate_phdr(visit_object, &check);
    if (check.found == where.object && check.executable)
      return reinterpret_cast<void (*)(void)>(address);
  }
  fail_alone("bsp_begin",
             "process 0's SPMD part (object %d, offset 0x%" PRIx64
             ") is not code of this program here; every process must run the same executable",
             where.object, where.offset);
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
    else
      start = exchange_start_message(spawned ? master::pool() : MPI_COMM_WORLD, {0, 0, {}});
    if (start.kind == kEnd) {
      g_phase = Phase::After;
      if (spawned) master::end_pool();
      MPI_Finalize();
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

// on_exit handler: the program ends (returns from main or calls exit) before bsp_begin, or after
// a section where MPI was kept for later ones.
void end_before_begin(int status, void* /*unused*/) {
  int finalized = 0;  // installed once MPI runs: it is initialized
  MPI_Finalized(&finalized);
  if (finalized || g_phase == Phase::Inside) return;
  if (g_phase == Phase::After) {
    fflush(stdout);
    if (status != 0) stop_job(status);
    // The parked processes end too.
    if (master::role("exit") == master::Role::Spmd && world_size() > 1)
      exchange_in_world({kEnd, 0, {}});
    // A spawned process that ran main ends with it, as the master does: it takes the master's
    // end first (finalizing before it, the master's last words met a closed socket: SIGPIPE).
    if (master::role("exit") == master::Role::Spawned && master::pool() != MPI_COMM_NULL &&
        exchange_start_message(master::pool(), {kEnd, 0, {}}).kind == kBegin)
      fail("exit",
           "the program ended after bsp_end on this process, but process 0 called bsp_begin");
    if (master::role("exit") != master::Role::Spmd) master::end_pool();
    MPI_Finalize();
    return;
  }
  fflush(stdout);
  master::Role role = master::role("exit");
  if (role == master::Role::Spawned) master::stop_before_begin(status);
  // One quiet abort carries the status to mpirun: a process that finalizes and then ends with a
  // non-zero status earns a banner from mpirun.
  if (status != 0) stop_job(status);
  if (role == master::Role::Spmd && world_size() > 1) {
    StartMessage got = exchange_in_world({kEnd, 0, {}});
    if (got.kind == kBegin) {
      fail_alone(
          "exit",
          "the program ended before bsp_begin on this process, but process 0 called bsp_begin");
    }
  }
  MPI_Finalize();
}

// BSPG_EXIT_NOTES: a directory where each process leaves a file RANK.begun when MPI starts and a
// file RANK, holding its status, when it ends by exit (not when killed). bsprun asks for them where
// the MPI's starter does not say which process was killed (MPICH's Hydra). "~/..." is each
// process's own home (one value for every host of a grid job); the directory and those above it
// that are missing are made, private.
std::string exit_notes;
int exit_notes_rank = 0;

std::string exit_notes_directory(const char* value) {
  std::string dir = value;
  if (dir.rfind("~/", 0) == 0) {
    const char* home = std::getenv("HOME");
    if (!home || *home != '/') return "";
    dir = home + dir.substr(1);
  }
  if (dir.empty() || dir[0] != '/') return "";
  for (std::size_t slash = dir.find('/', 1); slash != std::string::npos;
       slash = dir.find('/', slash + 1))
    mkdir(dir.substr(0, slash).c_str(), 0700);  // those that exist stay as they are
  mkdir(dir.c_str(), 0700);
  return dir;
}

void write_note(const char* suffix, int status) {
  char path[4096];
  const int n =
      std::snprintf(path, sizeof path, "%s/%d%s", exit_notes.c_str(), exit_notes_rank, suffix);
  if (n < 0 || n >= static_cast<int>(sizeof path)) return;
  if (FILE* note = std::fopen(path, "w")) {
    std::fprintf(note, "%d\n", status);
    std::fclose(note);
  }
}

void note_exit(int status, void* /*unused*/) { write_note("", status); }

// The rank the MPI's starter gave this process in its environment (Open MPI, MPICH's Hydra,
// PMIx, Slurm's srun, which gives standard input to every task): -1 where none says.
long rank_from_starter() {
  long found = -1;
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"}) {
    const char* text = std::getenv(name);
    if (text == nullptr || *text == '\0') continue;
    char* end = nullptr;
    const long rank = std::strtol(text, &end, 10);
    if (*end == '\0' && rank > found) found = rank;
  }
  return found;
}

// Whether the MPI's starter (or a master's bsp_begin) started this process as another than the
// first.
bool started_as_other_than_first() {
  if (const char* mark = std::getenv("BSPG_SPAWNED_BY_MASTER"); mark && *mark) return true;
  return rank_from_starter() > 0;
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

void start_mpi() {
  if (!ensure_mpi()) return;
  owns_mpi = true;
  mpi_started_by_bspg();
  install_crash_handlers();
}

bool bspg_owns_mpi() { return owns_mpi; }

[[noreturn]] void run_spmd_part_only(void (*part)(void)) {
  name_spmd_part(part);
  part();
  end_section_after_return();  // the SPMD part returned without bsp_end
  if (parks_between_sections()) park();
  std::exit(0);
}

void before_main() {
  // A program that starts MPI itself runs main everywhere, as it was written to.
  if (program_starts_mpi_itself()) return;
  if (const char* mark = std::getenv("BSPG_SPAWNED_BY_MASTER"); mark && *mark) {
    // Spawned by a master: the SPMD part the master named with bsp_init, or, where there is none,
    // main itself. MPI first, whatever main does: the master's spawn waits until every process
    // it started has joined MPI.
    start_mpi();
    const char* part = std::getenv("BSPG_SPMD_PART");
    if (part == nullptr || *part == '\0') return;
    void (*named)(void) = spmd_part_to_run(nullptr);
    if (named == nullptr)
      fail("bsp_begin", "started as a master's process, but no master spawned this process");
    run_spmd_part_only(named);
  }
  if (rank_from_starter() < 0) return;  // a plain run: one process, no others to hold back
  // Every process of the starter's world starts MPI at once; process 0 runs main, the others
  // wait for what its first bsp_begin (or its end) says.
  start_mpi();
  if (world_size() == 1 || world_rank() == 0 || master::role("main") != master::Role::Spmd) return;
  first_start = exchange_in_world({0, 0, {}});
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

void mpi_started_by_bspg() {
  master::note_how_started();
  if (const char* dir = std::getenv("BSPG_EXIT_NOTES"); dir && *dir)
    exit_notes = exit_notes_directory(dir);
  if (!exit_notes.empty()) {
    exit_notes_rank = world_rank();
    write_note(".begun", 0);
    on_exit(note_exit, nullptr);  // runs after end_before_begin (handlers run last first)
    set_exit_note([](int status) { write_note("", status); });  // an abort skips on_exit
  }
  on_exit(end_before_begin, nullptr);
}

// Process 0 sends, the others receive. Those waiting may wait long (process 0 runs main, or the
// sequential part between sections), so they poll gently instead of spinning on a core.
StartMessage exchange_start_message(MPI_Comm comm, StartMessage mine) {
  MPI_Request request;
  MPI_Ibcast(&mine, static_cast<int>(sizeof mine), MPI_BYTE, 0, comm, &request);
  int done = 0;
  for (long polls = 0;; ++polls) {
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) return mine;
    if (polls > 2000) {
      const timespec pause{0, 500000};
      nanosleep(&pause, nullptr);
    }
  }
}

Membership join_job(int maxprocs) {
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
  int rank = world_rank(), size = world_size();
  StartMessage start;
  if (has_pending_start) {
    start = pending_start;  // received while parked
    has_pending_start = false;
  } else {
    // The others wait before main for the first section: they run main too where its part needs
    // what main builds on each process (MulticoreBSP's C++ begin, bsp_init_with_user_data).
    const bool run_main = !sections_begun && others_run_main_flag;
    start = exchange_in_world({kBegin, maxprocs, run_main ? PartLocation{} : locate(spmd_part)});
  }
  sections_begun = true;
  if (start.kind == kEnd) {
    // Process 0 ended the program in main before bsp_begin: so does this process.
    g_phase = Phase::After;
    MPI_Finalize();
    std::exit(0);
  }
  maxprocs = start.value;
  if (maxprocs < 1)
    fail_collective(0, "bsp_begin", "maxprocs is %d; it must be at least 1", maxprocs);
  int nprocs = maxprocs < size ? maxprocs : size;
  MPI_Comm comm;
  MPI_Comm_split(MPI_COMM_WORLD, rank < nprocs ? 0 : MPI_UNDEFINED, rank, &comm);
  if (comm == MPI_COMM_NULL && parks_between_sections()) {
    g_phase = Phase::After;
    park();  // not needed in this section; perhaps in a later one
  }
  return {comm, rank, nprocs};
}

void leave_job() {
  named_since_section = false;
  master::leave();
}

int processes_available() {
  if (master::role("bsp_nprocs") != master::Role::Spmd) return master::available("bsp_nprocs");
  return world_size();
}

void name_spmd_part(void (*part)(void)) {
  spmd_part = part;
  named_since_section = true;
}

bool part_named_since_last_section() { return named_since_section; }

bool later_sections_possible() {
  if (!owns_mpi) return false;
  const master::Role role = master::role("bsp_init");
  return role == master::Role::Master || (role == master::Role::Spmd && world_rank() == 0);
}

bool parks_between_sections() {
  if (!owns_mpi) return false;
  const master::Role role = master::role("bsp_end");
  if (role == master::Role::Spawned) return master::pool_stays();
  return role == master::Role::Spmd && world_rank() != 0;
}

void (*current_spmd_part())(void) { return spmd_part; }

void let_others_run_main() { others_run_main_flag = true; }

bool others_run_main() { return others_run_main_flag; }

void wait_for_next_section() { park(); }

void (*spmd_part_to_run(void (*named)(void)))(void) {
  // A process a master spawned for a later section runs that section's part, which the master
  // names in its environment as OBJECT:OFFSET (hexadecimal).
  const char* text = std::getenv("BSPG_SPMD_PART");
  if (text == nullptr || *text == '\0' || master::role("bsp_init") != master::Role::Spawned)
    return named;
  PartLocation where;
  char* end = nullptr;
  where.object = static_cast<int>(std::strtol(text, &end, 10));
  if (*end != ':' || where.object < 0)
    fail("bsp_init", "environment variable BSPG_SPMD_PART='%.40s' is not OBJECT:OFFSET", text);
  where.offset = std::strtoull(end + 1, &end, 16);
  if (*end != '\0')
    fail("bsp_init", "environment variable BSPG_SPMD_PART='%.40s' is not OBJECT:OFFSET", text);
  return find_part(where);
}

bool runs_spmd_part_at_once() {
  switch (master::role("bsp_init")) {
    case master::Role::Spmd:
      return world_rank() != 0;
    case master::Role::Master:
      return false;
    case master::Role::Spawned:
      return true;
  }
  return false;
}

}  // namespace bspg
