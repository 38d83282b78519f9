// agreement.hpp - what every process must agree on at a sync (BSPlib semantics), checked with one
// reduction instead of an exchange of everything.
//
// Each process describes its side of the sync in a Header. Its fields travel as one digest, twice:
// as the value and as its complement, in one element-wise MPI_MAX reduction, which yields the
// largest and (complemented back) the smallest digest: all processes agree when the two are equal.
// In a superstep without registrations or a new tag size (most of them) the digest is the call
// itself, exact; otherwise a 63-bit hash of every field, so two different headers would pass
// unnoticed with odds of 2^-63. Flags, one word each, are ORed by the same reduction. The few
// words keep the reduction of a sync on one node within one cache line (transport.hpp). Only when
// processes disagree does the sync gather every header (O(p) data, on that error path alone) to
// say which process differs and how. No MPI in here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace bspg {

enum class SyncCall : std::uint64_t { Sync = 1, End = 2 };

struct Header {
  enum Field : int {
    kCall,       // SyncCall
    kPushCount,  // bsp_push_reg calls this superstep
    kPopCount,   // bsp_pop_reg calls this superstep
    kOpOrder,    // digest of the order of those calls (they take effect in call order)
    kTagSize,    // requested tag size + 1 (0: unchanged)
    kFields,
  };
  enum Flag : std::uint64_t {
    kGets = 1,        // this process asks for data (a reply round is needed)
    kDirectPuts = 2,  // this process writes straight into registered memory
    kMailbox = 4,     // this process used its mailbox regions (or found one too small)
  };
  static constexpr int kFlagCount = 3;
  static constexpr int kMailboxBit = 2;  // kMailbox's word among the flags
  static_assert(kMailbox == std::uint64_t{1} << kMailboxBit, "kMailboxBit names kMailbox");
  // The digest, its complement, then one word per flag (MPI_MAX of 0/1 words is their OR).
  static constexpr int kWords = 2 + kFlagCount;

  std::uint64_t field[kFields] = {};
  std::uint64_t flags = 0;
  // A put found its mailbox region too small: the kMailbox word says 2 instead of 1 (no word of
  // its own: the common sync pays nothing for the rare growth).
  bool mailbox_short = false;

  void encode(std::uint64_t* words) const;
  std::uint64_t digest() const;
};

// A reduced header.
class Agreement {
 public:
  explicit Agreement(const std::uint64_t* words);
  // Whether every process's header is the same (then each process's own fields are the agreed
  // ones).
  bool unanimous() const { return largest_digest_ == smallest_digest_; }
  bool any(Header::Flag flag) const { return (flags_ & flag) != 0; }
  bool mailbox_short() const { return mailbox_short_; }  // of any process

 private:
  std::uint64_t largest_digest_, smallest_digest_;
  std::uint64_t flags_;
  bool mailbox_short_ = false;
};

// A misuse all processes see identically. `reporter` (an index into what was compared) prints.
struct Disagreement {
  bool found = false;
  int reporter = 0;
  const char* call = "";
  std::string message;
};

// Compares every process's header (gathered in rank order) with the first; the first that differs
// reports. `pids` names the processes in messages (rank -> bsp_pid()).
Disagreement find_disagreement(const std::vector<Header>& headers, const std::vector<int>& pids);

// Pops are agreed on separately, once their number agrees: every pop names a registration by a
// code (registry.hpp) or is flexible (0: a NULL pop that may take whichever NULL registration the
// others name). Two words per pop, reduced with MPI_MAX like the header.
void encode_pops(const std::vector<std::uint64_t>& codes, std::uint64_t* words);
// The decided code of every pop (0 where every process was flexible), or found=false.
struct PopDecision {
  bool agreed = true;
  std::vector<std::uint64_t> codes;
};
PopDecision decide_pops(const std::uint64_t* words, std::size_t pops);
// On disagreement: every process's codes, gathered in rank order (pops codes each).
Disagreement find_pop_disagreement(const std::vector<std::uint64_t>& gathered, std::size_t pops,
                                   const std::vector<int>& pids,
                                   std::string (*describe)(std::uint64_t));

}  // namespace bspg
