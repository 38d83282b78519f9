// job.cpp - start and end of a run. With every process started at once, process 0 sends one
// start message to the others, either at bsp_begin (how many processes take part) or when the
// program ends before bsp_begin (end too): under bsp_init the others wait for it in bsp_begin
// while process 0 runs main, so they must learn that main ended.
#include "job.hpp"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>

#include "errors.hpp"
#include "master.hpp"
#include "runtime.hpp"

namespace bspg {
namespace {

enum StartKind : int { kBegin = 1, kEnd = 2 };

struct StartMessage {
  int kind;
  int value;  // kBegin: maxprocs of process 0
};

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

StartMessage exchange_start_message(StartMessage mine) {
  MPI_Bcast(&mine, 2, MPI_INT, 0, MPI_COMM_WORLD);
  return mine;
}

// on_exit handler: the program ends (returns from main or calls exit) before bsp_begin.
void end_before_begin(int status, void* /*unused*/) {
  int finalized = 0;  // installed once MPI runs: it is initialized
  MPI_Finalized(&finalized);
  if (g_phase != Phase::Before || finalized) return;
  fflush(stdout);
  master::Role role = master::role("exit");
  if (role == master::Role::Spawned)
    fail("exit", "the program ended (status %d) before bsp_begin, which process 0 waits in",
         status);
  // One quiet abort carries the status to mpirun: a process that finalizes and then ends with a
  // non-zero status earns a banner from mpirun.
  if (status != 0) stop_job(status);
  if (role == master::Role::Spmd && world_size() > 1) {
    StartMessage got = exchange_start_message({kEnd, 0});
    if (got.kind == kBegin) {
      set_reporting_pid(world_rank());  // nobody else reports this
      fail("exit",
           "the program ended before bsp_begin on this process, but process 0 called bsp_begin");
    }
  }
  MPI_Finalize();
}

// BSPG_EXIT_NOTES: a directory where each process leaves a file RANK.begun when MPI starts and a
// file RANK, holding its status, when it ends by exit (not when killed). bsprun asks for them where
// the MPI's starter may report success although a process was killed (MPICH 4.2's mpiexec does, in
// most such runs).
const char* exit_notes = nullptr;
int exit_notes_rank = 0;

void write_note(const char* suffix, int status) {
  char path[4096];
  const int n = std::snprintf(path, sizeof path, "%s/%d%s", exit_notes, exit_notes_rank, suffix);
  if (n < 0 || n >= static_cast<int>(sizeof path)) return;
  if (FILE* note = std::fopen(path, "w")) {
    std::fprintf(note, "%d\n", status);
    std::fclose(note);
  }
}

void note_exit(int status, void* /*unused*/) { write_note("", status); }

// Whether the MPI's starter (or a master's bsp_begin) started this process as another than the
// first: its rank in the starter's environment (Open MPI, MPICH's Hydra, PMIx, Slurm's srun,
// which gives standard input to every task) is above 0, or a master spawned it.
bool started_as_other_than_first() {
  if (const char* mark = std::getenv("BSPG_SPAWNED_BY_MASTER"); mark && *mark) return true;
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"}) {
    const char* text = std::getenv(name);
    if (text == nullptr || *text == '\0') continue;
    char* end = nullptr;
    const long rank = std::strtol(text, &end, 10);
    if (*end == '\0' && rank > 0) return true;
  }
  return false;
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

void mpi_started_by_bspg() {
  master::note_how_started();
  if (const char* dir = std::getenv("BSPG_EXIT_NOTES"); dir && *dir) {
    exit_notes = dir;
    exit_notes_rank = world_rank();
    write_note(".begun", 0);
    on_exit(note_exit, nullptr);  // runs after end_before_begin (handlers run last first)
  }
  on_exit(end_before_begin, nullptr);
}

Membership join_job(int maxprocs) {
  if (master::role("bsp_begin") != master::Role::Spmd) {
    return master::join(maxprocs);
  }
  int rank = world_rank(), size = world_size();
  StartMessage start = exchange_start_message({kBegin, maxprocs});
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
  return {comm, rank, nprocs};
}

void leave_job() { master::leave(); }

int processes_available() {
  if (master::role("bsp_nprocs") != master::Role::Spmd) return master::available("bsp_nprocs");
  return world_size();
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
