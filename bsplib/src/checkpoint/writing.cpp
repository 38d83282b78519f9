// writing.cpp - a checkpoint written: this process's shard (its bytes), sent to its copy holders
// (its buddy, or K of them with BSPG_COPIES=K), and the copies it keeps for its wards, each made
// durable; then its complete marker.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "checkpoint_internal.hpp"
#include "runtime.hpp"
#include "shard.hpp"
#include "transport.hpp"

namespace bspg {

using namespace checkpoint_internal;  // what the checkpoint files share (checkpoint_internal.hpp)

namespace {

constexpr int kSizeTag = 1, kDataTag = 2;

}  // namespace

void Checkpoints::Files::close_all() {
  for (int* fd : {&dir, &own})
    if (*fd >= 0) ::close(*fd), *fd = -1;
  for (int& fd : copies)
    if (fd >= 0) ::close(fd), fd = -1;
}

std::vector<Checkpoints::Piece> Checkpoints::serialize(std::uint64_t n, ByteBuffer& head,
                                                       ByteBuffer& tail, bool with_checksum) {
  const std::vector<std::int64_t> registered = rt_.registry.live_sizes(rt_.pid);
  ShardHeader header{};
  std::memcpy(header.magic, kShardMagic, sizeof header.magic);
  header.version = kShardVersion;
  header.pid = static_cast<std::uint32_t>(rt_.pid);
  header.nprocs = static_cast<std::uint32_t>(rt_.nprocs);
  header.tag_nbytes = rt_.tag_nbytes;
  header.checkpoint = n;
  std::memcpy(header.run, hex_id(run_).data(), sizeof header.run);
  header.supersteps = rt_.world_syncs;
  header.areas = areas_.size();
  header.registrations = registered.size();
  const std::vector<Message> queued = rt_.queue.remaining("bspg_checkpoint");
  header.messages = queued.size();
  head.clear();
  head.append(&header, sizeof header);
  for (const Area& area : areas_) head.append(&area.bytes, sizeof area.bytes);
  for (std::int64_t size : registered) head.append(&size, sizeof size);
  tail.clear();
  for (const Message& message : queued) {
    tail.append(&message.tag_nbytes, 4);
    tail.append(&message.payload_nbytes, 4);
    tail.append(message.tag, message.tag_nbytes);
    tail.append(message.payload, message.payload_nbytes);
  }
  std::vector<Piece> pieces{{head.data(), head.size()}};
  for (const Area& area : areas_)
    if (area.bytes) pieces.push_back({area.address, area.bytes});
  pieces.push_back({tail.data(), tail.size()});
  std::uint64_t total = sizeof(std::uint64_t);
  for (const Piece& piece : pieces) total += piece.bytes;
  reinterpret_cast<ShardHeader*>(head.data())->file_bytes = total;
  if (!with_checksum) return pieces;
  ShardHash hash;
  for (const Piece& piece : pieces) hash.update(piece.data, piece.bytes);
  const std::uint64_t checksum = hash.value();
  tail.append(&checksum, sizeof checksum);
  pieces.back() = {tail.data(), tail.size()};
  return pieces;
}

// Creates c<n> and opens this process's files in it (as .part: a file appears under its name only
// once written and fsync'ed).
Problem Checkpoints::prepare(std::uint64_t n, Files& files) {
  if (dir_fd_ < 0)
    return unavailable_.empty() ? Problem{directory_, "cannot be opened"} : unavailable_;
  const std::string name = "c" + std::to_string(n), path = directory_ + "/" + name;
  if (mkdirat(dir_fd_, name.c_str(), 0700) != 0 && errno != EEXIST) return problem_at(path);
  files.dir = openat(dir_fd_, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (files.dir < 0) return problem_at(path);
  auto create = [&](const char* kind, int pid, int& fd) {
    const std::string part = kind + ("-" + std::to_string(pid)) + ".part";
    fd = openat(files.dir, part.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
                0600);
    return fd >= 0 ? Problem{} : problem_at(path + "/" + part);
  };
  if (Problem problem = create("shard", rt_.pid, files.own); !problem.empty()) return problem;
  files.copies.assign(wards_.size(), -1);
  for (std::size_t w = 0; w < wards_.size(); ++w)
    if (Problem problem = create("copy", wards_[w], files.copies[w]); !problem.empty())
      return problem;
  return {};
}

// Writes our shard, sends it to the copy holders and writes the copies we keep, interleaving file
// writes with MPI progress so that the transfers overlap the disk. Every process takes part in the
// whole exchange even after a write failed, so that nobody waits for it; the first problem is
// returned.
Problem Checkpoints::write_data(std::uint64_t n, Files& files) {
  ByteBuffer head, tail;
  const std::vector<Piece> pieces = serialize(n, head, tail);
  std::uint64_t total = 0;
  for (const Piece& piece : pieces) total += piece.bytes;
  Problem problem;
  auto note = [&problem](const std::string& file) {
    if (problem.empty()) problem = problem_at(file);
  };

  // To each copy holder: the size, then the pieces in messages of at most kChunkBytes, straight
  // from memory.
  std::vector<MPI_Request> sends;
  for (const int holder : holders_) {
    sends.emplace_back();
    MPI_Isend(&total, 1, MPI_UINT64_T, holder, kSizeTag, comm_, &sends.back());
    for (const Piece& piece : pieces)
      for (std::uint64_t at = 0; at < piece.bytes; at += kChunkBytes) {
        sends.emplace_back();
        MPI_Isend(piece.data + at, static_cast<int>(std::min(kChunkBytes, piece.bytes - at)),
                  MPI_BYTE, holder, kDataTag, comm_, &sends.back());
      }
  }
  // From each ward: the size, then chunks into two alternating buffers.
  struct Incoming {
    int from;
    int fd;
    std::uint64_t expected = 0, received = 0;
    bool sized = false;
    ByteBuffer buffers[2];
    int next = 0;  // buffer the next chunk arrives in
    MPI_Request request = MPI_REQUEST_NULL;
  };
  std::vector<Incoming> incoming(wards_.size());
  for (std::size_t w = 0; w < wards_.size(); ++w) {
    Incoming& in = incoming[w];
    in.from = wards_[w];
    in.fd = files.copies[w];
    MPI_Irecv(&in.expected, 1, MPI_UINT64_T, in.from, kSizeTag, comm_, &in.request);
  }
  bool own_ok = true;
  std::vector<bool> copy_ok(wards_.size(), true);

  std::size_t piece = 0;
  std::uint64_t piece_at = 0;
  IdlePacer pacer;
  for (;;) {
    bool progress = false;
    for (std::size_t w = 0; w < incoming.size(); ++w) {
      Incoming& in = incoming[w];
      if (in.request == MPI_REQUEST_NULL) continue;
      int done = 0;
      MPI_Status status;
      MPI_Test(&in.request, &done, &status);
      if (!done) continue;
      progress = true;
      if (!in.sized) {
        in.sized = true;
      } else {
        int got = 0;
        MPI_Get_count(&status, MPI_BYTE, &got);
        const ByteBuffer& chunk = in.buffers[in.next ^ 1];
        if (copy_ok[w] && !write_all(in.fd, chunk.data(), static_cast<std::uint64_t>(got))) {
          copy_ok[w] = false;
          note(shard_path(n, "copy", in.from) + ".part");
        }
        in.received += static_cast<std::uint64_t>(got);
      }
      if (in.received < in.expected) {
        ByteBuffer& into = in.buffers[in.next];
        if (into.size() < kChunkBytes) into.extend(kChunkBytes - into.size());
        MPI_Irecv(into.data(), static_cast<int>(kChunkBytes), MPI_BYTE, in.from, kDataTag, comm_,
                  &in.request);
        in.next ^= 1;
      }
    }
    if (piece < pieces.size()) {  // a chunk of our own shard
      const Piece& p = pieces[piece];
      const std::uint64_t n_bytes = std::min(kChunkBytes, p.bytes - piece_at);
      if (own_ok && !write_all(files.own, p.data + piece_at, n_bytes)) {
        own_ok = false;
        note(shard_path(n, "shard", rt_.pid) + ".part");
      }
      piece_at += n_bytes;
      if (piece_at >= p.bytes) ++piece, piece_at = 0;
      continue;
    }
    bool waiting = false;
    for (const Incoming& in : incoming) waiting = waiting || in.request != MPI_REQUEST_NULL;
    if (!waiting) break;
    if (progress)
      pacer.reset();
    else
      pacer.idle();
  }
  if (!sends.empty()) wait_idle(static_cast<int>(sends.size()), sends.data());

  // Durable under their final names: fsync, close and rename, each checked.
  auto seal = [&](int& fd, const std::string& final_name) {
    const std::string path = directory_ + "/c" + std::to_string(n) + "/" + final_name;
    const int closing = fd;
    fd = -1;
    if (fsync(closing) != 0) note(path + ".part");
    if (::close(closing) != 0) note(path + ".part");
    if (problem.empty() &&
        renameat(files.dir, (final_name + ".part").c_str(), files.dir, final_name.c_str()) != 0)
      note(path);
  };
  seal(files.own, "shard-" + std::to_string(rt_.pid));
  for (std::size_t w = 0; w < incoming.size(); ++w) {
    if (problem.empty() && incoming[w].received != incoming[w].expected)
      problem = {shard_path(n, "copy", incoming[w].from) + ".part",
                 "the copy from process " + std::to_string(incoming[w].from) + " is incomplete"};
    seal(files.copies[w], "copy-" + std::to_string(incoming[w].from));
  }
  if (problem.empty() && fsync(files.dir) != 0) note(directory_ + "/c" + std::to_string(n));
  return problem;
}

// complete-<pid>: one line, written as .part, fsync'ed, closed and renamed, each checked.
Problem Checkpoints::write_marker(std::uint64_t n, Files& files) {
  const std::string name = "complete-" + std::to_string(rt_.pid), part = name + ".part";
  const std::string path = directory_ + "/c" + std::to_string(n) + "/" + name;
  const std::string line = complete_marker(n, rt_.nprocs, hex_id(run_), program_id_);
  const int fd =
      openat(files.dir, part.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return problem_at(path + ".part");
  const bool written = write_all(fd, line.data(), line.size()) && fsync(fd) == 0;
  Problem problem = written ? Problem{} : problem_at(path + ".part");
  if (::close(fd) != 0 && problem.empty()) problem = problem_at(path + ".part");
  if (!problem.empty()) return problem;
  if (renameat(files.dir, part.c_str(), files.dir, name.c_str()) != 0) return problem_at(path);
  if (fsync(files.dir) != 0) return problem_at(directory_ + "/c" + std::to_string(n));
  return {};
}

}  // namespace bspg
