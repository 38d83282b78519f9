// schedule.hpp - the schedule matrix of one superstep. Each process contributes a row (what it
// asks of the sync, and how many bytes it sends to / expects back from every process); one
// MPI_Allgather makes all rows known everywhere. From the p x p matrix every process computes the
// same offsets, window sizes and transfer order, and the same verdict on misuse. No MPI in here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace bspg {

enum class SyncCall : std::uint64_t { Sync = 1, End = 2 };

class Schedule {
 public:
  // Row layout: header words, then per destination d: stream bytes to d, get-reply bytes from d,
  // mailbox bytes put directly into the mailbox for d.
  enum Header : int {
    kCall = 0,         // SyncCall
    kPushCount,        // bsp_push_reg calls this superstep
    kPopCount,         // bsp_pop_reg calls this superstep
    kPopDigest,        // order-sensitive digest of the popped slots
    kFirstPop,         // first popped slot + 1 (0: none)
    kTagSize,          // requested tag size + 1 (0: unchanged)
    kHeaderWords = 8,  // room to grow without changing the layout
  };
  static constexpr int kWordsPerProcess = 3;
  static int stream_word(int dst) { return kHeaderWords + kWordsPerProcess * dst; }
  static int reply_word(int server) { return kHeaderWords + kWordsPerProcess * server + 1; }
  static int mailbox_word(int dst) { return kHeaderWords + kWordsPerProcess * dst + 2; }

  explicit Schedule(int nprocs)
      : nprocs_(nprocs),
        row_words_(kHeaderWords + kWordsPerProcess * nprocs),
        matrix_(static_cast<std::size_t>(nprocs) * static_cast<std::size_t>(row_words_), 0) {}

  int nprocs() const { return nprocs_; }
  int row_words() const { return row_words_; }
  std::uint64_t* matrix() { return matrix_.data(); }
  const std::uint64_t* row(int pid) const { return matrix_.data() + static_cast<std::size_t>(pid) * row_words_; }
  std::uint64_t header(int pid, Header field) const { return row(pid)[field]; }

  // Bytes src's stream to dst holds, and bytes of get replies `server` sends back to `requester`.
  std::uint64_t stream_bytes(int src, int dst) const { return row(src)[stream_word(dst)]; }
  std::uint64_t reply_bytes(int requester, int server) const { return row(requester)[reply_word(server)]; }
  // Bytes src put straight into its mailbox for dst this superstep.
  std::uint64_t mailbox_bytes(int src, int dst) const { return row(src)[mailbox_word(dst)]; }
  bool any_mailbox() const;

  // True when any process sends anything (puts, gets, messages, mailbox puts) this superstep.
  bool any_data() const;
  // True when any process issued a get this superstep (a second, reply round is needed).
  bool any_gets() const;
  bool gets_for(int server) const;  // anyone asks `server` for data

  // Where src's stream lands in dst's receive window: after the streams of lower pids.
  std::uint64_t stream_offset(int src, int dst) const;
  // Total stream bytes dst receives (where get replies start, 8-aligned).
  std::uint64_t incoming_stream_bytes(int dst) const;
  // Where server's replies land in requester's window.
  std::uint64_t reply_offset(int requester, int server) const;
  // Window bytes process pid needs this superstep.
  std::uint64_t window_bytes_needed(int pid) const;

  // The k-th destination (k = 0..p-1) src sends to: src+1, src+2, ... and itself last, so that
  // at every step each process receives from exactly one other and nobody is flooded.
  int send_target(int src, int k) const { return (src + 1 + k) % nprocs_; }

  // Misuse that all processes see identically: processes disagree on the call, the number of
  // registrations, the pops or the tag size. `reporter` is the one process that prints.
  struct Disagreement {
    bool found = false;
    int reporter = 0;
    const char* call = "";
    std::string message;
  };
  Disagreement check() const;

 private:
  int nprocs_;
  int row_words_;
  std::vector<std::uint64_t> matrix_;
};

}  // namespace bspg
