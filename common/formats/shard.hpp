// shard.hpp - the file format of one process's checkpoint shard, and its checksum. Header-only and
// free of MPI, so that tools (bspg-hostinfo --check-shard) can check a shard where it lies.
//
// Layout (native byte order; both the shard and its buddy's copy hold exactly these bytes):
//   ShardHeader, A x u64 area sizes, R x u64 registered sizes (slot order), the A areas' bytes,
//   M x (u32 tag bytes, u32 payload bytes, tag, payload), u64 checksum of every byte before it.
// Version 2 added the run id to the header: a checkpoint belongs to one run of one job. Version 3
// added the world supersteps ended at the checkpoint (88 header bytes, not 80), so that a resumed
// attempt's profile numbers its supersteps on from there. Version 4 changed only the checksum:
// XXH3's 64-bit hash (libxxhash, seed 0) in place of a hand-written one. Versions 2 and 3 are still
// read (with the hash they were written with); older and newer ones are named as such.
//
// A checkpoint's complete marker (complete-<pid>, written once every shard and copy of the
// checkpoint is on disk everywhere) holds exactly one line, see complete_marker().
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

namespace bspg {

constexpr char kShardMagic[8] = {'B', 'S', 'P', 'G', 'C', 'K', 'P', '1'};
constexpr std::uint32_t kShardVersion = 4;           // written
constexpr std::uint32_t kOldestShardVersion = 2;     // read
constexpr std::uint32_t kFirstXxh3ShardVersion = 4;  // before it, OldShardHash
constexpr std::size_t kVersion2HeaderBytes = 80;     // its header: ShardHeader without supersteps

struct ShardHeader {
  char magic[8];
  std::uint32_t version;
  std::uint32_t pid;
  std::uint32_t nprocs;
  std::uint32_t tag_nbytes;     // tag size in force after the checkpoint's sync
  std::uint64_t checkpoint;     // N
  std::uint64_t areas;          // persisted areas
  std::uint64_t registrations;  // live registrations of this process
  std::uint64_t messages;       // queued messages
  std::uint64_t file_bytes;     // the whole file, checksum included
  char run[16];                 // the run id: 16 lowercase hex digits, no NUL (version 2)
  std::uint64_t supersteps;     // world syncs ended at the checkpoint, its own too (version 3)
};
static_assert(sizeof(ShardHeader) == 88, "the shard header is a file format");
static_assert(offsetof(ShardHeader, supersteps) == kVersion2HeaderBytes, "version 3 appends");

inline bool readable_shard_version(std::uint32_t version) {
  return version >= kOldestShardVersion && version <= kShardVersion;
}
// "" for a version this bspg reads, else which bspg wrote the shard: not damage, so said apart.
inline std::string unreadable_shard_version(std::uint32_t version) {
  if (readable_shard_version(version)) return "";
  if (version == 0) return "damaged (its header names format version 0)";  // none was
  return std::string(version < kOldestShardVersion ? "written by an older" : "written by a newer") +
         " bspg (shard format " + std::to_string(version) + "; this bspg reads formats " +
         std::to_string(kOldestShardVersion) + " to " + std::to_string(kShardVersion) + ")";
}
// The header's size in a shard of a readable version.
inline std::size_t shard_header_bytes(std::uint32_t version) {
  return version == 2 ? kVersion2HeaderBytes : sizeof(ShardHeader);
}

// Run ids (BSPG_RUN) and program ids (BSPG_PROGRAM_ID): 16 lowercase hex digits.
inline bool is_hex_id(const std::string& text) {
  if (text.size() != 16) return false;
  for (char c : text)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

// The one line of checkpoint n's complete marker.
inline std::string complete_marker(std::uint64_t n, int nprocs, const std::string& run,
                                   const std::string& program) {
  return "bspg checkpoint " + std::to_string(n) + " of " + std::to_string(nprocs) +
         " processes run " + run + " program " + program + "\n";
}

// Reads a complete marker's text: false unless it is exactly complete_marker()'s line.
inline bool parse_complete_marker(const std::string& text, std::uint64_t& n, int& nprocs,
                                  std::string& run, std::string& program) {
  unsigned long long number = 0;
  int procs = 0, used = 0;
  char run_text[17] = "", program_text[17] = "";
  if (std::sscanf(text.c_str(), "bspg checkpoint %llu of %d processes run %16s program %16s%n",
                  &number, &procs, run_text, program_text, &used) != 4)
    return false;
  if (!is_hex_id(run_text) || !is_hex_id(program_text)) return false;
  if (text != complete_marker(number, procs, run_text, program_text)) return false;
  n = number, nprocs = procs, run = run_text, program = program_text;
  return true;
}

// The checksum of shard format versions 2 and 3, kept only to read their shards: a 64-bit hash of
// a byte stream fed in pieces of any size, four lanes of 8-byte words, each multiplied, rotated
// and multiplied again, then mixed.
class OldShardHash {
 public:
  void update(const void* data, std::size_t n) {
    if (n == 0) return;  // data may be null then (an empty area or queue)
    const auto* bytes = static_cast<const unsigned char*>(data);
    total_ += n;
    if (pending_ > 0) {
      const std::size_t take = n < sizeof block_ - pending_ ? n : sizeof block_ - pending_;
      std::memcpy(block_ + pending_, bytes, take);
      pending_ += take;
      bytes += take;
      n -= take;
      if (pending_ < sizeof block_) return;
      consume(block_);
      pending_ = 0;
    }
    for (; n >= sizeof block_; bytes += sizeof block_, n -= sizeof block_) consume(bytes);
    if (n > 0) std::memcpy(block_, bytes, n);  // bytes may be null when n is 0
    pending_ = n;
  }
  std::uint64_t value() const {
    std::uint64_t h = total_ * kMix1;
    for (int i = 0; i < 4; ++i) h = mix(h ^ rotl(lanes_[i], 7 * i + 1));
    for (std::size_t i = 0; i < pending_; ++i)
      h = mix(h ^ (static_cast<std::uint64_t>(block_[i]) << (8 * (i % 8))) ^ i);
    return mix(h);
  }

 private:
  static constexpr std::uint64_t kMul1 = 0x9E3779B97F4A7C15ull, kMul2 = 0xD6E8FEB86659FD93ull;
  static constexpr std::uint64_t kMix1 = 0xBF58476D1CE4E5B9ull, kMix2 = 0x94D049BB133111EBull;
  static std::uint64_t rotl(std::uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
  static std::uint64_t mix(std::uint64_t x) {
    x = (x ^ (x >> 30)) * kMix1;
    x = (x ^ (x >> 27)) * kMix2;
    return x ^ (x >> 31);
  }
  void consume(const unsigned char* block) {
    for (int i = 0; i < 4; ++i) {
      std::uint64_t word;
      std::memcpy(&word, block + 8 * i, 8);
      lanes_[i] = rotl(lanes_[i] + word * kMul2, 31) * kMul1;
    }
  }
  std::uint64_t lanes_[4] = {kMul1, kMul2, kMix1, kMix2};
  unsigned char block_[32] = {};
  std::size_t pending_ = 0;
  std::uint64_t total_ = 0;
};

// The checksum a shard of `version` ends with, fed in pieces of any size (damage detection, not
// security): XXH3's 64-bit hash with seed 0, whose values xxHash keeps the same from release to
// release, in a shard of the version written; OldShardHash in one of versions 2 and 3.
class ShardHash {
 public:
  explicit ShardHash(std::uint32_t version = kShardVersion) {
    if (version < kFirstXxh3ShardVersion) return;
    // The state is the library's to allocate: its layout is not part of libxxhash's ABI.
    state_.reset(XXH3_createState());
    if (!state_) throw std::bad_alloc();
    XXH3_64bits_reset(state_.get());
  }
  ShardHash(const ShardHash& other) : old_(other.old_) {
    if (!other.state_) return;
    state_.reset(XXH3_createState());
    if (!state_) throw std::bad_alloc();
    XXH3_copyState(state_.get(), other.state_.get());
  }
  ShardHash(ShardHash&&) noexcept = default;
  ShardHash& operator=(ShardHash other) noexcept {
    state_.swap(other.state_);
    old_ = other.old_;
    return *this;
  }

  void update(const void* data, std::size_t n) {
    if (n == 0) return;  // data may be null then (an empty area or queue)
    if (state_)
      XXH3_64bits_update(state_.get(), data, n);
    else
      old_.update(data, n);
  }
  // The hash of the bytes so far; more may be fed after.
  std::uint64_t value() const {
    return state_ ? static_cast<std::uint64_t>(XXH3_64bits_digest(state_.get())) : old_.value();
  }

 private:
  struct FreeState {
    void operator()(XXH3_state_t* state) const { XXH3_freeState(state); }
  };
  std::unique_ptr<XXH3_state_t, FreeState> state_;  // null: the old hash
  OldShardHash old_;
};

// Checks a shard's bytes as they come, in pieces of any size: the header as soon as it is whole,
// and, once finish() is called at the end of the file, the size and the checksum.
class ShardCheck {
 public:
  // "" while the bytes so far may start a whole shard, else what is wrong (then stop feeding).
  std::string feed(const unsigned char* data, std::size_t n) {
    total_ += n;
    // The first 80 bytes say the version, and so how long the header is and which checksum the
    // shard ends with: the header is hashed once it is whole, the bytes after it as they come.
    std::size_t at = 0;
    while (at < n && header_n_ < header_bytes_) {
      const std::size_t want = header_bytes_ - header_n_;
      const std::size_t take = n - at < want ? n - at : want;
      std::memcpy(reinterpret_cast<unsigned char*>(&header_) + header_n_, data + at, take);
      header_n_ += take;
      at += take;
      if (header_n_ == kVersion2HeaderBytes) {
        if (std::memcmp(header_.magic, kShardMagic, sizeof kShardMagic) != 0)
          return "not a bspg checkpoint shard";
        if (std::string why = unreadable_shard_version(header_.version); !why.empty()) return why;
        if (!is_hex_id(std::string(header_.run, sizeof header_.run)))
          return "damaged (its header names no run)";
        header_bytes_ = shard_header_bytes(header_.version);
      }
      if (header_n_ == header_bytes_) {
        hash_ = ShardHash(header_.version);
        hash_.update(&header_, header_bytes_);
      }
    }
    data += at;
    n -= at;
    // Every byte after the header but the final 8 goes into the hash: the newest 8 are held back.
    if (n >= sizeof tail_) {
      hash_.update(tail_, tail_n_);
      hash_.update(data, n - sizeof tail_);
      std::memcpy(tail_, data + n - sizeof tail_, sizeof tail_);
      tail_n_ = sizeof tail_;
    } else if (tail_n_ + n <= sizeof tail_) {
      std::memcpy(tail_ + tail_n_, data, n);
      tail_n_ += n;
    } else {  // fewer than 8 new bytes push out as many of the oldest held back
      const std::size_t out = tail_n_ + n - sizeof tail_;
      hash_.update(tail_, out);
      std::memmove(tail_, tail_ + out, tail_n_ - out);
      std::memcpy(tail_ + tail_n_ - out, data, n);
      tail_n_ = sizeof tail_;
    }
    return "";
  }
  // At the end of the file: "" when the shard is whole, else what is wrong.
  std::string finish() const {
    if (total_ < header_bytes_ + 8) return "shorter than its header";
    if (total_ != header_.file_bytes)
      return "truncated or extended: " + std::to_string(total_) + " bytes, the header says " +
             std::to_string(header_.file_bytes);
    std::uint64_t stored;
    std::memcpy(&stored, tail_, 8);
    if (stored != hash_.value()) return "damaged (checksum mismatch)";
    return "";
  }
  const ShardHeader& header() const { return header_; }

 private:
  ShardHeader header_{};  // supersteps stays 0 in a version 2 shard
  std::size_t header_n_ = 0;
  std::size_t header_bytes_ = kVersion2HeaderBytes;  // until the version is known
  ShardHash hash_;              // of the header's version, once the header is whole
  unsigned char tail_[8] = {};  // the last bytes fed: the checksum once the file ends
  std::size_t tail_n_ = 0;
  std::uint64_t total_ = 0;
};

// Reads the rest of the open file `fd` and checks it as a whole shard: "" and the header when
// whole, otherwise what is wrong. Does not close fd.
inline std::string check_shard_fd(int fd, ShardHeader& header) {
  ShardCheck check;
  // Left uninitialised: read() fills what is used.
  constexpr std::size_t kBufferBytes = std::size_t{1} << 20;
  const std::unique_ptr<unsigned char[]> buffer(new unsigned char[kBufferBytes]);
  for (;;) {
    const ssize_t got = ::read(fd, buffer.get(), kBufferBytes);
    if (got < 0) {
      if (errno == EINTR) continue;
      return std::string("cannot read: ") + std::strerror(errno);
    }
    if (got == 0) break;
    std::string problem = check.feed(buffer.get(), static_cast<std::size_t>(got));
    if (!problem.empty()) return problem;
  }
  header = check.header();
  return check.finish();
}

// Reads a whole shard file and checks it: "" and the header when whole, otherwise what is wrong.
inline std::string check_shard_file(const std::string& path, ShardHeader& header) {
  // Non-blocking, so that a FIFO put in a shard's place does not wait for a writer; only a
  // regular file is read, as the descriptor says (not a name looked up a second time), and a
  // symbolic link in its place is not followed.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
  if (fd < 0) {
    if (errno == ELOOP) return "a symbolic link (not followed)";
    return errno == ENOENT ? "missing" : std::string("cannot open: ") + std::strerror(errno);
  }
  struct stat info {};
  std::string problem;
  if (::fstat(fd, &info) != 0)
    problem = std::string("cannot read: ") + std::strerror(errno);
  else if (!S_ISREG(info.st_mode))
    problem = "not a regular file";
  else
    problem = check_shard_fd(fd, header);
  ::close(fd);
  return problem;
}

// Reads a shard file into memory the caller gives, step by step, checking every count and length
// against the bytes the file has left before anything is allocated or read (a damaged count costs
// nothing). The steps, each "" or why the shard cannot be used (stop at the first problem):
//   read_header()   the file's size and type, magic, version (2 to 4), [the shard expected], run
//                   id (a version 2 header gives supersteps 0);
//   read_sizes()    the area sizes and registered sizes (the caller compares them with its own);
//   read_areas()    the areas' bytes, straight into the caller's memory;
//   read_message()  header().messages times: lengths, then tag and payload where place() says;
//   finish()        the checksum, nothing after it, and the size the header gives.
// Reads at offsets from the file's start (pread), never past the size fstat gives.
class ShardReader {
 public:
  // The shard a reader of one checkpoint expects: checked right after the version.
  struct Expected {
    std::uint64_t checkpoint;
    std::uint32_t pid;
  };

  explicit ShardReader(int fd) : fd_(fd) {}

  std::string read_header(const Expected* expected = nullptr) {
    struct stat info {};
    if (::fstat(fd_, &info) != 0) return std::string("cannot read: ") + std::strerror(errno);
    if (!S_ISREG(info.st_mode)) return "not a regular file";
    size_ = static_cast<std::uint64_t>(info.st_size);
    // The header is hashed once whole: its version says with which checksum.
    if (!take(&header_, kVersion2HeaderBytes, false)) return "shorter than its header";
    if (std::memcmp(header_.magic, kShardMagic, sizeof kShardMagic) != 0)
      return "not a bspg checkpoint shard";
    if (std::string why = unreadable_shard_version(header_.version); !why.empty()) return why;
    const std::size_t header_bytes = shard_header_bytes(header_.version);
    if (!take(&header_.supersteps, header_bytes - kVersion2HeaderBytes, false))
      return "shorter than its header";
    hash_ = ShardHash(header_.version);
    hash_.update(&header_, header_bytes);
    if (expected && (header_.checkpoint != expected->checkpoint || header_.pid != expected->pid))
      return "damaged (its header names checkpoint " + std::to_string(header_.checkpoint) +
             " of process " + std::to_string(header_.pid) + ")";
    if (!is_hex_id(std::string(header_.run, sizeof header_.run)))
      return "damaged (its header names no run)";
    return "";
  }
  const ShardHeader& header() const { return header_; }

  std::string read_sizes() {
    if (header_.areas > kMostAreas || header_.registrations > kMostRegistrations)
      return "damaged (impossible counts)";
    if ((header_.areas + header_.registrations) * 8 > left()) return "truncated";
    area_sizes_.resize(header_.areas);
    registered_.resize(header_.registrations);
    if (!take(area_sizes_.data(), area_sizes_.size() * 8) ||
        !take(registered_.data(), registered_.size() * 8))
      return "truncated";
    return "";
  }
  const std::vector<std::uint64_t>& area_sizes() const { return area_sizes_; }
  const std::vector<std::int64_t>& registered() const { return registered_; }

  // Area a's bytes into into[a], one place per area; refused before any byte is read when the
  // file cannot hold them all.
  std::string read_areas(const std::vector<void*>& into) {
    std::uint64_t total = 0;
    for (std::uint64_t bytes : area_sizes_) {
      if (bytes > left() - total) return "truncated";
      total += bytes;
    }
    if (into.size() != area_sizes_.size()) return "not read (no place for each area)";
    for (std::size_t a = 0; a < area_sizes_.size(); ++a)
      if (area_sizes_[a] && !take(into[a], area_sizes_[a])) return "truncated";
    return "";
  }

  // The next message: its tag and payload lengths, and its bytes (tag, then payload) read into
  // place(tag_bytes + payload_bytes), a char* the caller makes room at. place is called only for
  // lengths the file holds.
  template <typename Place>
  std::string read_message(std::uint32_t& tag_bytes, std::uint32_t& payload_bytes, Place place) {
    std::uint32_t lengths[2];
    if (!take(lengths, sizeof lengths) || lengths[0] > kLongestPart || lengths[1] > kLongestPart)
      return "damaged queue";
    const std::size_t bytes = std::size_t{lengths[0]} + lengths[1];
    if (bytes > left()) return "truncated";
    if (!take(place(bytes), bytes)) return "truncated";
    tag_bytes = lengths[0];
    payload_bytes = lengths[1];
    return "";
  }

  std::string finish() {
    const std::uint64_t computed = hash_.value();
    std::uint64_t stored = 0;
    if (!take(&stored, sizeof stored)) return "truncated";
    if (stored != computed) return "damaged (checksum mismatch)";
    char extra;
    if (left() > 0 || ::pread(fd_, &extra, 1, static_cast<off_t>(offset_)) != 0)
      return "damaged (bytes after the checksum)";
    if (header_.file_bytes != offset_)  // only a writer that got it wrong
      return "damaged (its header says " + std::to_string(header_.file_bytes) + " bytes, it has " +
             std::to_string(offset_) + ")";
    return "";
  }

  std::uint64_t offset() const { return offset_; }  // bytes read so far
  std::uint64_t file_size() const { return size_; }

 private:
  static constexpr std::uint64_t kMostAreas = std::uint64_t{1} << 20;
  static constexpr std::uint64_t kMostRegistrations = std::uint64_t{1} << 24;
  static constexpr std::uint32_t kLongestPart = std::uint32_t{1} << 30;  // a tag or a payload
  static constexpr std::uint64_t kPieceBytes = std::uint64_t{8} << 20;   // per read

  std::uint64_t left() const { return size_ - offset_; }
  // n bytes at the offset into `into`, hashed unless not `hashed`; false when the file does not
  // hold them.
  bool take(void* into, std::uint64_t n, bool hashed = true) {
    if (n > left()) return false;
    auto* at = static_cast<unsigned char*>(into);
    for (std::uint64_t done = 0; done < n;) {
      const std::uint64_t want = n - done < kPieceBytes ? n - done : kPieceBytes;
      const ssize_t got = ::pread(fd_, at + done, want, static_cast<off_t>(offset_ + done));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) return false;
      if (hashed) hash_.update(at + done, static_cast<std::size_t>(got));
      done += static_cast<std::uint64_t>(got);
    }
    offset_ += n;
    return true;
  }

  int fd_;
  std::uint64_t size_ = 0;    // as fstat gave it
  std::uint64_t offset_ = 0;  // where the next read starts
  ShardHeader header_{};
  std::vector<std::uint64_t> area_sizes_;
  std::vector<std::int64_t> registered_;
  ShardHash hash_;  // of the header's version, from read_header() on
};

}  // namespace bspg
