// in_memory.cpp - a checkpoint kept in memory (with spares, bsprun --spares): this process's shard
// copied into its in-memory file, sent to its copy holders, and the copies of its wards received
// straight into theirs (memory_copies.hpp), all at once; no file is written here (the disk copy
// follows behind the job, behind.cpp).
#include <algorithm>
#include <cerrno>
#include <cstring>

#include "checkpoint_internal.hpp"
#include "memory_copies.hpp"
#include "runtime.hpp"
#include "shard.hpp"
#include "transport.hpp"

namespace bspg {

using namespace checkpoint_internal;  // what the checkpoint files share (checkpoint_internal.hpp)

namespace {

constexpr int kSizeTag = 3, kDataTag = 4;
// Pieces of 1 MiB: each arrival shows progress, so that the wait polls (and moves bytes, where the
// MPI moves them only inside its calls, as over TCP) while they flow and rests only once they stop.
constexpr std::uint64_t kPieceBytes = std::uint64_t{1} << 20;

int piece_count(std::uint64_t bytes) {
  return static_cast<int>((bytes + kPieceBytes - 1) / kPieceBytes);
}
int piece_length(std::uint64_t bytes, int i) {
  return static_cast<int>(
      std::min(kPieceBytes, bytes - static_cast<std::uint64_t>(i) * kPieceBytes));
}

}  // namespace

// Our shard goes into its in-memory file 1 MiB at a time, checksummed on the way (the bytes are
// in cache then), each piece sent to the holders as soon as it is there, and the MPI polled
// between pieces: the copy overlaps the transfers. Every process takes part in the whole exchange
// even where its memory ran out (the copy then goes to a buffer of its own, and the pieces it
// receives to a scratch buffer, one at a time), so that nobody waits for it; the first problem is
// returned.
Problem Checkpoints::write_memory(std::uint64_t n) {
  ByteBuffer head, tail;
  const std::vector<Piece> pieces = serialize(n, head, tail, false);
  std::uint64_t total = sizeof(std::uint64_t);  // the checksum, last
  for (const Piece& piece : pieces) total += piece.bytes;
  Problem problem;
  auto out_of_memory = [&]() {
    if (problem.empty())
      problem = {"the in-memory copy of checkpoint " + std::to_string(n), std::strerror(errno)};
  };
  memory_copies::begin(n);

  // Every request, and what each is: kSize (ward w's size), kData (a piece of ward w's copy), or
  // kSend (ours, to a holder).
  enum Kind { kSize, kData, kSend };
  struct What {
    Kind kind;
    std::size_t ward;
    int piece;
  };
  std::vector<MPI_Request> requests;
  std::vector<What> what;
  struct Incoming {
    std::uint64_t expected = 0;
    char* into = nullptr;  // its in-memory file, or nullptr: pieces go to scratch, in turn
    int next = 0;          // the next piece to receive into scratch
  };
  std::vector<Incoming> incoming(wards_.size());
  for (std::size_t w = 0; w < wards_.size(); ++w) {
    requests.emplace_back();
    what.push_back({kSize, w, 0});
    MPI_Irecv(&incoming[w].expected, 1, MPI_UINT64_T, wards_[w], kSizeTag, comm_, &requests.back());
  }
  for (const int holder : holders_) {
    requests.emplace_back();
    what.push_back({kSend, 0, 0});
    MPI_Isend(&total, 1, MPI_UINT64_T, holder, kSizeTag, comm_, &requests.back());
  }

  char* own = memory_copies::own_room(n, total);
  if (!own) out_of_memory();
  ByteBuffer flat;  // without room in memory (the job ends at the agreement): sent from here
  if (!own) flat.extend(total);
  char* const shard = own ? own : flat.data();
  // Fills piece `own_next` of the shard from the serialized pieces (at `from`, `from_at`).
  int own_next = 0;
  std::size_t from = 0;
  std::uint64_t from_at = 0;
  ShardHash hash;
  const int own_pieces = piece_count(total);
  auto fill_and_send = [&]() {
    const std::uint64_t begin = static_cast<std::uint64_t>(own_next) * kPieceBytes;
    const std::uint64_t end = begin + static_cast<std::uint64_t>(piece_length(total, own_next));
    const std::uint64_t data_end = std::min(end, total - sizeof(std::uint64_t));
    for (std::uint64_t at = begin; at < data_end;) {
      const Piece& piece = pieces[from];
      const std::uint64_t take = std::min(piece.bytes - from_at, data_end - at);
      if (take > 0) {
        std::memcpy(shard + at, piece.data + from_at, take);
        hash.update(shard + at, take);
      }
      at += take;
      from_at += take;
      if (from_at == piece.bytes) ++from, from_at = 0;
    }
    if (end == total) {
      const std::uint64_t checksum = hash.value();
      std::memcpy(shard + total - sizeof checksum, &checksum, sizeof checksum);
    }
    for (const int holder : holders_) {
      requests.emplace_back();
      what.push_back({kSend, 0, own_next});
      MPI_Isend(shard + begin, static_cast<int>(end - begin), MPI_BYTE, holder, kDataTag, comm_,
                &requests.back());
    }
    ++own_next;
  };

  ByteBuffer scratch;
  auto receive_piece = [&](std::size_t w, int i, char* into) {
    requests.emplace_back();
    what.push_back({kData, w, i});
    MPI_Irecv(into, piece_length(incoming[w].expected, i), MPI_BYTE, wards_[w], kDataTag, comm_,
              &requests.back());
  };
  std::vector<int> done;
  std::vector<MPI_Status> statuses;
  IdlePacer pacer;
  for (int outstanding = static_cast<int>(requests.size());
       outstanding > 0 || own_next < own_pieces;) {
    if (own_next < own_pieces) {
      fill_and_send();
      outstanding += static_cast<int>(holders_.size());
    }
    done.resize(requests.size());
    statuses.resize(requests.size());
    int count = 0;
    MPI_Testsome(static_cast<int>(requests.size()), requests.data(), &count, done.data(),
                 statuses.data());
    if (count == MPI_UNDEFINED || count == 0) {
      if (own_next == own_pieces) pacer.idle();
      continue;
    }
    pacer.reset();
    outstanding -= count;
    for (int k = 0; k < count; ++k) {
      const What finished = what[static_cast<std::size_t>(done[static_cast<std::size_t>(k)])];
      if (finished.kind == kSend) continue;
      Incoming& in = incoming[finished.ward];
      if (finished.kind == kSize) {
        const int count_pieces = piece_count(in.expected);
        in.into = memory_copies::copy_room(n, wards_[finished.ward], in.expected);
        if (!in.into) out_of_memory();
        if (in.into) {
          for (int i = 0; i < count_pieces; ++i)
            receive_piece(finished.ward, i, in.into + static_cast<std::uint64_t>(i) * kPieceBytes);
          outstanding += count_pieces;
        } else if (count_pieces > 0) {
          if (scratch.size() < kPieceBytes) scratch.extend(kPieceBytes - scratch.size());
          receive_piece(finished.ward, in.next++, scratch.data());
          ++outstanding;
        }
        continue;
      }
      int got = 0;
      MPI_Get_count(&statuses[static_cast<std::size_t>(k)], MPI_BYTE, &got);
      if (got != piece_length(in.expected, finished.piece) && problem.empty())
        problem = {
            shard_path(n, "copy", wards_[finished.ward]) + " (in memory)",
            "the copy from process " + std::to_string(wards_[finished.ward]) + " is incomplete"};
      if (!in.into && in.next < piece_count(in.expected)) {
        receive_piece(finished.ward, in.next++, scratch.data());
        ++outstanding;
      }
    }
  }
  return problem;
}

}  // namespace bspg
