// rendering.cpp - a page rendered: through lowdown into roff, tidied to read as bspg's pages
// always have, and through groff into the plain text of --help; characters as roff reads them.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

#include "mangen.h"

// The tools found when configuring (man/CMakeLists.txt).
#ifndef BSPG_LOWDOWN
#define BSPG_LOWDOWN "lowdown"
#endif
#ifndef BSPG_GROFF
#define BSPG_GROFF "groff"
#endif

namespace bspg::mangen {

// s for roff: '-' as a minus sign (options and names need it; "\-" stays), other characters than
// ASCII as \[uXXXX], which roff reads whatever the locale. Throws on a malformed UTF-8 sequence.
std::string roff_chars(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      out += c == '-' && (i == 0 || s[i - 1] != '\\') ? std::string("\\-") : std::string(1, s[i]);
      ++i;
      continue;
    }
    const int more = c >= 0xF0 && c < 0xF8 ? 3 : c >= 0xE0 ? 2 : c >= 0xC0 ? 1 : 0;
    if (more == 0 || i + more >= s.size()) throw std::runtime_error("not UTF-8");
    unsigned code = c & (0x3F >> more);
    for (int k = 1; k <= more; ++k) {
      const unsigned char next = static_cast<unsigned char>(s[i + k]);
      if ((next & 0xC0) != 0x80) throw std::runtime_error("not UTF-8");
      code = (code << 6) | (next & 0x3F);
    }
    char u[16];
    std::snprintf(u, sizeof u, "\\[u%04X]", code);
    out += u;
    i += static_cast<std::size_t>(more) + 1;
  }
  return out;
}

namespace {

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// A temporary file, removed with this object.
struct TempFile {
  std::string path;
  TempFile() {
    std::string name = (fs::temp_directory_path() / "mangen.XXXXXX").string();
    const int fd = mkstemp(name.data());
    if (fd < 0) throw std::runtime_error("cannot make a temporary file in " + name);
    close(fd);
    path = name;
  }
  ~TempFile() { std::remove(path.c_str()); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
};

// Runs `program` with `args` (shell words) on `input`; its standard output. Anything it says on
// stderr, or a failure, is an error: a page must render without warnings.
std::string run_tool(const std::string& program, const std::string& args,
                     const std::string& input) {
  TempFile in, err;
  write_file(in.path, input);
  const std::string command = shell_quote(program) + " " + args + " <" + shell_quote(in.path) +
                              " 2>" + shell_quote(err.path);
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("cannot run " + program);
  std::string out;
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  const int status = pclose(pipe);
  std::string said = read_file(err.path);
  while (!said.empty() && said.back() == '\n') said.pop_back();
  if (status != 0 || !said.empty())
    throw std::runtime_error(
        fs::path(program).filename().string() + ": " +
        (said.empty() ? "exit status " + std::to_string(WEXITSTATUS(status)) : said));
  return out;
}

// The page as lowdown reads it: the NAME section from line 1, then the sections. hard_breaks:
// each line of a paragraph ends one in the output too, as the text of --help keeps them.
std::string markdown(const Page& page, bool hard_breaks) {
  static const std::regex special(R"([\\`*_\[\]<>])");
  std::string out =
      "## NAME\n" +
      std::regex_replace(join(page.names(), ", ") + " - " + page.summary, special, "\\$&") + "\n\n";
  bool in_code = false;
  for (std::size_t i = page.sections.front().begin - 1; i < page.lines.size(); ++i) {
    const std::string& line = page.lines[i];
    if (is_fence(line)) in_code = !in_code;
    const std::string next = i + 1 < page.lines.size() ? page.lines[i + 1] : "";
    // Two trailing spaces: a Markdown line break (not before a definition, whose term it is).
    const bool breaks = hard_breaks && !in_code && !trim(line).empty() && !trim(next).empty() &&
                        !starts_with(next, ":") && !is_fence(line) && !starts_with(line, "#");
    out += line + (breaks ? "  \n" : "\n");
  }
  return out;
}

// Whether each code block of a page's Markdown, in order, is inside a list or a definition: a
// fence that is indented, or indented code (6 spaces or more, after a blank line). lowdown's roff
// does not tell: it sets them all at the left margin.
std::vector<bool> nested_code(const std::string& markdown) {
  std::vector<bool> nested;
  bool in_fence = false, in_indented = false, blank = true;
  for (const std::string& line : split_lines(markdown)) {
    const std::size_t indent = line.find_first_not_of(' ');
    if (is_fence(line)) {
      if (!in_fence) nested.push_back(indent > 0);
      in_fence = !in_fence;
    } else if (!in_fence && indent != std::string::npos) {
      if (indent >= 6 && blank && !in_indented) nested.push_back(true);
      in_indented = indent >= 6 && (blank || in_indented);
    }
    blank = indent == std::string::npos;
  }
  return nested;
}

// lowdown's roff made to read as bspg's pages always have (lowdown 1.0.0 and 2.0.2 alike).
// nested: nested_code() of the page.
std::string tidy_roff(const std::string& roff, const Page& page, const std::vector<bool>& nested) {
  // lowdown 1.0.0 sets a definition as a paragraph and an indented one, never sharing a line.
  static const std::vector<std::string> kDefinition = {".if n \\", ".sp -1v", ".if t \\",
                                                       ".sp -0.25v", ".IP \"\" 5n"};
  static const std::regex item(R"(\.IP "(\\\(bu|[0-9]+\.) *"( [0-9]+)?)");
  static const std::regex reference(R"((^|[^A-Za-z0-9_\\])([A-Za-z_][A-Za-z0-9_.+-]*)\(([1-9])\))");
  const std::vector<std::string> in = split_lines(roff);
  std::vector<std::string> out;
  std::string section;
  bool in_code = false;
  std::size_t blocks = 0;  // code blocks so far
  int code_insets = 0;     // the .RS the code block opened
  for (std::size_t i = 0; i < in.size(); ++i) {
    std::string s = in[i];
    if (s == ".SH" && i + 1 < in.size()) {
      section = in[i + 1];
    } else if (starts_with(s, ".SH ")) {
      section = s.substr(4);
      section.erase(std::remove(section.begin(), section.end(), '"'), section.end());
    } else if (starts_with(s, ".TH ")) {
      // Who made the page; no hyphens inside identifiers and options (as before lowdown).
      out.push_back(s);
      out.push_back(".\\\" " + page.name + "(" + std::to_string(page.section) +
                    ") from man/pages/" + fs::path(page.file).filename().string() +
                    "; edit that file, not this one.");
      out.push_back(".nh");
      out.push_back(".nr HY 0");  // (.EE turns hyphenation on again as HY says)
      // Set as one page (cR), one so long that no .sp -1 of lowdown's lists meets a page break,
      // where it would leave a blank line.
      out.push_back(".if \\n[cR] .pl 100000v");
      continue;
    } else if (s == ".LP" && i + 6 < in.size() &&
               std::equal(kDefinition.begin(), kDefinition.end(),
                          in.begin() + static_cast<long>(i) + 2)) {
      // A definition as man sets one: a short term shares the line with its text (1.0.0).
      out.push_back(".TP");
      s = in[i + 1];
      i += 6;
    } else if (starts_with(s, ".TP ")) {
      s = ".TP";  // (2.0.2: .TP 3) the usual indent, so that a 3-character term shares its line
    } else if (starts_with(s, ".IP")) {
      // Items' text 2 in after a bullet, 4 after a number, as before lowdown, whatever its version
      // (1.0.0 sets numbers 7 in, 2.0.2 everything 3 in).
      std::smatch m;
      if (std::regex_match(s, m, item))
        s = ".IP \"" + m[1].str() + "\" " + (m[1] == "\\(bu" ? "2" : "4");
    } else if ((s == ".LP" || s == ".PP") && i + 1 < in.size() && in[i + 1] == ".EX") {
      continue;  // (the code's own spacing below)
    } else if (s == ".EX") {
      if (blocks == nested.size())
        throw std::runtime_error("lowdown found more code blocks than mangen");
      // Code indented by 4 more than the text around it, in a list too, except in SYNOPSIS.
      if (nested[blocks]) {
        out.insert(out.end(), {".IP", ".RS", ".RS 4"});
        code_insets = 2;
      } else if (section != "SYNOPSIS") {
        out.insert(out.end(), {".PP", ".RS 4"});
        code_insets = 1;
      } else {
        out.push_back(".LP");
      }
      ++blocks;
      in_code = true;
    } else if (s == ".EE") {
      in_code = false;
      out.push_back(s);
      for (; code_insets > 0; --code_insets) out.push_back(".RE");
      continue;
    }
    if (!s.empty() && s[0] != '.' && s[0] != '\'') {
      // Code in bold (a terminal has no constant-width font), as are references such as
      // bsp_sync(3) outside code; the characters as roff_chars() says.
      for (const std::string code : {"\\f(CR", "\\fC"})
        for (std::size_t at; (at = s.find(code)) != std::string::npos;)
          s.replace(at, code.size(), "\\fB");
      if (!in_code) s = std::regex_replace(s, reference, "$1\\fB$2\\fP($3)");
      s = roff_chars(s);
    }
    out.push_back(s);
  }
  return join(out, "\n") + "\n";
}

}  // namespace

// The roff of a page. for_text: for plain_page, which sets it as text.
std::string roff_page(const Page& page, const Stamp& stamp, bool for_text) {
  // ASCII quotes and dashes ("--" is an option, not an en dash); "_" and "*" inside words (g*h,
  // BSPG_SUBJOB) and "^" (2^22) as written; a first paragraph with a colon is text, not metadata;
  // "## HEADING" is a section (.SH), the title line the metadata.
  const std::string args =
      "-s -Tman --out-no-smarty --parse-no-intraemph --parse-no-super --parse-no-metadata "
      "-M shiftheadinglevelby=-1 -M 'volume=bspg manual' -M " +
      shell_quote("title=" + page.name) + " -M section=" + std::to_string(page.section) + " -M " +
      shell_quote("date=" + stamp.date) + " -M " + shell_quote("source=bspg " + stamp.version);
  try {
    const std::string source = markdown(page, for_text);
    return tidy_roff(run_tool(BSPG_LOWDOWN, args, source), page, nested_code(source));
  } catch (const std::runtime_error& e) {
    throw SourceError(page.file, 0, e.what());
  }
}

// The page as plain text: as man sets it, but 4 in (not 7), on one page without its header and
// footer, and each line of a paragraph kept (250 columns: none is filled).
std::string plain_page(const Page& page) {
  std::string roff = roff_page(page, Stamp{}, true);
  // Bullets as "-" (ASCII has no bullet: groff would overstrike "+" and "o").
  for (std::size_t at; (at = roff.find(".IP \"\\(bu\"")) != std::string::npos;)
    roff.replace(at + 5, 4, "-");
  std::string text;
  try {
    text = run_tool(BSPG_GROFF, "-man -Tascii -P-c -rcR=1 -rIN=4n -rLL=250n -rHY=0", roff);
  } catch (const std::runtime_error& e) {
    throw SourceError(page.file, 0, e.what());
  }
  std::vector<std::string> lines;
  for (const std::string& line : split_lines(text)) {
    std::string plain;  // without -P-c's bold and underlining: X backspace X
    for (const char c : line) {
      if (c != '\b') {
        plain += c;
      } else if (!plain.empty()) {
        plain.pop_back();
      }
    }
    lines.push_back(plain.erase(plain.find_last_not_of(' ') + 1));
  }
  auto drop_blank_ends = [&lines] {
    while (!lines.empty() && lines.back().empty()) lines.pop_back();
    while (!lines.empty() && lines.front().empty()) lines.erase(lines.begin());
  };
  drop_blank_ends();
  if (lines.size() < 3) throw SourceError(page.file, 0, "groff made no text of it");
  lines = std::vector<std::string>(lines.begin() + 1, lines.end() - 1);  // header, footer
  drop_blank_ends();
  return join(lines, "\n") + "\n";
}

}  // namespace bspg::mangen
