// message_lines.h - what the readers of the starters' messages share: the longest block, rules,
// trimming, NUL bytes, a block in one line, Open MPI's starter's name, ssh's cut connections and
// the words for a host lost. Each is described where it is defined. Private to starting/.
#ifndef BSPG_LAUNCHER_MESSAGE_LINES_H
#define BSPG_LAUNCHER_MESSAGE_LINES_H

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace bspg::launcher::messages_internal {

// A block longer than this is not one of Open MPI's messages: pass it on as it is.
constexpr std::size_t kMaxBlockLines = 200;

// mpirun_messages.cpp; the default is here, where the callers in other files see it.
bool is_rule(std::string_view line, char c = '-');
std::string trim(const std::string& text);
bool contains(const std::string& text, const char* part);
std::string_view nuls_skipped(std::string_view line);
std::string joined(const std::vector<std::string>& lines);

// openmpi_blocks.cpp
bool starter_word_before(const std::string& text, std::size_t end);

// ssh_lines.cpp
bool is_cut_connection(const std::string& line);
std::string lost_contact(const std::string& host);
bool names_address(const std::string& line, const std::string& address);

}  // namespace bspg::launcher::messages_internal

#endif
