// shard_to_version2 FILE... - rewrites checkpoint shards (or copies) in place as the version before
// wrote them (format version 2: no supersteps in the header, 8 bytes fewer), so that a test can
// resume from a checkpoint as the previous release left it.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

#include "shard.hpp"

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::ifstream in(argv[i], std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    bspg::ShardHeader header;
    if (bytes.size() < sizeof header + 8) {
      std::fprintf(stderr, "shard_to_version2: %s: not a shard\n", argv[i]);
      return 1;
    }
    std::memcpy(&header, bytes.data(), sizeof header);
    if (header.version != 3) {
      std::fprintf(stderr, "shard_to_version2: %s: version %u, not 3\n", argv[i], header.version);
      return 1;
    }
    header.version = 2;
    header.file_bytes -= 8;
    bytes.erase(bspg::kVersion2HeaderBytes, 8);  // the supersteps
    bytes.resize(bytes.size() - 8);              // the checksum, made again below
    std::memcpy(&bytes[0], &header, bspg::kVersion2HeaderBytes);
    bspg::ShardHash hash;
    hash.update(bytes.data(), bytes.size());
    const std::uint64_t sum = hash.value();
    bytes.append(reinterpret_cast<const char*>(&sum), sizeof sum);
    std::ofstream(argv[i], std::ios::binary | std::ios::trunc) << bytes;
  }
  return 0;
}
