// shard_to_older VERSION FILE... - rewrites checkpoint shards (or copies) in place as an older
// bspg wrote them, so that a test can resume from a checkpoint as a previous release left it:
// format version 3 (the same bytes, ended by the old hand-written checksum, not XXH3) or 2 (also
// no supersteps in the header, 8 bytes fewer).
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

#include "shard.hpp"

int main(int argc, char** argv) {
  const std::string version = argc > 1 ? argv[1] : "";
  if (version != "2" && version != "3") {
    std::fprintf(stderr, "usage: shard_to_older 2|3 FILE...\n");
    return 2;
  }
  for (int i = 2; i < argc; ++i) {
    std::ifstream in(argv[i], std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    bspg::ShardHeader header;
    if (bytes.size() < sizeof header + 8) {
      std::fprintf(stderr, "shard_to_older: %s: not a shard\n", argv[i]);
      return 1;
    }
    std::memcpy(&header, bytes.data(), sizeof header);
    if (header.version != bspg::kShardVersion) {
      std::fprintf(stderr, "shard_to_older: %s: version %u, not %u\n", argv[i], header.version,
                   bspg::kShardVersion);
      return 1;
    }
    header.version = version == "2" ? 2 : 3;
    bytes.resize(bytes.size() - 8);  // the checksum, made again below with the old hash
    if (header.version == 2) {
      header.file_bytes -= 8;
      bytes.erase(bspg::kVersion2HeaderBytes, 8);  // the supersteps
    }
    std::memcpy(&bytes[0], &header, bspg::shard_header_bytes(header.version));
    bspg::ShardHash hash(header.version);
    hash.update(bytes.data(), bytes.size());
    const std::uint64_t sum = hash.value();
    bytes.append(reinterpret_cast<const char*>(&sum), sizeof sum);
    std::ofstream(argv[i], std::ios::binary | std::ios::trunc) << bytes;
  }
  return 0;
}
