// page_hashes.cpp - the hash of each page to share: pointers count by what they point into.
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "globals_internal.hpp"

namespace bspg::globals_internal {
namespace {

// A word as the page hashes see it: pointers by what they point into, not by address.
inline std::uint64_t normalized(std::uint64_t word, const AddressMap& map) {
  const Interval* i = map.find(word);
  if (i == nullptr) return word;
  if (i->kind != Kind::Object) return 0x7072697661746521ULL;
  const LoadedObject& o = map.objects[i->object];
  return finish(o.key ^ (word - o.base));
}

inline std::uint64_t zero_page_hash(std::size_t nbytes) {
  return finish(mix(0x7061676500ULL, nbytes));
}

// A hash of one piece of a page.
std::uint64_t page_hash(const Segment& page, const AddressMap& map) {
  const unsigned char* bytes = reinterpret_cast<const unsigned char*>(page.begin);
  const std::size_t nbytes = page.end - page.begin;
  std::uint64_t any = 0;
  for (std::size_t i = 0; i < nbytes; ++i) any |= bytes[i];
  if (any == 0) return zero_page_hash(nbytes);
  std::uint64_t h = mix(0x7061676500ULL, nbytes);
  std::size_t i = 0;
  for (; i < nbytes && (page.begin + i) % sizeof(std::uint64_t) != 0; ++i) h = mix(h, bytes[i]);
  // Four independent lanes, for speed.
  std::uint64_t lanes[4] = {h, h ^ 1, h ^ 2, h ^ 3};
  constexpr std::size_t kWord = sizeof(std::uint64_t);
  for (; i + 4 * kWord <= nbytes; i += 4 * kWord) {
    std::uint64_t words[4];
    std::memcpy(words, bytes + i, sizeof words);
    for (int lane = 0; lane < 4; ++lane)
      lanes[lane] = mix(lanes[lane], normalized(words[lane], map));
  }
  h = mix(mix(mix(lanes[0], lanes[1]), lanes[2]), lanes[3]);
  for (; i + kWord <= nbytes; i += kWord) {
    std::uint64_t word;
    std::memcpy(&word, bytes + i, sizeof word);
    h = mix(h, normalized(word, map));
  }
  for (; i < nbytes; ++i) h = mix(h, bytes[i]);
  return finish(h);
}

bool inside(const std::vector<Segment>& ranges, const Segment& piece) {
  for (const Segment& r : ranges)
    if (r.begin <= piece.begin && piece.end <= r.end) return true;
  return false;
}

}  // namespace

// The hashes of all pages. A page of .bss that the process never touched (neither in memory nor
// swapped out, says /proc/self/pagemap) is zero: it gets the hash of zeros without being read,
// which spares the page faults of reading a large untouched array.
std::vector<std::uint64_t> page_hashes(const std::vector<Segment>& pages,
                                       const std::vector<Segment>& zero_fill,
                                       const AddressMap& map) {
  std::vector<std::uint64_t> hashes(pages.size());
  std::vector<std::uint64_t> entries;
  Address first_frame = 0;
  const long frame_bytes = sysconf(_SC_PAGESIZE);
  const int pagemap =
      pages.empty() || frame_bytes <= 0 ? -1 : open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  if (pagemap >= 0) {
    const Address frame = static_cast<Address>(frame_bytes);
    first_frame = pages.front().begin / frame;
    entries.resize((pages.back().end - 1) / frame - first_frame + 1);
    if (!read_at(pagemap, entries.data(), entries.size() * sizeof(std::uint64_t),
                 first_frame * sizeof(std::uint64_t)))
      entries.clear();
    close(pagemap);
  }
  constexpr std::uint64_t kPresent = 1ULL << 63, kSwapped = 1ULL << 62;
  for (std::size_t k = 0; k < pages.size(); ++k) {
    if (!entries.empty()) {
      const std::uint64_t entry =
          entries[pages[k].begin / static_cast<Address>(frame_bytes) - first_frame];
      if ((entry & (kPresent | kSwapped)) == 0 && inside(zero_fill, pages[k])) {
        hashes[k] = zero_page_hash(pages[k].end - pages[k].begin);
        continue;
      }
    }
    hashes[k] = page_hash(pages[k], map);
  }
  return hashes;
}

}  // namespace bspg::globals_internal
