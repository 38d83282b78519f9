// fuzz_shard.cpp - checkpoint shards and complete markers (shard.hpp), which bsprun has checked
// on every host (bspg-hostinfo --check-shard) before a restart, and which the files of a crashed
// job or another user's leftovers may hold. Any bytes must give a verdict, the same whatever
// pieces a read returns them in; a shard with a sound header, its size and its checksum must be
// whole; a marker is read only when it is exactly the line complete_marker() writes.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "shard.hpp"

using bspg::fuzz::expect;

namespace {

// The verdict of check_shard_fd, which reads the bytes as a file.
std::string check_as_file(const unsigned char* data, std::size_t size, bspg::ShardHeader& header) {
  return bspg::check_shard_fd(bspg::fuzz::memory_file_holding(data, size), header);
}

// The verdict of ShardCheck fed in pieces of 1 to 13 bytes, as short reads would give them.
std::string check_in_pieces(const unsigned char* data, std::size_t size) {
  bspg::ShardCheck check;
  std::size_t piece = 1;
  for (std::size_t done = 0; done < size; piece = piece % 13 + 1) {
    const std::size_t n = piece < size - done ? piece : size - done;
    std::string problem = check.feed(data + done, n);
    if (!problem.empty()) return problem;
    done += n;
  }
  return check.finish();
}

// The input with the size and checksum a writer would have given it.
std::vector<unsigned char> sealed(const unsigned char* data, std::size_t size) {
  std::vector<unsigned char> bytes(data, data + size);
  bspg::ShardHeader header;
  std::memcpy(&header, bytes.data(), sizeof header);
  header.file_bytes = size;
  std::memcpy(bytes.data(), &header, sizeof header);
  bspg::ShardHash hash;
  hash.update(bytes.data(), size - 8);
  const std::uint64_t sum = hash.value();
  std::memcpy(bytes.data() + size - 8, &sum, 8);
  return bytes;
}

void read_marker(const std::string& text) {
  std::uint64_t n = 0;
  int nprocs = 0;
  std::string run, program;
  if (!bspg::parse_complete_marker(text, n, nprocs, run, program)) return;
  expect(bspg::complete_marker(n, nprocs, run, program) == text,
         "a marker read is the line complete_marker() writes");
  expect(bspg::is_hex_id(run) && bspg::is_hex_id(program), "a marker names a run and program");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  read_marker(bspg::fuzz::as_text(data, size));

  bspg::ShardHeader header{};
  const std::string whole = check_as_file(data, size, header);
  expect(whole == check_in_pieces(data, size), "the verdict does not depend on the pieces");
  if (whole.empty())
    expect(header.file_bytes == size && header.version == bspg::kShardVersion,
           "a whole shard's header is sound");

  if (size < sizeof(bspg::ShardHeader) + 8) return 0;
  const std::vector<unsigned char> bytes = sealed(data, size);
  const std::string verdict = check_as_file(bytes.data(), bytes.size(), header);
  std::memcpy(&header, bytes.data(), sizeof header);
  const bool sound_header =
      std::memcmp(header.magic, bspg::kShardMagic, sizeof bspg::kShardMagic) == 0 &&
      header.version == bspg::kShardVersion &&
      bspg::is_hex_id(std::string(header.run, sizeof header.run));
  expect(!sound_header || verdict.empty(), "a sealed shard with a sound header is whole");
  expect(verdict == check_in_pieces(bytes.data(), bytes.size()),
         "the verdict of a sealed shard does not depend on the pieces");
  return 0;
}
