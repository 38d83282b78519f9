// mangen.cpp - bspg's manual page generator (a build-time host tool).
//
// A page's source is man/pages/NAME.SECTION.md in the small markdown dialect that man/README.md
// describes. From it mangen writes the roff page that man(1) reads, link pages for the other names
// the page documents ("Also:"), the plain-text rendering that `bsprun --help` prints (as text or
// as a C++ source defining it), the table of pages that docs/manual-pages.md holds, and the checks
// that keep the pages, that table and the public headers in step. Every complaint about a source
// names its file and line and ends mangen with exit status 1; a wrong command line ends it with 2.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace fs = std::filesystem;

namespace {

// ---- Errors ----------------------------------------------------------------------------------

// A defect of an input file, reported as "FILE:LINE: what" (LINE 0: the file as a whole).
struct SourceError : std::runtime_error {
  SourceError(const std::string& file, int line, const std::string& what)
      : std::runtime_error(file + (line > 0 ? ":" + std::to_string(line) : std::string()) + ": " +
                           what) {}
};

// A wrong command line.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// ---- The page model --------------------------------------------------------------------------

struct Line {
  std::string text;
  int number = 0;
};

struct Block;

// One item of a list: a bullet, a numbered item or a definition (term and description).
struct Item {
  std::string marker;  // "1." for numbered items; the term's source text for definitions
  int line = 0;
  bool blank_before = false;
  std::vector<Block> body;
};

struct Block {
  enum Kind { kParagraph, kCode, kBullets, kNumbered, kDefinitions } kind = kParagraph;
  int line = 0;
  bool blank_before = false;     // a blank line separated it from what came before
  std::vector<Line> lines;       // paragraph text or code, verbatim
  std::vector<Item> items;       // lists
};

struct Section {
  std::string heading;
  int line = 0;
  std::vector<Block> blocks;
};

struct Page {
  std::string file;  // as given on the command line, for messages
  std::string name;
  int section = 0;
  std::string summary;
  std::vector<std::string> also;
  std::vector<Section> sections;
  const Section* find(const std::string& heading) const {
    for (const Section& s : sections)
      if (s.heading == heading) return &s;
    return nullptr;
  }
};

using Defines = std::map<std::string, std::string>;

// ---- Small helpers ---------------------------------------------------------------------------

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(' ');
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(' ') - first + 1);
}

std::string rtrim(const std::string& s) {
  const auto last = s.find_last_not_of(' ');
  return last == std::string::npos ? "" : s.substr(0, last + 1);
}

std::size_t leading_spaces(const std::string& s) {
  std::size_t n = 0;
  while (n < s.size() && s[n] == ' ') ++n;
  return n;
}

bool is_blank(const std::string& s) { return s.find_first_not_of(' ') == std::string::npos; }

bool is_word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw SourceError(path, 0, "cannot be read");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_file(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) throw std::runtime_error(path.string() + ": cannot be written");
}

std::string join(const std::vector<std::string>& parts, const std::string& separator) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? separator : "") + parts[i];
  return out;
}

// One UTF-8 character at s[i] as a code point; advances i. Throws on a malformed sequence.
unsigned next_code_point(const std::string& s, std::size_t& i) {
  const unsigned char c = static_cast<unsigned char>(s[i++]);
  if (c < 0x80) return c;
  int more = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : c >= 0xC0 ? 1 : -1;
  if (more < 0 || c >= 0xF8) throw std::runtime_error("malformed UTF-8");
  unsigned cp = c & (0x3F >> more);
  for (; more > 0; --more) {
    if (i >= s.size() || (static_cast<unsigned char>(s[i]) & 0xC0) != 0x80)
      throw std::runtime_error("malformed UTF-8");
    cp = (cp << 6) | (static_cast<unsigned char>(s[i++]) & 0x3F);
  }
  return cp;
}

// ---- Reading a page --------------------------------------------------------------------------

// NAME and SECTION from ".../NAME.SECTION.md".
std::pair<std::string, int> name_from_path(const std::string& path) {
  const std::string base = fs::path(path).filename().string();
  const std::size_t md = base.size() >= 3 ? base.size() - 3 : std::string::npos;
  if (md == std::string::npos || base.compare(md, 3, ".md") != 0 || md < 3 ||
      base[md - 2] != '.' || base[md - 1] < '1' || base[md - 1] > '9')
    throw SourceError(path, 0, "a page's file is named NAME.SECTION.md (e.g. bsp_put.3.md)");
  return {base.substr(0, md - 2), base[md - 1] - '0'};
}

bool is_name(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(is_word_char(c) || c == '-' || c == '.' || c == '+')) return false;
  return true;
}

// Replaces @NAME@ by its value. Without defines (the table and the checks) the text stays as it
// is; with them, an @NAME@ that is not defined is an error.
std::string substitute(const std::string& text, const Defines* defines, const std::string& file,
                       int line) {
  if (defines == nullptr) return text;
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    if (text[i] == '@' && i + 1 < text.size() && std::isupper(static_cast<unsigned char>(text[i + 1]))) {
      std::size_t j = i + 1;
      while (j < text.size() && (std::isupper(static_cast<unsigned char>(text[j])) ||
                                 std::isdigit(static_cast<unsigned char>(text[j])) || text[j] == '_'))
        ++j;
      if (j < text.size() && text[j] == '@') {
        const std::string key = text.substr(i + 1, j - i - 1);
        const auto value = defines->find(key);
        if (value == defines->end()) {
          std::vector<std::string> known;
          for (const auto& d : *defines) known.push_back("@" + d.first + "@");
          throw SourceError(file, line,
                            "unknown placeholder @" + key + "@ (known: " +
                                (known.empty() ? std::string("none") : join(known, ", ")) + ")");
        }
        out += value->second;
        i = j + 1;
        continue;
      }
    }
    out += text[i++];
  }
  return out;
}

class Parser {
 public:
  explicit Parser(std::string file) : file_(std::move(file)) {}

  std::vector<Block> blocks(const std::vector<Line>& lines) const {
    std::vector<Block> out;
    std::size_t i = 0;
    bool blank = false;
    while (i < lines.size()) {
      const Line& line = lines[i];
      if (is_blank(line.text)) {
        blank = true;
        ++i;
        continue;
      }
      Block block;
      block.line = line.number;
      block.blank_before = blank;
      blank = false;
      if (is_fence(line.text)) {
        block.kind = Block::kCode;
        i = code(lines, i, block);
      } else if (is_bullet(line.text)) {
        block.kind = Block::kBullets;
        i = list(lines, i, block);
      } else if (numbered_marker(line.text) > 0) {
        block.kind = Block::kNumbered;
        i = list(lines, i, block);
      } else if (is_term(lines, i)) {
        block.kind = Block::kDefinitions;
        i = definitions(lines, i, block);
      } else {
        check_paragraph_start(line);
        block.kind = Block::kParagraph;
        i = paragraph(lines, i, block);
      }
      out.push_back(std::move(block));
    }
    return out;
  }

 private:
  static bool is_fence(const std::string& s) { return starts_with(s, "```"); }
  static bool is_bullet(const std::string& s) { return starts_with(s, "- ") && !is_blank(s.substr(2)); }
  static bool is_description(const std::string& s) { return starts_with(s, ":   "); }
  // Width of "N. " at the start of s (one or two digits), or 0.
  static std::size_t numbered_marker(const std::string& s) {
    std::size_t n = 0;
    while (n < s.size() && n < 3 && std::isdigit(static_cast<unsigned char>(s[n]))) ++n;
    if (n == 0 || n > 2 || s.size() < n + 3 || s[n] != '.' || s[n + 1] != ' ' || s[n + 2] == ' ')
      return 0;
    return n + 2;
  }
  static bool is_term(const std::vector<Line>& lines, std::size_t i) {
    return i + 1 < lines.size() && leading_spaces(lines[i].text) == 0 && !is_blank(lines[i].text) &&
           is_description(lines[i + 1].text);
  }
  // A line that starts a block of its own, ending a paragraph or a list.
  static bool starts_block(const std::vector<Line>& lines, std::size_t i) {
    const std::string& s = lines[i].text;
    return is_fence(s) || is_bullet(s) || numbered_marker(s) > 0 || is_term(lines, i);
  }

  void check_paragraph_start(const Line& line) const {
    const std::string& s = line.text;
    if (is_description(s))
      throw SourceError(file_, line.number,
                        "a definition (':   ...') needs its term on the line above it");
    if (s[0] == ' ')
      throw SourceError(file_, line.number,
                        "unexpected indentation: code goes between ``` lines, a list item "
                        "continues on lines indented by 2 spaces, a definition by 4");
    if (s[0] == '#')
      throw SourceError(file_, line.number,
                        "a heading is a line '## HEADING' outside lists and code (the page's "
                        "title is line 1)");
  }

  std::size_t code(const std::vector<Line>& lines, std::size_t i, Block& block) const {
    const int opened = lines[i].number;
    for (++i; i < lines.size(); ++i) {
      if (rtrim(lines[i].text) == "```") return i + 1;
      if (is_fence(lines[i].text))
        throw SourceError(file_, lines[i].number,
                          "a code block ends with a line of just ``` (this one carries more)");
      block.lines.push_back(lines[i]);
    }
    throw SourceError(file_, opened, "code block not closed: no line ``` after it");
  }

  std::size_t paragraph(const std::vector<Line>& lines, std::size_t i, Block& block) const {
    for (; i < lines.size(); ++i) {
      const Line& line = lines[i];
      if (is_blank(line.text)) break;
      if (!block.lines.empty() && starts_block(lines, i)) break;
      if (is_description(line.text))
        throw SourceError(file_, line.number,
                          "a definition (':   ...') needs its term alone on the line above it, "
                          "after a blank line or another definition");
      if (!block.lines.empty() && starts_with(trim(line.text), "## "))
        throw SourceError(file_, line.number,
                          "a heading '## HEADING' must start at the beginning of its line");
      block.lines.push_back({trim(line.text), line.number});
    }
    return i;
  }

  // The lines of one item after its first: continuation lines with `indent` spaces (removed),
  // blank lines followed by more of them. Stops before anything else.
  static std::size_t continuation(const std::vector<Line>& lines, std::size_t i, std::size_t indent,
                                  std::vector<Line>& body) {
    while (i < lines.size()) {
      if (is_blank(lines[i].text)) {
        std::size_t next = i;
        while (next < lines.size() && is_blank(lines[next].text)) ++next;
        if (next == lines.size() || leading_spaces(lines[next].text) < indent) return i;
        for (; i < next; ++i) body.push_back({"", lines[i].number});
        continue;
      }
      if (leading_spaces(lines[i].text) < indent) return i;
      body.push_back({lines[i].text.substr(indent), lines[i].number});
      ++i;
    }
    return i;
  }

  // Bullets ("- ", continued with 2 spaces) or numbered items ("1. ", continued with 3).
  std::size_t list(const std::vector<Line>& lines, std::size_t i, Block& block) const {
    const bool bullets = block.kind == Block::kBullets;
    bool blank = false;
    while (i < lines.size()) {
      const std::string& s = lines[i].text;
      const std::size_t width = bullets ? (is_bullet(s) ? 2 : 0) : numbered_marker(s);
      if (width == 0) break;
      Item item;
      item.line = lines[i].number;
      item.blank_before = blank;
      item.marker = bullets ? "-" : s.substr(0, width - 1);
      std::vector<Line> body{{trim(s.substr(width)), lines[i].number}};
      i = continuation(lines, i + 1, width, body);
      item.body = blocks(body);
      block.items.push_back(std::move(item));
      // A blank line between items keeps the list going; anything else ends it.
      blank = false;
      std::size_t next = i;
      while (next < lines.size() && is_blank(lines[next].text)) ++next;
      if (next > i && next < lines.size() &&
          (bullets ? is_bullet(lines[next].text) : numbered_marker(lines[next].text) > 0)) {
        blank = true;
        i = next;
      }
    }
    return i;
  }

  // term / ":   description" pairs, the description continued with 4 spaces.
  std::size_t definitions(const std::vector<Line>& lines, std::size_t i, Block& block) const {
    bool blank = false;
    while (i < lines.size() && is_term(lines, i)) {
      Item item;
      item.line = lines[i].number;
      item.blank_before = blank;
      item.marker = rtrim(lines[i].text);
      if (starts_with(item.marker, "- ") || is_fence(item.marker) || item.marker[0] == '#')
        throw SourceError(file_, lines[i].number, "a definition's term is one line of text");
      std::vector<Line> body{{trim(lines[i + 1].text.substr(4)), lines[i + 1].number}};
      if (is_blank(body[0].text))
        throw SourceError(file_, lines[i + 1].number, "a definition (':   ...') with no text");
      i = continuation(lines, i + 2, 4, body);
      if (i < lines.size() && is_description(lines[i].text))
        throw SourceError(file_, lines[i].number,
                          "a second definition of one term: continue the first on lines "
                          "indented by 4 spaces");
      if (i < lines.size() && !is_blank(lines[i].text) && leading_spaces(lines[i].text) > 0)
        throw SourceError(file_, lines[i].number,
                          "a definition continues on lines indented by exactly 4 spaces");
      item.body = blocks(body);
      block.items.push_back(std::move(item));
      blank = false;
      std::size_t next = i;
      while (next < lines.size() && is_blank(lines[next].text)) ++next;
      if (next > i && is_term(lines, next)) {
        blank = true;
        i = next;
      }
    }
    return i;
  }

  std::string file_;
};

bool valid_heading(const std::string& h) {
  if (h.empty() || !std::isupper(static_cast<unsigned char>(h[0]))) return false;
  for (char c : h)
    if (!(std::isupper(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) ||
          c == ' ' || c == '-' || c == '/'))
      return false;
  return h.back() != ' ' && h.find("  ") == std::string::npos;
}

// Reads and checks one page. defines: see substitute().
Page read_page(const std::string& path, const Defines* defines) {
  Page page;
  page.file = path;
  const auto [file_name, file_section] = name_from_path(path);
  const std::string text = read_file(path);
  std::vector<Line> lines;
  {
    std::size_t start = 0;
    int number = 1;
    while (start < text.size()) {
      std::size_t end = text.find('\n', start);
      if (end == std::string::npos) end = text.size();
      std::string s = text.substr(start, end - start);
      if (!s.empty() && s.back() == '\r') s.pop_back();
      lines.push_back({rtrim(s), number++});
      start = end + 1;
    }
  }
  if (lines.empty()) throw SourceError(path, 1, "empty page: line 1 is '# NAME(SECTION) - summary'");

  // Tabs only in code blocks; bytes below 32 nowhere; placeholders replaced.
  {
    bool in_code = false;
    for (Line& line : lines) {
      if (starts_with(line.text, "```") || starts_with(trim(line.text), "```"))
        in_code = !in_code;
      for (char c : line.text) {
        if (c == '\t' && !in_code)
          throw SourceError(path, line.number, "a tab outside code: indent with spaces");
        if (static_cast<unsigned char>(c) < 32 && c != '\t')
          throw SourceError(path, line.number, "a control character");
      }
      try {
        for (std::size_t at = 0; at < line.text.size();) next_code_point(line.text, at);
      } catch (const std::runtime_error&) {
        throw SourceError(path, line.number, "not UTF-8");
      }
      line.text = substitute(line.text, defines, path, line.number);
    }
  }

  // Line 1: "# NAME(SECTION) - summary".
  {
    const std::string& s = lines[0].text;
    const std::size_t open = s.find('(');
    const std::size_t close = s.find(')', open == std::string::npos ? 0 : open);
    const std::size_t dash = s.find(" - ", close == std::string::npos ? 0 : close);
    if (!starts_with(s, "# ") || open == std::string::npos || close != open + 2 ||
        dash != close + 1 || trim(s.substr(dash + 3)).empty())
      throw SourceError(path, 1,
                        "line 1 must be '# NAME(SECTION) - one-line summary', e.g. '# bsp_put(3) - "
                        "copy bytes ...'");
    page.name = s.substr(2, open - 2);
    page.section = s[open + 1] - '0';
    page.summary = trim(s.substr(dash + 3));
    if (!is_name(page.name)) throw SourceError(path, 1, "'" + page.name + "' is not a page name");
    if (page.name != file_name || page.section != file_section)
      throw SourceError(path, 1,
                        "the title names " + page.name + "(" + std::string(1, s[open + 1]) +
                            ") but the file is " + file_name + "." + std::to_string(file_section) +
                            ".md");
  }
  std::size_t i = 1;
  if (i < lines.size() && starts_with(lines[i].text, "Also:")) {
    std::string rest = lines[i].text.substr(5);
    std::stringstream names(rest);
    std::string name;
    while (std::getline(names, name, ',')) {
      name = trim(name);
      if (!is_name(name))
        throw SourceError(path, lines[i].number,
                          "'Also:' lists names separated by commas, e.g. 'Also: bsp_hpput'; '" +
                              name + "' is not a name");
      if (name == page.name ||
          std::find(page.also.begin(), page.also.end(), name) != page.also.end())
        throw SourceError(path, lines[i].number, "'" + name + "' is named twice");
      page.also.push_back(name);
    }
    ++i;
  }

  // Sections.
  Parser parser(path);
  std::vector<Line> body;
  Section* current = nullptr;
  auto finish = [&]() {
    if (current == nullptr) return;
    current->blocks = parser.blocks(body);
    if (current->blocks.empty())
      throw SourceError(path, current->line, "section " + current->heading + " has no text");
    body.clear();
  };
  bool in_code = false;
  for (; i < lines.size(); ++i) {
    const Line& line = lines[i];
    if (starts_with(trim(line.text), "```")) in_code = !in_code;
    if (!in_code && starts_with(line.text, "## ")) {
      finish();
      const std::string heading = line.text.substr(3);
      if (!valid_heading(heading))
        throw SourceError(path, line.number,
                          "a heading is upper case: '## " + heading + "' (e.g. '## SEE ALSO')");
      if (heading == "NAME")
        throw SourceError(path, line.number, "no '## NAME': the NAME section comes from line 1");
      for (const Section& s : page.sections)
        if (s.heading == heading)
          throw SourceError(path, line.number,
                            "section " + heading + " again (first at line " + std::to_string(s.line) + ")");
      page.sections.push_back({heading, line.number, {}});
      current = &page.sections.back();
      continue;
    }
    if (!in_code && starts_with(line.text, "#"))
      throw SourceError(path, line.number,
                        "headings are '## HEADING' lines (one '#' only on line 1)");
    if (current == nullptr) {
      if (is_blank(line.text)) continue;
      throw SourceError(path, line.number,
                        starts_with(line.text, "Also:")
                            ? "'Also:' belongs on line 2, right after the title"
                            : "text before the first section: start one with '## HEADING'");
    }
    body.push_back(line);
  }
  finish();
  if (page.sections.empty())
    throw SourceError(path, 0, "no sections: add at least '## DESCRIPTION'");
  return page;
}

// The pages in `paths`; a directory stands for the *.md files in it.
std::vector<std::string> expand_sources(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (const std::string& p : paths) {
    if (fs::is_directory(p)) {
      std::vector<std::string> found;
      for (const auto& entry : fs::directory_iterator(p))
        if (entry.is_regular_file() && entry.path().extension() == ".md")
          found.push_back(entry.path().string());
      std::sort(found.begin(), found.end());
      out.insert(out.end(), found.begin(), found.end());
    } else {
      out.push_back(p);
    }
  }
  return out;
}

// Every page, with no name documented twice. Sorted by section, then name.
std::vector<Page> read_pages(const std::vector<std::string>& paths, const Defines* defines) {
  std::vector<Page> pages;
  std::map<std::string, std::string> owner;  // "name(section)" -> the file that documents it
  for (const std::string& path : expand_sources(paths)) {
    Page page = read_page(path, defines);
    std::vector<std::string> names{page.name};
    names.insert(names.end(), page.also.begin(), page.also.end());
    for (const std::string& name : names) {
      const std::string key = name + "(" + std::to_string(page.section) + ")";
      const auto [it, fresh] = owner.emplace(key, path);
      if (!fresh)
        throw SourceError(path, name == page.name ? 1 : 2,
                          key + " is documented in " + it->second + " already");
    }
    pages.push_back(std::move(page));
  }
  std::sort(pages.begin(), pages.end(), [](const Page& a, const Page& b) {
    return a.section != b.section ? a.section < b.section : a.name < b.name;
  });
  return pages;
}

// ---- Inline markup ---------------------------------------------------------------------------

// What a paragraph's text is made of once its markup is resolved.
struct Piece {
  enum Kind { kText, kCode, kBoldOn, kBoldOff, kItalicOn, kItalicOff, kBreak } kind;
  std::string text;
};

class Inline {
 public:
  // lines: the paragraph's (or term's) source lines, joined by kBreak pieces.
  static std::vector<Piece> parse(const std::vector<std::string>& lines) {
    std::string s;
    for (std::size_t i = 0; i < lines.size(); ++i) s += (i ? "\n" : "") + lines[i];
    Inline in(s);
    in.run();
    return in.out_;
  }

 private:
  explicit Inline(std::string s) : s_(std::move(s)) {}

  char at(std::size_t i) const { return i < s_.size() ? s_[i] : '\0'; }
  bool space_at(std::size_t i) const { return i >= s_.size() || s_[i] == ' ' || s_[i] == '\n'; }
  static bool escapable(char c) { return c == '\\' || c == '`' || c == '*'; }

  // Position of the next character that is not inside a code span or escaped, from i.
  std::size_t skip(std::size_t i) const {
    if (s_[i] == '\\' && escapable(at(i + 1))) return i + 2;
    if (s_[i] == '`') {
      const std::size_t close = s_.find('`', i + 1);
      if (close != std::string::npos) return close + 1;
    }
    return i + 1;
  }
  bool bold_closes_at(std::size_t i) const {
    return s_.compare(i, 2, "**") == 0 && i > 0 && !space_at(i - 1);
  }
  bool italic_closes_at(std::size_t i) const {
    return s_[i] == '*' && at(i + 1) != '*' && (i == 0 || s_[i - 1] != '*') && i > 0 &&
           !space_at(i - 1) && !is_word_char(at(i + 1));
  }
  bool closer_follows(std::size_t from, bool bold) const {
    for (std::size_t i = from; i < s_.size(); i = skip(i))
      if (bold ? bold_closes_at(i) : italic_closes_at(i)) return true;
    return false;
  }

  void text(char c) {
    if (c == '\n') {
      out_.push_back({Piece::kBreak, ""});
      return;
    }
    if (out_.empty() || out_.back().kind != Piece::kText) out_.push_back({Piece::kText, ""});
    out_.back().text += c;
  }

  void run() {
    bool bold = false, italic = false;
    std::size_t i = 0;
    while (i < s_.size()) {
      const char c = s_[i];
      if (c == '\\' && escapable(at(i + 1))) {
        text(s_[i + 1]);
        i += 2;
      } else if (c == '`' && s_.find('`', i + 1) != std::string::npos) {
        const std::size_t close = s_.find('`', i + 1);
        std::string code = s_.substr(i + 1, close - i - 1);
        // A code span over a line break: the break stays a break.
        std::size_t start = 0;
        while (true) {
          const std::size_t nl = code.find('\n', start);
          out_.push_back({Piece::kCode, code.substr(start, nl - start)});
          if (nl == std::string::npos) break;
          out_.push_back({Piece::kBreak, ""});
          start = nl + 1;
        }
        i = close + 1;
      } else if (c == '*' && at(i + 1) == '*') {
        if (bold && bold_closes_at(i)) {
          out_.push_back({Piece::kBoldOff, ""});
          bold = false;
          i += 2;
        } else if (!bold && !space_at(i + 2) && closer_follows(i + 3, true)) {
          out_.push_back({Piece::kBoldOn, ""});
          bold = true;
          i += 2;
        } else {
          text('*');
          text('*');
          i += 2;
        }
      } else if (c == '*') {
        if (italic && italic_closes_at(i)) {
          out_.push_back({Piece::kItalicOff, ""});
          italic = false;
        } else if (!italic && (i == 0 || !is_word_char(s_[i - 1])) && !space_at(i + 1) &&
                   closer_follows(i + 2, false)) {
          out_.push_back({Piece::kItalicOn, ""});
          italic = true;
        } else {
          text('*');
        }
        ++i;
      } else {
        text(c);
        ++i;
      }
    }
    if (italic) out_.push_back({Piece::kItalicOff, ""});
    if (bold) out_.push_back({Piece::kBoldOff, ""});
  }

  std::string s_;
  std::vector<Piece> out_;
};

// ---- roff ------------------------------------------------------------------------------------

// Text for a roff text line or macro argument: backslashes, minus signs, non-ASCII characters.
std::string roff_escape(const std::string& s) {
  std::string out;
  std::size_t i = 0;
  while (i < s.size()) {
    const unsigned cp = next_code_point(s, i);
    if (cp == '\\') {
      out += "\\e";
    } else if (cp == '-') {
      out += "\\-";
    } else if (cp >= 0x80) {
      char buf[16];
      std::snprintf(buf, sizeof buf, "\\[u%04X]", cp);
      out += buf;
    } else {
      out += static_cast<char>(cp);
    }
  }
  return out;
}

// A text line must not start with a control character ('.' or '\'').
std::string roff_line(const std::string& escaped) {
  if (!escaped.empty() && (escaped[0] == '.' || escaped[0] == '\'')) return "\\&" + escaped;
  return escaped;
}

// Plain text with references such as bsp_sync(3) set in bold.
std::string roff_text_with_references(const std::string& s) {
  std::string out;
  std::size_t i = 0;
  while (i < s.size()) {
    const bool word_start = (std::isalpha(static_cast<unsigned char>(s[i])) || s[i] == '_') &&
                            (i == 0 || !(is_word_char(s[i - 1]) || s[i - 1] == '-' || s[i - 1] == '.'));
    if (word_start) {
      std::size_t j = i;
      while (j < s.size() && (is_word_char(s[j]) || s[j] == '-' || s[j] == '.')) ++j;
      if (j + 2 < s.size() && s[j] == '(' && s[j + 1] >= '1' && s[j + 1] <= '9' && s[j + 2] == ')') {
        out += "\\fB" + roff_escape(s.substr(i, j - i)) + "\\fR";
        i = j;
        continue;
      }
      out += roff_escape(s.substr(i, j - i));
      i = j;
      continue;
    }
    std::size_t j = i + 1;
    while (j < s.size() && !(std::isalpha(static_cast<unsigned char>(s[j])) || s[j] == '_')) ++j;
    out += roff_escape(s.substr(i, j - i));
    i = j;
  }
  return out;
}

// The roff lines of a paragraph or term.
std::vector<std::string> roff_inline(const std::vector<std::string>& source) {
  std::vector<std::string> lines(1);
  bool bold = false, italic = false;
  std::string font = "R";
  auto set_font = [&](const std::string& want) {
    if (want == font) return;
    lines.back() += want.size() == 1 ? "\\f" + want : "\\f(" + want;
    font = want;
  };
  auto wanted = [&](bool code) {
    const bool b = bold || code;
    return b && italic ? std::string("BI") : b ? std::string("B") : italic ? std::string("I") : std::string("R");
  };
  for (const Piece& p : Inline::parse(source)) {
    switch (p.kind) {
      case Piece::kText:
        set_font(wanted(false));
        lines.back() += font == "R" ? roff_text_with_references(p.text) : roff_escape(p.text);
        break;
      case Piece::kCode:
        set_font(wanted(true));
        lines.back() += roff_escape(p.text);
        break;
      case Piece::kBoldOn: bold = true; break;
      case Piece::kBoldOff: bold = false; break;
      case Piece::kItalicOn: italic = true; break;
      case Piece::kItalicOff: italic = false; break;
      case Piece::kBreak: lines.emplace_back(); break;
    }
  }
  set_font("R");
  for (std::string& line : lines) {
    line = trim(line);
    line = roff_line(line);
  }
  // A line that is empty once the markup is gone (a lone `` or **) would end the paragraph.
  lines.erase(std::remove(lines.begin(), lines.end(), std::string()), lines.end());
  return lines;
}

std::vector<std::string> texts(const std::vector<Line>& lines) {
  std::vector<std::string> out;
  for (const Line& l : lines) out.push_back(l.text);
  return out;
}

class RoffWriter {
 public:
  explicit RoffWriter(std::string& out) : out_(out) {}

  // top: the blocks of a section (not of a list item).
  void blocks(const std::vector<Block>& blocks, const std::string& heading, bool top) {
    bool after_heading = top;
    for (const Block& b : blocks) {
      block(b, heading, top, false, after_heading);
      after_heading = false;
    }
  }

 private:
  void emit(const std::string& line) { out_ += line + "\n"; }

  void code_lines(const Block& b) {
    emit(".nf");
    for (const Line& line : b.lines) {
      std::string expanded;
      for (char c : line.text) {
        if (c == '\t') {
          expanded.append(8 - expanded.size() % 8, ' ');
        } else {
          expanded += c;
        }
      }
      emit(expanded.empty() ? "\\&" : roff_line(roff_escape(expanded)));
    }
    emit(".fi");
  }

  // first: the block opens a list item, right after its .IP/.TP line. after_heading: it opens
  // a section, which .SH has spaced already.
  void block(const Block& b, const std::string& heading, bool top, bool first,
             bool after_heading = false) {
    switch (b.kind) {
      case Block::kParagraph:
        if (!first && !after_heading) emit(".PP");
        for (const std::string& line : roff_inline(texts(b.lines))) emit(line);
        break;
      case Block::kCode:
        if (first) {
          code_lines(b);
        } else if (top && heading == "SYNOPSIS") {
          if (!after_heading) emit(".PP");
          code_lines(b);
        } else {
          if (!after_heading) emit(".PP");
          emit(".RS 4");
          code_lines(b);
          emit(".RE");
        }
        break;
      case Block::kBullets:
      case Block::kNumbered:
      case Block::kDefinitions:
        for (const Item& item : b.items) list_item(b.kind, item, heading);
        break;
    }
  }

  void list_item(Block::Kind kind, const Item& item, const std::string& heading) {
    if (kind == Block::kBullets) {
      emit(".IP \\(bu 2");
    } else if (kind == Block::kNumbered) {
      emit(".IP " + item.marker + " 4");
    } else {
      emit(".TP");
      const std::vector<std::string> term = roff_inline({item.marker});
      emit(term.empty() ? "\\&" : term.front());
    }
    std::size_t rest = 0;
    if (!item.body.empty() && item.body.front().kind != Block::kBullets &&
        item.body.front().kind != Block::kNumbered && item.body.front().kind != Block::kDefinitions) {
      block(item.body.front(), heading, false, true);
      rest = 1;
    }
    if (rest < item.body.size()) {
      emit(".RS");
      for (std::size_t i = rest; i < item.body.size(); ++i)
        block(item.body[i], heading, false, false);
      emit(".RE");
    }
  }

  std::string& out_;
};

struct Stamp {
  std::string date;
  std::string version;
};

std::string roff_page(const Page& page, const Stamp& stamp) {
  std::string out;
  out += ".\\\" " + page.name + "(" + std::to_string(page.section) +
         ") - generated by mangen from man/pages/" + page.name + "." + std::to_string(page.section) +
         ".md; edit that file, not this one.\n";
  auto quoted = [](const std::string& s) {
    std::string e = roff_escape(s);
    std::string q;
    for (char c : e) q += c == '"' ? std::string("\\(dq") : std::string(1, c);
    return "\"" + q + "\"";
  };
  out += ".TH " + quoted(page.name) + " " + std::to_string(page.section) + " " + quoted(stamp.date) +
         " " + quoted("bspg " + stamp.version) + " " + quoted("bspg manual") + "\n";
  out += ".nh\n";  // no hyphens inside identifiers and options
  out += ".SH NAME\n";
  std::vector<std::string> names{page.name};
  names.insert(names.end(), page.also.begin(), page.also.end());
  out += roff_line(roff_escape(join(names, ", ")) + " \\- " + roff_escape(page.summary)) + "\n";
  RoffWriter writer(out);
  for (const Section& section : page.sections) {
    out += section.heading.find(' ') == std::string::npos ? ".SH " + section.heading + "\n"
                                                          : ".SH \"" + section.heading + "\"\n";
    writer.blocks(section.blocks, section.heading, true);
  }
  return out;
}

// ---- Plain text ------------------------------------------------------------------------------

std::string plain_inline_line(const std::vector<Piece>& pieces, std::size_t& i) {
  std::string line;
  for (; i < pieces.size() && pieces[i].kind != Piece::kBreak; ++i)
    if (pieces[i].kind == Piece::kText || pieces[i].kind == Piece::kCode) line += pieces[i].text;
  return trim(line);
}

std::vector<std::string> plain_inline(const std::vector<std::string>& source) {
  const std::vector<Piece> pieces = Inline::parse(source);
  std::vector<std::string> lines;
  std::size_t i = 0;
  while (true) {
    lines.push_back(plain_inline_line(pieces, i));
    if (i >= pieces.size()) break;
    ++i;  // the break
  }
  return lines;
}

// Headings at column 0; text indented by 4; a definition's term by 4 and its text by 8 (on the
// term's line when the term is at most 3 characters, as man(1) sets a short tag); list items'
// markers 2 further in than their surroundings.
class PlainWriter {
 public:
  explicit PlainWriter(std::string& out) : out_(out) {}

  void blocks(const std::vector<Block>& blocks, std::size_t indent, const std::string& heading,
              bool top) {
    bool first = true;
    for (const Block& b : blocks) {
      if (!first && b.blank_before) out_ += "\n";
      block(b, indent, heading, top);
      first = false;
    }
  }

 private:
  void line(std::size_t indent, const std::string& text) {
    out_ += text.empty() ? "\n" : std::string(indent, ' ') + text + "\n";
  }

  void block(const Block& b, std::size_t indent, const std::string& heading, bool top) {
    switch (b.kind) {
      case Block::kParagraph:
        for (const std::string& text : plain_inline(texts(b.lines))) line(indent, text);
        break;
      case Block::kCode: {
        const std::size_t at = top && heading == "SYNOPSIS" ? indent : indent + 4;
        for (const Line& l : b.lines) line(at, l.text);
        break;
      }
      case Block::kBullets:
      case Block::kNumbered:
      case Block::kDefinitions: {
        bool first = true;
        for (const Item& item : b.items) {
          if (!first && item.blank_before) out_ += "\n";
          first = false;
          list_item(b.kind, item, indent, heading);
        }
        break;
      }
    }
  }

  void list_item(Block::Kind kind, const Item& item, std::size_t indent, const std::string& heading) {
    std::size_t text_indent;
    std::string lead;  // what goes before the first line of the body, from `indent` on
    if (kind == Block::kDefinitions) {
      text_indent = indent + 4;
      const std::vector<std::string> term = plain_inline({item.marker});
      const std::string t = term.empty() ? "" : term.front();
      if (t.size() <= 3) {
        lead = t + std::string(4 - t.size(), ' ');
      } else {
        line(indent, t);
      }
    } else {
      const std::string marker = kind == Block::kBullets ? "- " : item.marker + " ";
      lead = "  " + marker;
      text_indent = indent + lead.size();
    }
    if (lead.empty()) {
      blocks(item.body, text_indent, heading, false);
      return;
    }
    // The first line of the body goes after the marker or short term.
    std::string body;
    PlainWriter inner(body);
    inner.blocks(item.body, text_indent, heading, false);
    if (body.size() >= text_indent && body.compare(0, text_indent, std::string(text_indent, ' ')) == 0) {
      out_ += std::string(indent, ' ') + lead + body.substr(text_indent);
    } else {
      line(indent, rtrim(lead));
      out_ += body;
    }
  }

  std::string& out_;
};

std::string plain_page(const Page& page) {
  std::string out = "NAME\n";
  std::vector<std::string> names{page.name};
  names.insert(names.end(), page.also.begin(), page.also.end());
  out += "    " + join(names, ", ") + " - " + page.summary + "\n";
  PlainWriter writer(out);
  for (const Section& section : page.sections) {
    out += "\n" + section.heading + "\n";
    writer.blocks(section.blocks, 4, section.heading, true);
  }
  return out;
}

// A C++ source that defines `symbol` (e.g. bspg::launcher::kBsprunManual) as the text.
std::string cpp_source(const std::string& text, const std::string& symbol, const std::string& from) {
  const std::size_t colons = symbol.rfind("::");
  const std::string ns = colons == std::string::npos ? "" : symbol.substr(0, colons);
  const std::string name = colons == std::string::npos ? symbol : symbol.substr(colons + 2);
  std::string out = "// Generated by mangen from " + from + ": edit that file, not this one.\n";
  if (!ns.empty()) out += "namespace " + ns + " {\n";
  out += "extern const char " + name + "[];\n";
  out += "const char " + name + "[] =\n";
  std::size_t start = 0;
  if (text.empty()) out += "    \"\"";
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    end = end == std::string::npos ? text.size() : end + 1;
    out += "    \"";
    for (std::size_t i = start; i < end; ++i) {
      const char c = text[i];
      if (c == '\n') {
        out += "\\n";
      } else if (c == '"' || c == '\\') {
        out += '\\';
        out += c;
      } else if (c == '?') {
        out += "\\?";  // no trigraphs
      } else if (static_cast<unsigned char>(c) >= 0x80) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\%03o", static_cast<unsigned char>(c));
        out += buf;
      } else {
        out += c;
      }
    }
    out += "\"";
    start = end;
    if (start < text.size()) out += "\n";
  }
  out += ";\n";
  if (!ns.empty()) out += "}  // namespace " + ns + "\n";
  return out;
}

// ---- The table of pages (docs/manual-pages.md) ----------------------------------------------

const char* const kTableBegin = "<!-- man pages: begin (generated: cmake --build BUILD --target man-table) -->";
const char* const kTableEnd = "<!-- man pages: end -->";

std::string table_cell(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

std::string readme_table(const std::vector<Page>& pages) {
  std::string out = "| Page | What it documents |\n|---|---|\n";
  for (const Page& page : pages) {
    std::string cell = "`" + page.name + "(" + std::to_string(page.section) + ")`";
    if (!page.also.empty()) {
      std::vector<std::string> also;
      for (const std::string& a : page.also) also.push_back("`" + a + "`");
      cell += " (also " + join(also, ", ") + ")";
    }
    out += "| " + cell + " | " + table_cell(page.summary) + " |\n";
  }
  return out;
}

// The file's text split around the table: before (through the begin marker), table, after.
struct ReadmeParts {
  std::string before, table, after;
};

ReadmeParts split_readme(const std::string& path) {
  const std::string text = read_file(path);
  const std::size_t begin = text.find(kTableBegin);
  const std::size_t end = text.find(kTableEnd);
  if (begin == std::string::npos || end == std::string::npos || end < begin)
    throw SourceError(path, 0,
                      std::string("has no table of manual pages between the lines '") + kTableBegin +
                          "' and '" + kTableEnd + "'");
  const std::size_t table_start = text.find('\n', begin);
  ReadmeParts parts;
  parts.before = text.substr(0, table_start + 1);
  parts.table = text.substr(table_start + 1, end - table_start - 1);
  parts.after = text.substr(end);
  return parts;
}

int line_of(const std::string& text, std::size_t offset) {
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(offset), '\n'));
}

// An overview page's CALLS section lists pages as definitions whose term is the reference alone,
// e.g. bsp_put(3), and whose text is that page's summary: complaints where the text is not.
std::vector<std::string> overview_mismatches(const std::vector<Page>& pages) {
  std::map<std::string, const Page*> by_reference;
  for (const Page& page : pages) {
    by_reference.emplace(page.name + "(" + std::to_string(page.section) + ")", &page);
    for (const std::string& a : page.also)
      by_reference.emplace(a + "(" + std::to_string(page.section) + ")", &page);
  }
  std::vector<std::string> out;
  std::vector<const Block*> lists;
  auto collect = [&](const std::vector<Block>& blocks, auto& self) -> void {
    for (const Block& b : blocks) {
      if (b.kind == Block::kDefinitions) lists.push_back(&b);
      for (const Item& item : b.items) self(item.body, self);
    }
  };
  for (const Page& page : pages) {
    lists.clear();
    for (const Section& section : page.sections)
      if (section.heading == "CALLS") collect(section.blocks, collect);
    for (const Block* list : lists) {
      for (const Item& item : list->items) {
        std::string term = item.marker;
        if (term.size() >= 2 && term.front() == '`' && term.back() == '`')
          term = term.substr(1, term.size() - 2);
        const auto target = by_reference.find(term);
        if (target == by_reference.end()) continue;
        std::vector<std::string> words;
        if (!item.body.empty() && item.body.front().kind == Block::kParagraph)
          for (const Line& l : item.body.front().lines) words.push_back(trim(l.text));
        const std::string text = join(words, " ");
        if (text != target->second->summary)
          out.push_back(page.file + ":" + std::to_string(item.line) + ": the text under " + term +
                        " is not the summary on line 1 of " + target->second->file + ": '" +
                        text + "' instead of '" + target->second->summary + "'");
      }
    }
  }
  return out;
}

int check_readme(const std::string& readme, const std::vector<Page>& pages) {
  const std::vector<std::string> overviews = overview_mismatches(pages);
  for (const std::string& complaint : overviews) std::cerr << complaint << "\n";
  const ReadmeParts parts = split_readme(readme);
  const std::string want = readme_table(pages);
  if (parts.table == want) {
    if (!overviews.empty()) return 1;
    std::cout << readme << ": the table of manual pages matches the " << pages.size()
              << " pages\n";
    return 0;
  }
  std::set<std::string> have_rows, want_rows;
  std::istringstream h(parts.table), w(want);
  for (std::string row; std::getline(h, row);) have_rows.insert(row);
  for (std::string row; std::getline(w, row);) want_rows.insert(row);
  const int first_line = line_of(parts.before, parts.before.size());
  std::cerr << readme << ":" << first_line
            << ": the table of manual pages differs from the pages' titles (line 1 of each "
               "man/pages/*.md):\n";
  for (const std::string& row : want_rows)
    if (!have_rows.count(row)) std::cerr << "  missing in " << readme << ": " << row << "\n";
  for (const std::string& row : have_rows)
    if (!want_rows.count(row)) std::cerr << "  not a page's title: " << row << "\n";
  if (std::includes(have_rows.begin(), have_rows.end(), want_rows.begin(), want_rows.end()) &&
      have_rows.size() == want_rows.size())
    std::cerr << "  (the rows are the same, in another order)\n";
  std::cerr << "Rewrite it with: cmake --build BUILD --target man-table\n";
  return 1;
}

int update_readme(const std::string& readme, const std::vector<Page>& pages) {
  const ReadmeParts parts = split_readme(readme);
  const std::string want = readme_table(pages);
  if (parts.table == want) {
    std::cout << readme << ": the table of manual pages is up to date (" << pages.size()
              << " pages)\n";
    return 0;
  }
  write_file(readme, parts.before + want + parts.after);
  std::cout << readme << ": rewrote the table of manual pages (" << pages.size() << " pages)\n";
  return 0;
}

// ---- Headers ---------------------------------------------------------------------------------

struct Declaration {
  std::string name;
  std::string normalized;  // whitespace only where two words meet
  int line = 0;
};

// Whitespace removed except between two word characters, where it becomes one space.
std::string normalize(const std::string& s) {
  std::string out;
  bool pending_space = false;
  for (char c : s) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      pending_space = true;
      continue;
    }
    if (pending_space && !out.empty() && is_word_char(out.back()) && is_word_char(c)) out += ' ';
    pending_space = false;
    out += c;
  }
  return out;
}

// The functions a C header declares (comments, preprocessor lines and typedefs left out).
std::vector<Declaration> header_functions(const std::string& path) {
  const std::string text = read_file(path);
  std::string code;          // comments and directives blanked, newlines kept
  std::vector<int> line_at;  // line of each character of code
  int line = 1;
  bool at_line_start = true;
  for (std::size_t i = 0; i < text.size();) {
    if (text.compare(i, 2, "/*") == 0) {
      const std::size_t end = text.find("*/", i + 2);
      const std::size_t stop = end == std::string::npos ? text.size() : end + 2;
      for (; i < stop; ++i) {
        code += text[i] == '\n' ? '\n' : ' ';
        line_at.push_back(line);
        if (text[i] == '\n') ++line;
      }
      continue;
    }
    if (text.compare(i, 2, "//") == 0 || (at_line_start && text[i] == '#')) {
      // To the end of the line (a directive: including its continuation lines).
      const bool directive = text[i] == '#';
      while (i < text.size() && text[i] != '\n') {
        if (directive && text[i] == '\\' && i + 1 < text.size() && text[i + 1] == '\n') {
          code += " \n";
          line_at.push_back(line);
          line_at.push_back(line);
          ++line;
          i += 2;
          continue;
        }
        code += ' ';
        line_at.push_back(line);
        ++i;
      }
      continue;
    }
    const char c = text[i++];
    code += c;
    line_at.push_back(line);
    if (c == '\n') {
      ++line;
      at_line_start = true;
    } else if (c != ' ' && c != '\t') {
      at_line_start = false;
    }
  }
  std::vector<Declaration> out;
  std::size_t start = 0;
  while (start < code.size()) {
    std::size_t end = code.find(';', start);
    if (end == std::string::npos) break;
    std::string statement = code.substr(start, end - start);
    std::size_t offset = start;
    // Drop what a brace ends or opens before the declaration (extern "C" {, }).
    const std::size_t brace = statement.find_last_of("{}");
    if (brace != std::string::npos) {
      offset += brace + 1;
      statement = statement.substr(brace + 1);
    }
    const std::size_t first = statement.find_first_not_of(" \n\t");
    start = end + 1;
    if (first == std::string::npos) continue;
    const std::string decl = statement.substr(first);
    if (starts_with(decl, "typedef") || starts_with(decl, "extern \"C\"")) continue;
    const std::size_t paren = decl.find('(');
    if (paren == std::string::npos) continue;
    std::size_t name_end = paren;
    while (name_end > 0 && decl[name_end - 1] == ' ') --name_end;
    std::size_t name_start = name_end;
    while (name_start > 0 && is_word_char(decl[name_start - 1])) --name_start;
    if (name_start == name_end) continue;
    out.push_back({decl.substr(name_start, name_end - name_start), normalize(decl + ";"),
                   line_at[offset + first]});
  }
  return out;
}

// name -> the page (section 3) that documents it.
std::map<std::string, const Page*> documented(const std::vector<Page>& pages) {
  std::map<std::string, const Page*> out;
  for (const Page& page : pages) {
    if (page.section != 3) continue;
    out.emplace(page.name, &page);
    for (const std::string& a : page.also) out.emplace(a, &page);
  }
  return out;
}

int check_headers(const std::vector<std::string>& headers, const std::vector<Page>& pages) {
  const auto pages_by_name = documented(pages);
  int missing = 0, total = 0;
  for (const std::string& header : headers) {
    for (const Declaration& d : header_functions(header)) {
      ++total;
      if (pages_by_name.count(d.name)) continue;
      ++missing;
      std::cerr << header << ":" << d.line << ": " << d.name
                << " has no manual page: write man/pages/" << d.name
                << ".3.md, or name it on the 'Also:' line of the page that documents it\n";
    }
  }
  if (missing) {
    std::cerr << missing << " of " << total << " functions have no manual page\n";
    return 1;
  }
  std::cout << "every one of the " << total << " functions has a manual page\n";
  return 0;
}

// The SYNOPSIS of the page documenting each function holds its declaration as in the header.
int check_synopsis(const std::vector<std::string>& headers, const std::vector<Page>& pages) {
  const auto pages_by_name = documented(pages);
  int wrong = 0, checked = 0;
  for (const std::string& header : headers) {
    for (const Declaration& d : header_functions(header)) {
      const auto found = pages_by_name.find(d.name);
      if (found == pages_by_name.end()) continue;  // check_headers's business
      ++checked;
      const Page& page = *found->second;
      const Section* synopsis = page.find("SYNOPSIS");
      std::string code;
      if (synopsis)
        for (const Block& b : synopsis->blocks)
          if (b.kind == Block::kCode)
            for (const Line& l : b.lines) code += l.text + "\n";
      std::vector<std::string> statements;
      {
        // Comments in the synopsis are the reader's, not the declaration's.
        std::string bare;
        for (std::size_t i = 0; i < code.size(); ++i) {
          if (code.compare(i, 2, "/*") == 0) {
            const std::size_t e = code.find("*/", i + 2);
            i = e == std::string::npos ? code.size() : e + 1;
            bare += ' ';
          } else if (code.compare(i, 2, "//") == 0) {
            i = code.find('\n', i);
            if (i == std::string::npos) break;
            bare += '\n';
          } else if (code[i] == '#' && (i == 0 || code[i - 1] == '\n')) {
            i = code.find('\n', i);
            if (i == std::string::npos) break;
            bare += '\n';
          } else {
            bare += code[i];
          }
        }
        std::size_t start = 0;
        for (std::size_t end; (end = bare.find(';', start)) != std::string::npos; start = end + 1)
          statements.push_back(normalize(bare.substr(start, end - start + 1)));
      }
      if (std::find(statements.begin(), statements.end(), d.normalized) != statements.end()) continue;
      ++wrong;
      std::cerr << page.file << ": SYNOPSIS does not declare " << d.name
                << " as " << header << ":" << d.line << " does: " << d.normalized << "\n";
    }
  }
  if (wrong) {
    std::cerr << wrong << " of " << checked << " documented functions differ from their header\n";
    return 1;
  }
  std::cout << "the " << checked << " documented functions are declared in their pages' "
               "SYNOPSIS as in their headers\n";
  return 0;
}

// ---- Writing the pages -----------------------------------------------------------------------

int write_pages(const std::vector<Page>& pages, const fs::path& out, const Stamp& stamp) {
  std::map<int, std::set<std::string>> written;  // section -> file names
  for (const Page& page : pages) {
    const std::string section = std::to_string(page.section);
    const fs::path dir = out / ("man" + section);
    fs::create_directories(dir);
    const std::string file = page.name + "." + section;
    write_file(dir / file, roff_page(page, stamp));
    written[page.section].insert(file);
    for (const std::string& a : page.also) {
      const std::string link = a + "." + section;
      write_file(dir / link, ".so man" + section + "/" + file + "\n");
      written[page.section].insert(link);
    }
  }
  // Pages of sources that are gone would otherwise be installed on and on.
  for (const auto& [section, files] : written) {
    const fs::path dir = out / ("man" + std::to_string(section));
    for (const auto& entry : fs::directory_iterator(dir)) {
      const std::string file = entry.path().filename().string();
      if (entry.is_regular_file() && !files.count(file)) fs::remove(entry.path());
    }
  }
  return 0;
}

// ---- Command line ----------------------------------------------------------------------------

const char* const kUsage =
    "Usage: mangen pages --out DIR [--date DATE] [--version V] [-D NAME=VALUE]... PAGE.md|DIR...\n"
    "         writes DIR/manS/NAME.S for every page, and link pages for its 'Also:' names\n"
    "       mangen roff [--date DATE] [--version V] [-D NAME=VALUE]... PAGE.md\n"
    "         prints one page's roff\n"
    "       mangen text [-D NAME=VALUE]... [-o FILE] PAGE.md\n"
    "         the plain-text rendering (what bsprun --help prints)\n"
    "       mangen cpp --symbol NS::NAME [-D NAME=VALUE]... -o FILE.cpp PAGE.md\n"
    "         a C++ source defining const char NAME[] as the plain-text rendering\n"
    "       mangen names PAGE.md|DIR...          prints 'SECTION NAME' for every name documented\n"
    "       mangen table PAGE.md|DIR...          prints docs/manual-pages.md's table of pages\n"
    "       mangen check-readme docs/manual-pages.md PAGE.md|DIR...\n"
    "         its table, and the CALLS lists of overview pages, hold the pages' summaries\n"
    "       mangen update-readme docs/manual-pages.md PAGE.md|DIR...\n"
    "       mangen check-headers HEADER.h... -- PAGE.md|DIR...\n"
    "         every function the headers declare has a page (or an 'Also:' entry)\n"
    "       mangen check-synopsis HEADER.h... -- PAGE.md|DIR...\n"
    "         each page's SYNOPSIS declares its functions as their header does\n"
    "Exit status: 0 done, 1 a defect in a page, the table or a header (FILE:LINE: what), 2 usage.\n";

int run(int argc, char** argv) {
  if (argc < 2) throw UsageError("no command");
  const std::string command = argv[1];
  if (command == "-h" || command == "--help") {
    std::cout << kUsage;
    return 0;
  }
  Defines defines;
  Stamp stamp{"", "0"};
  std::string out, symbol;
  std::vector<std::string> args;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw UsageError(a + " needs a value");
      return argv[++i];
    };
    if (a == "-D") {
      const std::string d = value();
      const std::size_t eq = d.find('=');
      const std::string key = d.substr(0, eq);
      if (eq == std::string::npos || key.empty() ||
          !std::all_of(key.begin(), key.end(), [](char c) {
            return std::isupper(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_';
          }))
        throw UsageError("-D needs NAME=VALUE with an upper-case NAME, not '" + d + "'");
      defines[key] = d.substr(eq + 1);
    } else if (a == "--out" || a == "-o") {
      out = value();
    } else if (a == "--date") {
      stamp.date = value();
    } else if (a == "--version") {
      stamp.version = value();
    } else if (a == "--symbol") {
      symbol = value();
    } else {
      args.push_back(a);
    }
  }
  auto one_page = [&]() -> std::string {
    if (args.size() != 1) throw UsageError(command + " takes one page");
    return args[0];
  };
  auto headers_and_pages = [&](std::vector<std::string>& headers) {
    const auto sep = std::find(args.begin(), args.end(), "--");
    if (sep == args.end() || sep == args.begin())
      throw UsageError(command + " needs HEADER.h... -- PAGE.md|DIR...");
    headers.assign(args.begin(), sep);
    return read_pages(std::vector<std::string>(sep + 1, args.end()), nullptr);
  };

  if (command == "pages") {
    if (out.empty()) throw UsageError("pages needs --out DIR");
    if (args.empty()) throw UsageError("pages needs the pages to write");
    return write_pages(read_pages(args, &defines), out, stamp);
  }
  if (command == "roff") {
    std::cout << roff_page(read_page(one_page(), &defines), stamp);
    return 0;
  }
  if (command == "text" || command == "cpp") {
    const std::string source = one_page();
    const std::string text = plain_page(read_page(source, &defines));
    if (command == "cpp") {
      if (symbol.empty() || out.empty()) throw UsageError("cpp needs --symbol NS::NAME and -o FILE");
      write_file(out, cpp_source(text, symbol, "man/pages/" + fs::path(source).filename().string()));
    } else if (out.empty()) {
      std::cout << text;
    } else {
      write_file(out, text);
    }
    return 0;
  }
  if (command == "names" || command == "table") {
    if (args.empty()) throw UsageError(command + " needs pages");
    const std::vector<Page> pages = read_pages(args, nullptr);
    if (command == "table") {
      std::cout << readme_table(pages);
      return 0;
    }
    for (const Page& page : pages) {
      std::cout << page.section << " " << page.name << "\n";
      for (const std::string& a : page.also) std::cout << page.section << " " << a << "\n";
    }
    return 0;
  }
  if (command == "check-readme" || command == "update-readme") {
    if (args.size() < 2)
      throw UsageError(command + " needs the file with the table (docs/manual-pages.md) and the pages");
    const std::vector<Page> pages = read_pages({args.begin() + 1, args.end()}, nullptr);
    return command == "check-readme" ? check_readme(args[0], pages) : update_readme(args[0], pages);
  }
  if (command == "check-headers" || command == "check-synopsis") {
    std::vector<std::string> headers;
    const std::vector<Page> pages = headers_and_pages(headers);
    return command == "check-headers" ? check_headers(headers, pages) : check_synopsis(headers, pages);
  }
  throw UsageError("unknown command '" + command + "'");
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const UsageError& e) {
    std::cerr << "mangen: " << e.what() << "\n" << kUsage;
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "mangen: " << e.what() << "\n";
    return 1;
  }
}
