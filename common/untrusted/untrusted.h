// untrusted.h - rules for text bsprun does not trust: host files, RSL files and what other hosts
// answer. Such text reaches an ssh configuration, mpirun's command line, RSL files and the
// terminal, so every value is checked for the form it may legally take before it is used, and
// shown escaped.
//
// Each *_problem function returns "" when the value is acceptable, otherwise what is wrong with
// it, phrased to follow "invalid host name 'x': " (the caller names the value and where it is).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace bspg::untrusted {

// The text as one inert line for a terminal: control characters (C0, DEL, C1) and bytes that are
// not UTF-8 become escapes such as \n, \t, \x1b and \x9b; backslashes stay as they are.
std::string printable(std::string_view text);

// printable() of at most the first max_bytes of text, with "..." when it was cut.
std::string excerpt(std::string_view text, std::size_t max_bytes = 80);

// "" or where the first control character is, e.g. "it contains a newline (\n) at character 10".
// Control characters are C0 (bytes below 0x20, including tab, CR and NUL), DEL and, in UTF-8, C1.
std::string control_character_problem(std::string_view text);

// A host's name as bsprun uses it (ssh configuration `Host`, mpirun's -host list, RSL): letters,
// digits, '-' and '_' in parts separated by single dots, no part starting with '-', at most 253
// characters; a name of numbers and dots only must be an IPv4 address (four numbers 0-255).
std::string host_name_problem(std::string_view text);

// Where to connect: a host name as above, an IPv4 address, or an IPv6 address (with or without
// [brackets]; no %zone). Never starts with '-'.
std::string address_problem(std::string_view text);

// An address without the brackets an IPv6 literal may be written with.
std::string address_without_brackets(std::string_view text);

// A user name: letters, digits, '.', '_', '-' (not first), an optional final '$', at most 64.
std::string user_name_problem(std::string_view text);

// A path to a file: no control characters, not empty, at most 4095 bytes, absolute.
std::string absolute_path_problem(std::string_view text);

// An environment variable name: a letter or '_', then letters, digits or '_'.
bool is_environment_name(std::string_view text);

// "" or why `id` cannot name a job (bsprun --job-id): 1 to 64 letters, digits, '.', '_', '-', not
// starting with '.' or '-' (it becomes a directory name on every host).
std::string job_id_problem(std::string_view id);

// "" or why `dir` cannot be a checkpoint directory (bsprun --checkpoint-dir): an absolute path (or
// "~/...") of at most 1024 bytes with no control characters and no "." or ".." component, not "/".
std::string checkpoint_dir_problem(std::string_view dir);

// Host files and RSL files are read whole into memory; larger ones are refused before reading.
constexpr std::size_t kMaxInputFileBytes = 16u << 20;  // 16 MiB

// Reads the regular file at `path` (at most max_bytes) into `text`. The file is opened without
// blocking and checked on the open descriptor, so a FIFO, device, socket or directory is refused
// at once with `problem` set (e.g. "it is a FIFO (named pipe), not a regular file"), as is a file
// larger than max_bytes. Returns false with `problem` set on any failure.
bool read_regular_file(const std::string& path, std::size_t max_bytes, std::string& text,
                       std::string& problem);

}  // namespace bspg::untrusted
