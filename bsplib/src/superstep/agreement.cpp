#include "agreement.hpp"

namespace bspg {

std::uint64_t Header::digest() const {
  bool rare = false;
  for (int f = 0; f < kFields; ++f)
    if (f != kCall && field[f] != 0) rare = true;
  if (!rare) return field[kCall];  // small: never has the top bit
  // Every field stirred in turn with a bijective 64-bit mix (multiply, shift and xor steps), the
  // top bit set so that no hash equals a plain call.
  std::uint64_t h = 0;
  for (int f = 0; f < kFields; ++f) {
    h ^= field[f] + 0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(f + 1);
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
    h ^= h >> 31;
  }
  return h | std::uint64_t{1} << 63;
}

void Header::encode(std::uint64_t* words) const {
  const std::uint64_t d = digest();
  words[0] = d;
  words[1] = ~d;
  for (int bit = 0; bit < kFlagCount; ++bit) words[2 + bit] = (flags >> bit) & 1;
  if (mailbox_short) words[2 + kMailboxBit] = 2;
}

Agreement::Agreement(const std::uint64_t* words)
    : largest_digest_(words[0]), smallest_digest_(~words[1]), flags_(0) {
  for (int bit = 0; bit < Header::kFlagCount; ++bit)
    if (words[2 + bit]) flags_ |= std::uint64_t{1} << bit;
  mailbox_short_ = words[2 + Header::kMailboxBit] == 2;
}

namespace {

const char* call_name(std::uint64_t call) {
  switch (static_cast<SyncCall>(call)) {
    case SyncCall::Sync:
      return "bsp_sync";
    case SyncCall::End:
      return "bsp_end";
  }
  return "an unknown call";
}

std::string num(std::uint64_t word) { return std::to_string(static_cast<long long>(word)); }

std::string tag_size_text(std::uint64_t word) {
  return word == 0 ? std::string("does not change the tag size")
                   : "sets " + num(word - 1) + " bytes";
}

}  // namespace

Disagreement find_disagreement(const std::vector<Header>& headers, const std::vector<int>& pids) {
  Disagreement verdict;
  if (headers.empty()) return verdict;
  const Header& first = headers[0];
  const std::string p0 = "process " + std::to_string(pids[0]);
  for (std::size_t i = 1; i < headers.size(); ++i) {
    const Header& h = headers[i];
    const std::string pi = "process " + std::to_string(pids[i]);
    auto found = [&](const char* call, std::string message) {
      verdict = {true, static_cast<int>(i), call, std::move(message)};
    };
    if (h.field[Header::kCall] != first.field[Header::kCall]) {
      found(call_name(h.field[Header::kCall]),
            "processes disagree: " + p0 + " called " + call_name(first.field[Header::kCall]) +
                " while " + pi + " called " + call_name(h.field[Header::kCall]) +
                " (every process must make the same sequence of bsp_sync calls and end with "
                "bsp_end)");
    } else if (h.field[Header::kPushCount] != first.field[Header::kPushCount]) {
      found("bsp_push_reg",
            "processes disagree at this bsp_sync: " + p0 + " registered " +
                num(first.field[Header::kPushCount]) + " area(s), " + pi + " registered " +
                num(h.field[Header::kPushCount]) +
                " (bsp_push_reg is collective: every process makes the same calls)");
    } else if (h.field[Header::kPopCount] != first.field[Header::kPopCount]) {
      found("bsp_pop_reg", "processes disagree at this bsp_sync: " + p0 + " pops " +
                               num(first.field[Header::kPopCount]) + " registration(s), " + pi +
                               " pops " + num(h.field[Header::kPopCount]) +
                               " (bsp_pop_reg is collective: every process makes the same calls)");
    } else if (h.field[Header::kOpOrder] != first.field[Header::kOpOrder]) {
      found("bsp_pop_reg",
            "processes disagree at this bsp_sync: " + p0 + " and " + pi +
                " make their bsp_push_reg and bsp_pop_reg calls in a different order (they take "
                "effect in call order, so every process makes them in the same order)");
    } else if (h.field[Header::kTagSize] != first.field[Header::kTagSize]) {
      found("bsp_set_tagsize",
            "processes disagree at this bsp_sync: " + p0 + " " +
                tag_size_text(first.field[Header::kTagSize]) + ", " + pi + " " +
                tag_size_text(h.field[Header::kTagSize]) +
                " (bsp_set_tagsize is collective, with the same size everywhere)");
    }
    if (verdict.found) break;
  }
  return verdict;
}

void encode_pops(const std::vector<std::uint64_t>& codes, std::uint64_t* words) {
  for (std::size_t k = 0; k < codes.size(); ++k) {
    // A flexible pop (0) contributes 0 to both words: it changes neither the maximum nor the
    // minimum.
    words[2 * k] = codes[k];
    words[2 * k + 1] = codes[k] ? ~codes[k] : 0;
  }
}

PopDecision decide_pops(const std::uint64_t* words, std::size_t pops) {
  PopDecision decision;
  decision.codes.resize(pops);
  for (std::size_t k = 0; k < pops; ++k) {
    const std::uint64_t largest = words[2 * k], smallest = ~words[2 * k + 1];
    if (largest == 0) continue;  // everybody flexible
    if (largest != smallest) decision.agreed = false;
    decision.codes[k] = largest;
  }
  return decision;
}

Disagreement find_pop_disagreement(const std::vector<std::uint64_t>& gathered, std::size_t pops,
                                   const std::vector<int>& pids,
                                   std::string (*describe)(std::uint64_t)) {
  Disagreement verdict;
  for (std::size_t k = 0; k < pops && !verdict.found; ++k) {
    std::size_t first = pids.size();  // the first process with a definite target for pop k
    for (std::size_t i = 0; i < pids.size(); ++i) {
      const std::uint64_t code = gathered[i * pops + k];
      if (code == 0) continue;
      if (first == pids.size()) {
        first = i;
      } else if (code != gathered[first * pops + k]) {
        verdict = {true, static_cast<int>(i), "bsp_pop_reg",
                   "processes disagree at this bsp_sync: in pop number " + std::to_string(k + 1) +
                       ", process " + std::to_string(pids[first]) + " pops " +
                       describe(gathered[first * pops + k]) + ", process " +
                       std::to_string(pids[i]) + " pops " + describe(code) +
                       " (pops must name the same registrations in the same order everywhere)"};
        break;
      }
    }
  }
  return verdict;
}

}  // namespace bspg
