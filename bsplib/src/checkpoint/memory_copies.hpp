// memory_copies.hpp - checkpoints kept in memory for recovery in place (bsprun --spares): this
// process's own shard and the copies it holds for others, as written to disk, in anonymous memory
// files (memfd) that outlive the section's runtime. A recovery restores survivors from their own
// shard and sends each lost process's shard to the spare that takes its place, reading no file.
// Memory: one shard plus one per copy held (with --copies K, about K + 1 times the persisted
// bytes), twice: the last checkpoint, and the one before it or the one being written. Each file
// stays mapped, and a checkpoint is written into the files of the one it replaces: after the
// first two, a checkpoint of the same size touches no new page (no page fault, no zeroing).
#pragma once

#include <cstdint>
#include <vector>

namespace bspg::memory_copies {

// On for jobs with spares (the sections part turns it on at the start); off, nothing is kept.
void turn_on();
bool on();

// Checkpoint n starts being written (anew: what an attempt cut short by a loss wrote is dropped).
void begin(std::uint64_t n);
// While checkpoint n is written: room for its bytes, `bytes` long (the file is made exactly that
// long), for this process's shard or the copy of ward's, to be filled in place. nullptr where off,
// or where the memory cannot be had (errno says why).
char* own_room(std::uint64_t n, std::uint64_t bytes);
char* copy_room(std::uint64_t n, int ward, std::uint64_t bytes);
// Checkpoint n is whole everywhere: it is kept, and the one before it too until the next
// checkpoint starts (see memory_copies.cpp).
void keep(std::uint64_t n, std::uint64_t run);
std::uint64_t kept_before();  // the one before the kept one (0: none)
// A recovery goes back to checkpoint n (kept, or the one before: that becomes the kept one).
// False where this process has neither.
bool use(std::uint64_t n);

// The checkpoint kept (0: none), its run, and its files: this process's shard, the copies held.
std::uint64_t kept();
std::uint64_t kept_run();
int kept_own();
std::vector<int> kept_wards();
int kept_copy(int ward);
// A spare that took a lost process's place: its shard, to be received from a holder into the
// room returned (`bytes` long; nullptr where the memory cannot be had, and nothing is kept), is
// now its own checkpoint n of run `run`; what it kept before is dropped.
char* adopt(std::uint64_t n, std::uint64_t run, std::uint64_t bytes);

// The bytes of the kept copy of ward's shard, in place (for sending it to a spare); nullptr
// where none is kept.
const char* kept_copy_bytes(int ward, std::uint64_t& bytes);

// Set by the sections part after a recovery in place: bspg_resume restores the kept checkpoint
// from memory instead of reading the checkpoint directory. Cleared by that restore.
void resume_from_memory(bool yes);
bool resuming_from_memory();

}  // namespace bspg::memory_copies
