// recovery_lines.cpp - reading the library's recovery lines (see recovery_lines.h).
#include "recovery_lines.h"

#include <cctype>
#include <cstdlib>
#include <string_view>

#include "untrusted.h"

namespace bspg::launcher {
namespace {

// Longer lines are not the library's.
constexpr std::size_t kMaxLine = 8192;

bool take(std::string_view& text, std::string_view word) {
  if (text.substr(0, word.size()) != word) return false;
  text.remove_prefix(word.size());
  return true;
}

// A decimal number of at most max_digits digits, no sign, no leading zero (but "0" itself),
// between low and high.
bool take_number(std::string_view& text, std::size_t max_digits, unsigned long long low,
                 unsigned long long high, unsigned long long& value) {
  std::size_t n = 0;
  while (n < text.size() && text[n] >= '0' && text[n] <= '9') ++n;
  if (n == 0 || n > max_digits || (n > 1 && text[0] == '0')) return false;
  value = std::strtoull(std::string(text.substr(0, n)).c_str(), nullptr, 10);
  if (value < low || value > high) return false;
  text.remove_prefix(n);
  return true;
}

// "process P (host H, process id X)"
bool take_process(std::string_view& text, LostProcess& lost) {
  unsigned long long pid = 0, process_id = 0;
  if (!take(text, "process ") || !take_number(text, 6, 0, 999999, pid) || !take(text, " (host "))
    return false;
  const std::size_t comma = text.find(',');
  if (comma == std::string_view::npos) return false;
  const std::string host(text.substr(0, comma));
  if (!plain_lost_host(host)) return false;
  text.remove_prefix(comma);
  if (!take(text, ", process id ") || !take_number(text, 7, 2, 4194304, process_id) ||
      !take(text, ")"))
    return false;
  lost.pid = static_cast<int>(pid);
  lost.host = host;
  lost.process_id = static_cast<long>(process_id);
  return true;
}

}  // namespace

bool plain_lost_host(const std::string& name) {
  if (name.empty() || name.size() > 255 || name[0] == '-' || name[0] == '.') return false;
  for (const char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_'))
      return false;
  return true;
}

std::optional<InPlaceRecovery> recovered_in_place(const std::string& line) {
  if (line.size() > kMaxLine) return std::nullopt;
  std::string_view text = line;
  InPlaceRecovery recovery;
  if (!take(text, "bspg: recovered in place")) return std::nullopt;
  if (take(text, " from checkpoint ") && !take_number(text, 19, 1, ~0ULL, recovery.checkpoint))
    return std::nullopt;
  if (!take(text, ": ")) return std::nullopt;
  for (;;) {
    LostProcess lost;
    if (!take_process(text, lost) || recovery.lost.size() >= 1000) return std::nullopt;
    recovery.lost.push_back(lost);
    if (take(text, " lost")) break;
    if (!take(text, ", ") && !take(text, " and ")) return std::nullopt;
  }
  // The same process twice is not a line of the library's.
  for (std::size_t i = 0; i < recovery.lost.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (recovery.lost[i].pid == recovery.lost[j].pid) return std::nullopt;
  if (!text.empty() && text[0] != ',' && text[0] != ';' && text[0] != ':') return std::nullopt;
  return recovery;
}

std::optional<NoRecoveryInPlace> no_recovery_in_place(const std::string& line) {
  if (line.size() > kMaxLine) return std::nullopt;
  std::string_view text = line;
  NoRecoveryInPlace said;
  if (!take(text, "bspg: ")) return std::nullopt;
  // The recovery's own time bound names no process ("a process was lost"): pid -1, no host.
  if (take(text, "a process was lost; no recovery in place: ")) {
    said.lost = LostProcess{};
  } else if (!take_process(text, said.lost) || !take(text, " lost; no recovery in place: ")) {
    return std::nullopt;
  }
  constexpr std::string_view kEnd = "; the job ends for a restart";
  if (text.size() <= kEnd.size() || text.substr(text.size() - kEnd.size()) != kEnd)
    return std::nullopt;
  const std::string_view why = text.substr(0, text.size() - kEnd.size());
  if (!untrusted::control_character_problem(why).empty()) return std::nullopt;
  said.why = untrusted::printable(why);
  return said;
}

}  // namespace bspg::launcher
