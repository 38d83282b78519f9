// Checkpoint files as bsprun and bspg-hostinfo read them: the complete marker's one line and the
// shard header (version 4, with the run and the supersteps, ended by XXH3; version 3 with the
// hand-written checksum before it, and version 2 without the supersteps, are read too), checked
// by check_shard_file; and as bspg_resume reads a shard into the program (ShardReader), refusing
// counts the file cannot hold before allocating. A flipped bit anywhere is refused, a shard of
// another bspg's format is named as such.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "shard.hpp"

using namespace bspg;

namespace {

constexpr const char* kRun = "65a1b2c3d4e5f607";
constexpr const char* kProgram = "0123456789abcdef";

// A scratch directory, removed with what it holds.
class Scratch {
 public:
  Scratch() {
    char pattern[] = "/tmp/bspg-unit-shard.XXXXXX";
    path_ = mkdtemp(pattern);
  }
  ~Scratch() { std::system(("rm -rf '" + path_ + "'").c_str()); }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// A whole shard (no areas, no messages) of `version` for pid 1, checkpoint 3 of run kRun.
void write_shard(const std::string& path, std::uint32_t version = kShardVersion) {
  ShardHeader header{};
  std::memcpy(header.magic, kShardMagic, sizeof header.magic);
  header.version = version;
  header.pid = 1;
  header.nprocs = 2;
  header.checkpoint = 3;
  std::memcpy(header.run, kRun, sizeof header.run);
  const std::size_t header_bytes = version == 2 ? kVersion2HeaderBytes : sizeof header;
  header.file_bytes = header_bytes + 8;
  ShardHash hash(version);
  hash.update(&header, header_bytes);
  const std::uint64_t sum = hash.value();
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(&header), static_cast<std::streamsize>(header_bytes));
  out.write(reinterpret_cast<const char*>(&sum), sizeof sum);
}

TEST(CompleteMarker, IsTheContractsOneLine) {
  EXPECT_EQ(complete_marker(12, 4, kRun, kProgram),
            "bspg checkpoint 12 of 4 processes run 65a1b2c3d4e5f607 program 0123456789abcdef\n");
}

TEST(CompleteMarker, ReadsBackWhatItWrites) {
  std::uint64_t n = 0;
  int p = 0;
  std::string run, program;
  ASSERT_TRUE(parse_complete_marker(complete_marker(7, 3, kRun, kProgram), n, p, run, program));
  EXPECT_EQ(n, 7u);
  EXPECT_EQ(p, 3);
  EXPECT_EQ(run, kRun);
  EXPECT_EQ(program, kProgram);
}

TEST(CompleteMarker, RefusesAnythingElse) {
  std::uint64_t n = 0;
  int p = 0;
  std::string run, program;
  for (const char* text : {
           "",                                    // written empty (a full disk)
           "bspg checkpoint 7 of 3 processes\n",  // an older bspg's marker
           "bspg checkpoint 7 of 3 processes run 65a1b2c3d4e5f607 program 0123456789abcdef",
           "bspg checkpoint 7 of 3 processes run 65A1B2C3D4E5F607 program 0123456789abcdef\n",
           "bspg checkpoint 7 of 3 processes run 65a1b2c3 program 0123456789abcdef\n",
           "bspg checkpoint 7 of 3 processes run 65a1b2c3d4e5f607 program 0123456789abcdef x\n",
           "bspg checkpoint 07 of 3 processes run 65a1b2c3d4e5f607 program 0123456789abcdef\n",
       })
    EXPECT_FALSE(parse_complete_marker(text, n, p, run, program)) << "'" << text << "'";
}

TEST(HexId, SixteenLowercaseHexDigits) {
  EXPECT_TRUE(is_hex_id(kRun));
  EXPECT_TRUE(is_hex_id("0000000000000000"));
  EXPECT_FALSE(is_hex_id("65a1b2c3d4e5f60"));
  EXPECT_FALSE(is_hex_id("65a1b2c3d4e5f6077"));
  EXPECT_FALSE(is_hex_id("65a1b2c3d4e5f60g"));
  EXPECT_FALSE(is_hex_id("65A1B2C3D4E5F607"));
}

// Found by UndefinedBehaviorSanitizer: an empty area (a null pointer, 0 bytes) fed while part of
// a block was pending passed the null pointer to memcpy. Empty pieces change nothing.
TEST(ShardHash, EmptyPiecesChangeNothingWhereverTheyCome) {
  const unsigned char bytes[45] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13};
  ShardHash whole;
  whole.update(bytes, sizeof bytes);
  ShardHash pieces;
  pieces.update(nullptr, 0);
  pieces.update(bytes, 5);  // a block pending
  pieces.update(nullptr, 0);
  pieces.update(bytes + 5, 32);
  pieces.update(nullptr, 0);
  pieces.update(bytes + 37, 8);
  EXPECT_EQ(pieces.value(), whole.value());
  ShardHash old_whole(3), old_pieces(3);  // the hand-written hash of versions 2 and 3
  old_whole.update(bytes, sizeof bytes);
  old_pieces.update(bytes, 5);
  old_pieces.update(nullptr, 0);
  old_pieces.update(bytes + 5, 40);
  EXPECT_EQ(old_pieces.value(), old_whole.value());
}

// The checksum of the format written is XXH3's 64-bit hash (seed 0) of every byte before it,
// however the bytes come; a copy goes on on its own. Versions 2 and 3 keep the hash they were
// written with.
TEST(ShardHash, IsXxh3OfTheWholeStream) {
  std::string bytes;
  for (int i = 0; i < 1000; ++i) bytes += static_cast<char>(i * 7 + i / 13);
  ShardHash hash;
  for (std::size_t at = 0, piece = 1; at < bytes.size(); at += piece, piece = piece * 2 + 1)
    hash.update(bytes.data() + at, std::min(piece, bytes.size() - at));
  EXPECT_EQ(hash.value(), XXH3_64bits(bytes.data(), bytes.size()));
  EXPECT_EQ(ShardHash().value(), XXH3_64bits(nullptr, 0));
  ShardHash copy = hash;
  copy.update("x", 1);
  EXPECT_EQ(hash.value(), XXH3_64bits(bytes.data(), bytes.size()));
  EXPECT_EQ(copy.value(), XXH3_64bits((bytes + "x").data(), bytes.size() + 1));
  ShardHash old(3);
  old.update(bytes.data(), bytes.size());
  EXPECT_EQ(old.value(), 0xa62c4634d0dab4ecull);  // as bspg gave these bytes before XXH3
  EXPECT_NE(old.value(), hash.value());
}

TEST(ShardFile, AWholeShardNamesItsRun) {
  Scratch scratch;
  write_shard(scratch.file("shard-1"));
  ShardHeader header{};
  EXPECT_EQ(check_shard_file(scratch.file("shard-1"), header), "");
  EXPECT_EQ(header.pid, 1u);
  EXPECT_EQ(header.checkpoint, 3u);
  EXPECT_EQ(std::string(header.run, sizeof header.run), kRun);
}

// A format this bspg does not read is named as another bspg's, not as damage.
TEST(ShardFile, AnOlderOrNewerFormatIsSaid) {
  Scratch scratch;
  write_shard(scratch.file("shard-1"), 1);
  ShardHeader header{};
  EXPECT_EQ(check_shard_file(scratch.file("shard-1"), header),
            "written by an older bspg (shard format 1; this bspg reads formats 2 to 4)");
  write_shard(scratch.file("shard-1"), 5);
  EXPECT_EQ(check_shard_file(scratch.file("shard-1"), header),
            "written by a newer bspg (shard format 5; this bspg reads formats 2 to 4)");
}

TEST(ShardFile, ALinkIsNotFollowed) {
  Scratch scratch;
  write_shard(scratch.file("elsewhere"));
  ASSERT_EQ(symlink(scratch.file("elsewhere").c_str(), scratch.file("shard-1").c_str()), 0);
  ShardHeader header{};
  EXPECT_EQ(check_shard_file(scratch.file("shard-1"), header), "a symbolic link (not followed)");
}

// The parts of a shard for pid 1, checkpoint 3 of run kRun, and its bytes as the library writes
// them, with the message lengths given.
struct Parts {
  std::vector<std::uint64_t> areas;  // sizes; area a's bytes are 'a' + a
  std::vector<std::int64_t> registered;
  std::vector<std::pair<std::string, std::string>> messages;  // tag, payload
  std::vector<std::uint32_t> lengths() const {
    std::vector<std::uint32_t> all;
    for (const auto& [tag, payload] : messages)
      all.insert(all.end(), {static_cast<std::uint32_t>(tag.size()),
                             static_cast<std::uint32_t>(payload.size())});
    return all;
  }
};

std::string shard_bytes(const Parts& parts, const std::vector<std::uint32_t>& lengths,
                        std::uint32_t version = kShardVersion) {
  ShardHeader header{};
  std::memcpy(header.magic, kShardMagic, sizeof header.magic);
  header.version = version;
  header.supersteps = version >= 3 ? 41 : 0;
  header.pid = 1;
  header.nprocs = 2;
  header.checkpoint = 3;
  std::memcpy(header.run, kRun, sizeof header.run);
  header.areas = parts.areas.size();
  header.registrations = parts.registered.size();
  header.messages = parts.messages.size();
  std::string bytes(reinterpret_cast<const char*>(&header), shard_header_bytes(version));
  auto append = [&bytes](const void* data, std::size_t n) {
    bytes.append(static_cast<const char*>(data), n);
  };
  append(parts.areas.data(), parts.areas.size() * 8);
  append(parts.registered.data(), parts.registered.size() * 8);
  for (std::size_t a = 0; a < parts.areas.size(); ++a)
    bytes.append(parts.areas[a], static_cast<char>('a' + a));
  for (std::size_t m = 0; m < parts.messages.size(); ++m) {
    append(&lengths[2 * m], 8);
    bytes += parts.messages[m].first + parts.messages[m].second;
  }
  header.file_bytes = bytes.size() + 8;
  std::memcpy(&bytes[0], &header, shard_header_bytes(version));
  ShardHash hash(version);
  hash.update(bytes.data(), bytes.size());
  const std::uint64_t sum = hash.value();
  append(&sum, sizeof sum);
  return bytes;
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// What ShardReader reads of a shard file, as bspg_resume would; counts the room it was asked for.
struct Read {
  std::string verdict;
  std::vector<std::uint64_t> areas;
  std::vector<std::int64_t> registered;
  std::vector<std::string> memory;  // the areas' bytes
  std::vector<std::pair<std::string, std::string>> messages;
  std::size_t room_asked = 0;
  std::uint64_t supersteps = 0;
};

Read read_shard(const std::string& path) {
  Read read;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  EXPECT_GE(fd, 0);
  ShardReader reader(fd);
  const ShardReader::Expected expected{3, 1};
  auto step = [&](std::string why) {
    read.verdict = why;
    return why.empty();
  };
  if (step(reader.read_header(&expected)) && step(reader.read_sizes())) {
    read.supersteps = reader.header().supersteps;
    read.areas = reader.area_sizes();
    read.registered = reader.registered();
    // The program's areas: none of the sizes a damaged shard claims beyond 1 MiB.
    read.memory.reserve(read.areas.size());
    std::vector<void*> places;
    for (std::uint64_t bytes : read.areas) {
      read.memory.emplace_back(bytes <= (1u << 20) ? bytes : 0, '.');
      places.push_back(&read.memory.back()[0]);
    }
    bool whole = step(reader.read_areas(places));
    std::string storage;
    for (std::uint64_t m = 0; whole && m < reader.header().messages; ++m) {
      std::uint32_t tag = 0, payload = 0;
      whole = step(reader.read_message(tag, payload, [&](std::size_t bytes) {
        read.room_asked += bytes;
        storage.assign(bytes, '\0');
        return &storage[0];
      }));
      if (whole) read.messages.emplace_back(storage.substr(0, tag), storage.substr(tag));
    }
    if (whole) step(reader.finish());
  }
  close(fd);
  return read;
}

TEST(ShardReader, ReadsBackAWholeShard) {
  Scratch scratch;
  const Parts parts{{5, 0, 3}, {16, -1}, {{"tag1", "payload one"}, {"", "2"}}};
  write_file(scratch.file("shard-1"), shard_bytes(parts, parts.lengths()));
  const Read read = read_shard(scratch.file("shard-1"));
  EXPECT_EQ(read.verdict, "");
  EXPECT_EQ(read.areas, parts.areas);
  EXPECT_EQ(read.registered, parts.registered);
  EXPECT_EQ(read.memory, (std::vector<std::string>{"aaaaa", "", "ccc"}));
  EXPECT_EQ(read.messages, parts.messages);
  EXPECT_EQ(read.supersteps, 41u);
  ShardHeader header{};
  EXPECT_EQ(check_shard_file(scratch.file("shard-1"), header), "");
}

// A shard of the version before (80 header bytes, no supersteps) is whole and read back.
TEST(ShardReader, ReadsAVersion2Shard) {
  Scratch scratch;
  const Parts parts{{5, 3}, {16}, {{"tag1", "payload one"}, {"", "2"}}};
  const std::string bytes = shard_bytes(parts, parts.lengths(), 2);
  ASSERT_EQ(bytes.size(), shard_bytes(parts, parts.lengths()).size() - 8);
  write_file(scratch.file("shard-1"), bytes);
  const Read read = read_shard(scratch.file("shard-1"));
  EXPECT_EQ(read.verdict, "");
  EXPECT_EQ(read.memory, (std::vector<std::string>{"aaaaa", "bbb"}));
  EXPECT_EQ(read.messages, parts.messages);
  EXPECT_EQ(read.supersteps, 0u);
  ShardHeader header{};
  EXPECT_EQ(check_shard_file(scratch.file("shard-1"), header), "");
  EXPECT_EQ(header.version, 2u);
  EXPECT_EQ(header.supersteps, 0u);
  // The smallest version 2 shard (88 bytes) is not "shorter than its header" for either.
  write_shard(scratch.file("shard-1"), 2);
  EXPECT_EQ(check_shard_file(scratch.file("shard-1"), header), "");
  EXPECT_EQ(read_shard(scratch.file("shard-1")).verdict, "");
}

// A shard of the format before XXH3 (version 3: the same layout, the hand-written checksum), as
// the previous release wrote it, is whole and read back: not taken for damage.
TEST(ShardReader, ReadsAVersion3ShardWithItsOwnChecksum) {
  Scratch scratch;
  const Parts parts{{5, 3}, {16}, {{"tag1", "payload one"}, {"", "2"}}};
  write_file(scratch.file("shard-1"), shard_bytes(parts, parts.lengths(), 3));
  const Read read = read_shard(scratch.file("shard-1"));
  EXPECT_EQ(read.verdict, "");
  EXPECT_EQ(read.memory, (std::vector<std::string>{"aaaaa", "bbb"}));
  EXPECT_EQ(read.messages, parts.messages);
  EXPECT_EQ(read.supersteps, 41u);
  ShardHeader header{};
  EXPECT_EQ(check_shard_file(scratch.file("shard-1"), header), "");
  EXPECT_EQ(header.version, 3u);
  write_shard(scratch.file("shard-1"), 3);
  EXPECT_EQ(check_shard_file(scratch.file("shard-1"), header), "");
  EXPECT_EQ(read_shard(scratch.file("shard-1")).verdict, "");
}

// The version says which checksum ends the shard: the other one is a mismatch either way.
TEST(ShardReader, TheVersionSaysWhichChecksum) {
  Scratch scratch;
  const Parts parts{{5}, {16}, {{"tag1", "payload one"}}};
  for (std::uint32_t version : {3u, 4u}) {
    std::string bytes = shard_bytes(parts, parts.lengths(), version);
    ShardHash other(version == 3 ? 4 : 3);
    other.update(bytes.data(), bytes.size() - 8);
    const std::uint64_t sum = other.value();
    std::memcpy(&bytes[bytes.size() - 8], &sum, sizeof sum);
    write_file(scratch.file("shard-1"), bytes);
    ShardHeader header{};
    EXPECT_EQ(check_shard_file(scratch.file("shard-1"), header), "damaged (checksum mismatch)")
        << "version " << version;
    EXPECT_EQ(read_shard(scratch.file("shard-1")).verdict, "damaged (checksum mismatch)")
        << "version " << version;
  }
}

// One flipped bit anywhere in a shard (header, sizes, areas, queue, checksum) makes both readers
// refuse it, as damage: only a flip in the magic or the version field is named otherwise, as not
// a shard or as another bspg's format (no reader can tell that from a shard of such a format).
TEST(ShardReader, AnyFlippedBitIsRefused) {
  Scratch scratch;
  const Parts parts{{5, 3}, {16}, {{"tag1", "payload one"}, {"", "2"}}};
  const std::string whole = shard_bytes(parts, parts.lengths());
  const std::string path = scratch.file("shard-1");
  const std::size_t version_at = offsetof(ShardHeader, version);
  auto named_as_damage = [](const std::string& verdict) {
    return verdict.rfind("damaged", 0) == 0 || verdict.rfind("truncated", 0) == 0;
  };
  for (std::size_t at = 0; at < whole.size(); ++at) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string flipped = whole;
      flipped[at] = static_cast<char>(flipped[at] ^ (1 << bit));
      write_file(path, flipped);
      ShardHeader header{};
      const std::string checked = check_shard_file(path, header);
      const std::string read = read_shard(path).verdict;
      const std::string where = "byte " + std::to_string(at) + " bit " + std::to_string(bit);
      if (at < sizeof kShardMagic) {
        EXPECT_EQ(checked, "not a bspg checkpoint shard") << where;
        EXPECT_EQ(read, "not a bspg checkpoint shard") << where;
      } else if (at >= version_at && at < version_at + 4) {
        for (const std::string& verdict : {checked, read})
          EXPECT_TRUE(named_as_damage(verdict) || verdict.rfind("written by a newer bspg", 0) == 0)
              << where << ": " << verdict;
      } else {
        EXPECT_TRUE(named_as_damage(checked)) << where << ": " << checked;
        EXPECT_TRUE(named_as_damage(read)) << where << ": " << read;
      }
    }
  }
  // The last 8 bytes are the checksum itself.
  std::string flipped = whole;
  flipped[whole.size() - 1] ^= 0x40;
  write_file(path, flipped);
  ShardHeader header{};
  EXPECT_EQ(check_shard_file(path, header), "damaged (checksum mismatch)");
  EXPECT_EQ(read_shard(path).verdict, "damaged (checksum mismatch)");
}

TEST(ShardReader, AMessageLongerThanTheFileIsRefusedBeforeRoomIsMade) {
  Scratch scratch;
  const Parts parts{{4}, {}, {{"t", "p"}, {"t", "p"}}};
  std::vector<std::uint32_t> lengths = parts.lengths();
  lengths[3] = std::uint32_t{1} << 30;  // the second payload claims 1 GiB
  write_file(scratch.file("shard-1"), shard_bytes(parts, lengths));
  Read read = read_shard(scratch.file("shard-1"));
  EXPECT_EQ(read.verdict, "truncated");
  EXPECT_EQ(read.room_asked, 2u);  // the first message's only
  lengths[3] = (std::uint32_t{1} << 30) + 1;
  write_file(scratch.file("shard-1"), shard_bytes(parts, lengths));
  read = read_shard(scratch.file("shard-1"));
  EXPECT_EQ(read.verdict, "damaged queue");
  EXPECT_EQ(read.room_asked, 2u);
}

TEST(ShardReader, CountsTheFileCannotHoldAreRefused) {
  Scratch scratch;
  const Parts parts{{2, 2}, {}, {}};
  std::string bytes = shard_bytes(parts, {});
  const std::uint64_t claimed = std::uint64_t{1} << 30;  // the first area says 1 GiB
  std::memcpy(&bytes[sizeof(ShardHeader)], &claimed, sizeof claimed);
  write_file(scratch.file("shard-1"), bytes);
  Read read = read_shard(scratch.file("shard-1"));
  EXPECT_EQ(read.verdict, "truncated");
  EXPECT_EQ(read.memory[1], "..");  // nothing was read into the areas
  ShardHeader header;
  std::memcpy(&header, bytes.data(), sizeof header);
  header.areas = std::uint64_t{1} << 20;  // as many sizes as a shard may have, in a small file
  std::memcpy(&bytes[0], &header, sizeof header);
  write_file(scratch.file("shard-1"), bytes);
  read = read_shard(scratch.file("shard-1"));
  EXPECT_EQ(read.verdict, "truncated");
  EXPECT_TRUE(read.areas.empty());
  header.areas = (std::uint64_t{1} << 20) + 1;
  std::memcpy(&bytes[0], &header, sizeof header);
  write_file(scratch.file("shard-1"), bytes);
  EXPECT_EQ(read_shard(scratch.file("shard-1")).verdict, "damaged (impossible counts)");
}

TEST(ShardReader, SaysWhatTheLibraryAlwaysSaid) {
  Scratch scratch;
  const Parts parts{{4}, {8}, {{"t", "p"}}};
  const std::string whole = shard_bytes(parts, parts.lengths());
  write_file(scratch.file("shard-1"), whole.substr(0, 40));
  EXPECT_EQ(read_shard(scratch.file("shard-1")).verdict, "shorter than its header");
  write_file(scratch.file("shard-1"), whole.substr(0, whole.size() - 3));
  EXPECT_EQ(read_shard(scratch.file("shard-1")).verdict, "truncated");
  write_file(scratch.file("shard-1"), whole + "x");
  EXPECT_EQ(read_shard(scratch.file("shard-1")).verdict, "damaged (bytes after the checksum)");
  std::string flipped = whole;
  flipped[sizeof(ShardHeader) + 17] ^= 1;  // in the area
  write_file(scratch.file("shard-1"), flipped);
  EXPECT_EQ(read_shard(scratch.file("shard-1")).verdict, "damaged (checksum mismatch)");
  write_shard(scratch.file("shard-1"), 1);
  EXPECT_EQ(read_shard(scratch.file("shard-1")).verdict,
            "written by an older bspg (shard format 1; this bspg reads formats 2 to 4)");
  write_shard(scratch.file("shard-1"), 5);
  EXPECT_EQ(read_shard(scratch.file("shard-1")).verdict,
            "written by a newer bspg (shard format 5; this bspg reads formats 2 to 4)");
  write_file(scratch.file("shard-1"), whole);
  const int fd = open(scratch.file("shard-1").c_str(), O_RDONLY | O_CLOEXEC);
  ShardReader reader(fd);
  const ShardReader::Expected other{4, 1};
  EXPECT_EQ(reader.read_header(&other), "damaged (its header names checkpoint 3 of process 1)");
  close(fd);
}

}  // namespace
