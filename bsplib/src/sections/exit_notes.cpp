// exit_notes.cpp - each process's notes of its start and its exit status, where bsprun asks
// for them.
#include "exit_notes.hpp"

#include <mpi.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "errors.hpp"

namespace bspg {
namespace {

// The notes' directory. "~/..." is each process's own home (one value for every host of a grid
// job); the directory and those above it that are missing are made, private.
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

}  // namespace

void start_exit_notes() {
  if (const char* dir = std::getenv("BSPG_EXIT_NOTES"); dir && *dir)
    exit_notes = exit_notes_directory(dir);
  if (!exit_notes.empty()) {
    MPI_Comm_rank(MPI_COMM_WORLD, &exit_notes_rank);
    write_note(".begun", 0);
    on_exit(note_exit, nullptr);  // runs after the rule's at-exit handler (last first)
    set_exit_note([](int status) { write_note("", status); });  // an abort skips on_exit
  }
}

void leave_exit_note(int status) {
  if (!exit_notes.empty()) write_note("", status);
}

const std::string& exit_notes_directory_in_use() { return exit_notes; }

}  // namespace bspg
