// stream.hpp - the bytes one process sends one peer in a superstep round, as the transport moves
// them. A Stream is a growable buffer of records (records.hpp says what they mean) with room in
// front for the transport's chunk header, plus "externals": payloads that stay in the user's
// memory until the sync (bsp_hpsend) and are placed into the stream only when it moves.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

namespace bspg {

constexpr std::size_t align4(std::size_t n) { return (n + 3) & ~static_cast<std::size_t>(3); }
constexpr std::size_t align8(std::size_t n) { return (n + 7) & ~static_cast<std::size_t>(7); }

// A growable byte buffer without zero-initialisation (std::vector<char> would zero every byte).
class ByteBuffer {
 public:
  ByteBuffer() = default;
  ByteBuffer(const ByteBuffer&) = delete;
  ByteBuffer& operator=(const ByteBuffer&) = delete;
  ByteBuffer(ByteBuffer&& other) noexcept
      : data_(other.data_), size_(other.size_), capacity_(other.capacity_) {
    other.data_ = nullptr;
    other.size_ = other.capacity_ = 0;
  }
  ByteBuffer& operator=(ByteBuffer&& other) noexcept {
    if (this != &other) {
      std::free(data_);
      data_ = other.data_;
      size_ = other.size_;
      capacity_ = other.capacity_;
      other.data_ = nullptr;
      other.size_ = other.capacity_ = 0;
    }
    return *this;
  }
  ~ByteBuffer() { std::free(data_); }

  char* data() { return data_; }
  const char* data() const { return data_; }
  std::size_t size() const { return size_; }
  std::size_t capacity() const { return capacity_; }
  void clear() { size_ = 0; }
  // Gives the memory back (a buffer that once held a huge superstep should not keep it forever).
  void release() {
    std::free(data_);
    data_ = nullptr;
    size_ = capacity_ = 0;
  }

  // Room for n more bytes; returns where they go and counts them as used.
  char* extend(std::size_t n) {
    if (size_ + n > capacity_) grow(size_ + n);
    char* at = data_ + size_;
    size_ += n;
    return at;
  }
  void append(const void* bytes, std::size_t n) {
    if (n) std::memcpy(extend(n), bytes, n);
  }

 private:
  void grow(std::size_t needed) {
    std::size_t capacity = capacity_ ? capacity_ * 2 : 4096;
    while (capacity < needed) capacity *= 2;
    char* bigger = static_cast<char*>(std::realloc(data_, capacity));
    if (!bigger) throw std::bad_alloc();
    data_ = bigger;
    capacity_ = capacity;
  }

  char* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

class Stream {
 public:
  // Bytes in front of the records for the transport's chunk header (a multiple of 8, so record
  // alignment inside the buffer is alignment inside the stream).
  static constexpr std::size_t kHeadroom = 40;

  // User memory placed into the stream: `bytes` of `data` go where the buffer's first
  // `buffer_offset` bytes end; the stream then skips `padded` (= align8(bytes)) bytes.
  struct External {
    std::size_t buffer_offset;
    const char* data;
    std::size_t bytes;
    std::size_t padded;
  };

  bool empty() const { return buffer_.size() == 0; }
  // Stream bytes (records and externals, without the headroom).
  std::uint64_t length() const {
    return empty() ? 0 : buffer_.size() - kHeadroom + external_bytes_;
  }

  // Where records are appended; reserves the headroom first.
  ByteBuffer& records() {
    if (buffer_.size() == 0) buffer_.extend(kHeadroom);
    return buffer_;
  }
  const char* buffer() const { return buffer_.data(); }
  std::size_t buffer_size() const { return buffer_.size(); }

  // Appends n bytes that stay in user memory until the stream moves (padded to 8 in the stream).
  // The records before them must end 8-aligned.
  void add_external(const void* data, std::size_t n) {
    records();
    last_put_ = last_get_ = 0;  // a put or get after this must not grow a record before it
    externals_.push_back({buffer_.size(), static_cast<const char*>(data), n, align8(n)});
    external_bytes_ += align8(n);
  }
  const std::vector<External>& externals() const { return externals_; }

  // Where the last put record starts in the buffer (0: none yet, or no longer growable).
  std::size_t last_put() const { return last_put_; }
  void set_last_put(std::size_t at) { last_put_ = at; }
  // The same for get requests.
  std::size_t last_get() const { return last_get_; }
  void set_last_get(std::size_t at) { last_get_ = at; }

  void clear() {
    last_put_ = last_get_ = 0;
    // A buffer grown by one huge superstep is given back rather than kept for every later one.
    if (buffer_.capacity() > kKeepBytes) buffer_.release();
    buffer_.clear();
    externals_.clear();
    external_bytes_ = 0;
  }

 private:
  static constexpr std::size_t kKeepBytes = std::size_t{4} << 20;
  ByteBuffer buffer_;
  std::vector<External> externals_;
  std::size_t external_bytes_ = 0;
  std::size_t last_put_ = 0;
  std::size_t last_get_ = 0;
};

}  // namespace bspg
