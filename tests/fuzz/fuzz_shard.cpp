// fuzz_shard.cpp - checkpoint shards and complete markers (shard.hpp), which bsprun has checked
// on every host (bspg-hostinfo --check-shard) before a restart, which bspg_resume reads into the
// program (ShardReader), and which the files of a crashed job or another user's leftovers may
// hold. Any bytes must give a verdict, the same whatever pieces a read returns them in; a shard
// with a sound header, its size and its checksum must be whole; the reader never reads past the
// file, takes a shard whole only when the check does, and then has read what writes the same
// bytes back; a marker is read only when it is exactly the line complete_marker() writes.
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

// The input with the size and checksum (of its header's version) a writer would have given it.
std::vector<unsigned char> sealed(const unsigned char* data, std::size_t size) {
  std::vector<unsigned char> bytes(data, data + size);
  bspg::ShardHeader header;
  std::memcpy(&header, bytes.data(), sizeof header);
  header.file_bytes = size;
  std::memcpy(bytes.data(), &header, sizeof header);
  bspg::ShardHash hash(header.version);
  hash.update(bytes.data(), size - 8);
  const std::uint64_t sum = hash.value();
  std::memcpy(bytes.data() + size - 8, &sum, 8);
  return bytes;
}

// Whether a verdict is one the library gives (or the reader's size check).
bool known_verdict(const std::string& why) {
  for (const char* start : {"shorter than its header", "not a bspg checkpoint shard",
                            "written by an older bspg (", "written by a newer bspg (", "damaged (",
                            "damaged queue", "truncated", "not a regular file"})
    if (why.rfind(start, 0) == 0) return true;
  return false;
}

template <typename T>
void append(std::vector<unsigned char>& bytes, const T* data, std::size_t n) {
  const auto* from = reinterpret_cast<const unsigned char*>(data);
  bytes.insert(bytes.end(), from, from + n);
}

// Reads the bytes as bspg_resume does (areas allocated here only when the file can hold them
// all) and writes back in `written` the shard made of what was read: the reader's verdict.
std::string read_with_reader(const unsigned char* data, std::size_t size,
                             std::vector<unsigned char>& written) {
  bspg::ShardReader reader(bspg::fuzz::memory_file_holding(data, size));
  auto within = [&] { expect(reader.offset() <= size, "the reader never reads past the file"); };
  std::string why = reader.read_header();
  within();
  if (!why.empty()) return why;
  const bspg::ShardHeader& header = reader.header();
  expect(reader.offset() == bspg::shard_header_bytes(header.version), "the header is read whole");
  append(written, &header, reader.offset());
  why = reader.read_sizes();
  within();
  if (!why.empty()) return why;
  const std::vector<std::uint64_t>& sizes = reader.area_sizes();
  expect((sizes.size() + reader.registered().size()) * 8 <= size, "counts read fit the file");
  append(written, sizes.data(), sizes.size() * 8);
  append(written, reader.registered().data(), reader.registered().size() * 8);
  std::uint64_t total = 0;  // the areas' bytes, up to just past the input's size
  for (std::uint64_t bytes : sizes) {
    if (bytes > size - total) {  // no sum that could wrap
      total = size + 1;
      break;
    }
    total += bytes;
  }
  std::vector<unsigned char> memory(total <= size ? total : 0);
  std::vector<void*> places(sizes.size(), nullptr);
  if (total <= size)
    for (std::size_t a = 0, at = 0; a < sizes.size(); at += sizes[a++])
      places[a] = memory.data() + at;
  why = reader.read_areas(places);
  within();
  if (total > size) expect(!why.empty(), "areas larger than the file are refused");
  if (!why.empty()) return why;
  append(written, memory.data(), memory.size());
  std::vector<unsigned char> message;
  for (std::uint64_t m = 0; m < header.messages; ++m) {
    std::uint32_t lengths[2] = {0, 0};
    why = reader.read_message(lengths[0], lengths[1], [&](std::size_t bytes) {
      expect(bytes <= size - reader.offset(),
             "a message is given room only when the file holds it");
      message.resize(bytes);
      return reinterpret_cast<char*>(message.data());
    });
    within();
    if (!why.empty()) return why;
    expect(message.size() == std::size_t{lengths[0]} + lengths[1], "a message is as long as said");
    append(written, lengths, sizeof lengths);
    append(written, message.data(), message.size());
  }
  why = reader.finish();
  within();
  if (!why.empty()) return why;
  expect(reader.offset() == size && header.file_bytes == size, "a whole shard is read to its end");
  bspg::ShardHash hash(header.version);
  hash.update(written.data(), written.size());
  const std::uint64_t sum = hash.value();
  append(written, &sum, sizeof sum);
  return "";
}

// The reader's promises over one input, given the check's verdict on the same bytes.
void drive_reader(const unsigned char* data, std::size_t size, const std::string& checked) {
  std::vector<unsigned char> written;
  const std::string why = read_with_reader(data, size, written);
  expect(why.empty() || known_verdict(why), "the reader says what the library says");
  if (!why.empty()) return;
  expect(checked.empty(), "a shard the reader takes whole is whole for the check");
  expect(written.size() == size && std::memcmp(written.data(), data, size) == 0,
         "what the reader read writes the same bytes back");
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
    expect(header.file_bytes == size && bspg::readable_shard_version(header.version),
           "a whole shard's header is sound");
  drive_reader(data, size, whole);

  if (size < sizeof(bspg::ShardHeader) + 8) return 0;
  const std::vector<unsigned char> bytes = sealed(data, size);
  const std::string verdict = check_as_file(bytes.data(), bytes.size(), header);
  std::memcpy(&header, bytes.data(), sizeof header);
  const bool sound_header =
      std::memcmp(header.magic, bspg::kShardMagic, sizeof bspg::kShardMagic) == 0 &&
      bspg::readable_shard_version(header.version) &&
      bspg::is_hex_id(std::string(header.run, sizeof header.run));
  expect(!sound_header || verdict.empty(), "a sealed shard with a sound header is whole");
  expect(verdict == check_in_pieces(bytes.data(), bytes.size()),
         "the verdict of a sealed shard does not depend on the pieces");
  drive_reader(bytes.data(), bytes.size(), verdict);
  return 0;
}
