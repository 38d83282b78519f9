// Checkpoint files as bsprun and bspg-hostinfo read them: the complete marker's one line and the
// shard header (version 2, with the run), checked by check_shard_file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

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
  header.file_bytes = sizeof header + 8;
  ShardHash hash;
  hash.update(&header, sizeof header);
  const std::uint64_t sum = hash.value();
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(&header), sizeof header);
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

TEST(ShardFile, AWholeShardNamesItsRun) {
  Scratch scratch;
  write_shard(scratch.file("shard-1"));
  ShardHeader header{};
  EXPECT_EQ(check_shard_file(scratch.file("shard-1"), header), "");
  EXPECT_EQ(header.pid, 1u);
  EXPECT_EQ(header.checkpoint, 3u);
  EXPECT_EQ(std::string(header.run, sizeof header.run), kRun);
}

TEST(ShardFile, AnOlderFormatIsSaid) {
  Scratch scratch;
  write_shard(scratch.file("shard-1"), 1);
  ShardHeader header{};
  EXPECT_EQ(check_shard_file(scratch.file("shard-1"), header), "format version 1, not 2");
}

TEST(ShardFile, ALinkIsNotFollowed) {
  Scratch scratch;
  write_shard(scratch.file("elsewhere"));
  ASSERT_EQ(symlink(scratch.file("elsewhere").c_str(), scratch.file("shard-1").c_str()), 0);
  ShardHeader header{};
  EXPECT_EQ(check_shard_file(scratch.file("shard-1"), header), "a symbolic link (not followed)");
}

}  // namespace
