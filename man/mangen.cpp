// mangen.cpp - bspg's glue around lowdown(1) for the manual pages (a build-time host tool).
//
// A page's source is man/pages/NAME.SECTION.md: Markdown as lowdown reads it, after a title line
// and an optional "Also:" line (man/README.md). lowdown turns it into roff, and groff that roff
// into the plain text --help prints. mangen adds what is bspg's own: the NAME section made from
// line 1, the placeholders (@MPI@, ...), link pages for the other names a page documents, the text
// as a C++ source, the table of pages in docs/manual-pages.md, and the checks of the pages against
// that table and the public headers. Every complaint about a source names its file (and line) and
// ends mangen with exit status 1; a wrong command line ends it with 2.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

// The tools found when configuring (man/CMakeLists.txt).
#ifndef BSPG_LOWDOWN
#define BSPG_LOWDOWN "lowdown"
#endif
#ifndef BSPG_GROFF
#define BSPG_GROFF "groff"
#endif

namespace fs = std::filesystem;

namespace {

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

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

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

// The lines of a text, without their newlines (and carriage returns).
std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(line);
  }
  return lines;
}

bool is_fence(const std::string& line) { return starts_with(trim(line), "```"); }

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

// ---- Reading a page --------------------------------------------------------------------------

struct Section {
  std::string heading;
  std::size_t begin = 0, end = 0;  // its lines (after the heading) in Page::lines
};

struct Page {
  std::string file;  // as given on the command line, for messages
  std::string name;
  int section = 0;
  std::string summary;
  std::vector<std::string> also;
  std::vector<std::string> lines;  // the whole file, placeholders replaced; lines[i] is line i + 1
  std::vector<Section> sections;
  const Section* find(const std::string& heading) const {
    for (const Section& s : sections)
      if (s.heading == heading) return &s;
    return nullptr;
  }
  std::vector<std::string> names() const {
    std::vector<std::string> all{name};
    all.insert(all.end(), also.begin(), also.end());
    return all;
  }
};

// NAME and SECTION from ".../NAME.SECTION.md".
std::pair<std::string, int> name_from_path(const std::string& path) {
  static const std::regex file(R"((.+)\.([1-9])\.md)");
  std::smatch m;
  const std::string base = fs::path(path).filename().string();
  if (!std::regex_match(base, m, file))
    throw SourceError(path, 0, "a page's file is named NAME.SECTION.md (e.g. bsp_put.3.md)");
  return {m[1], std::stoi(m[2])};
}

bool is_name(const std::string& s) {
  static const std::regex name(R"([A-Za-z_][A-Za-z0-9_.+-]*)");
  return std::regex_match(s, name);
}

// Replaces @NAME@ by its value; an @NAME@ not defined is an error. Without defines (the table
// and the checks) the text stays as it is.
std::string substitute(const std::string& text, const Defines* defines, const std::string& file,
                       int line) {
  static const std::regex placeholder("@([A-Z][A-Z0-9_]*)@");
  if (defines == nullptr) return text;
  std::string out;
  std::size_t done = 0;
  for (std::sregex_iterator m(text.begin(), text.end(), placeholder), end; m != end; ++m) {
    const auto value = defines->find((*m)[1]);
    if (value == defines->end()) {
      std::vector<std::string> known;
      for (const auto& d : *defines) known.push_back("@" + d.first + "@");
      throw SourceError(file, line,
                        "unknown placeholder " + m->str() + " (known: " +
                            (known.empty() ? std::string("none") : join(known, ", ")) + ")");
    }
    out += text.substr(done, m->position() - done) + value->second;
    done = m->position() + m->length();
  }
  return out + text.substr(done);
}

// Reads one page and checks what mangen relies on: the title, the names, the sections (the rest
// is Markdown, lowdown's business). defines: see substitute().
Page read_page(const std::string& path, const Defines* defines) {
  static const std::regex title(R"(# ([^ ()]+)\(([1-9])\) - (.*[^ ].*))");
  static const std::regex heading(R"(## [A-Z][A-Z0-9/-]*( [A-Z0-9/-]+)*)");
  Page page;
  page.file = path;
  const auto [file_name, file_section] = name_from_path(path);
  page.lines = split_lines(read_file(path));
  for (std::size_t i = 0; i < page.lines.size(); ++i) {
    page.lines[i] = substitute(page.lines[i], defines, path, static_cast<int>(i + 1));
    try {
      roff_chars(page.lines[i]);
    } catch (const std::runtime_error& e) {
      throw SourceError(path, static_cast<int>(i + 1), e.what());
    }
  }

  std::smatch m;
  if (page.lines.empty() || !std::regex_match(page.lines[0], m, title))
    throw SourceError(path, 1,
                      "line 1 must be '# NAME(SECTION) - one-line summary', e.g. '# bsp_put(3) - "
                      "copy bytes ...'");
  page.name = m[1];
  page.section = std::stoi(m[2]);
  page.summary = trim(m[3]);
  if (!is_name(page.name)) throw SourceError(path, 1, "'" + page.name + "' is not a page name");
  if (page.name != file_name || page.section != file_section)
    throw SourceError(path, 1,
                      "the title names " + page.name + "(" + m[2].str() + ") but the file is " +
                          file_name + "." + std::to_string(file_section) + ".md");
  std::size_t i = 1;
  if (i < page.lines.size() && starts_with(page.lines[i], "Also:")) {
    std::stringstream names(page.lines[i].substr(5));
    for (std::string name; std::getline(names, name, ',');) {
      name = trim(name);
      if (!is_name(name))
        throw SourceError(path, 2,
                          "'Also:' lists names separated by commas, e.g. 'Also: bsp_hpput'; '" +
                              name + "' is not a name");
      const auto names_so_far = page.names();
      if (std::find(names_so_far.begin(), names_so_far.end(), name) != names_so_far.end())
        throw SourceError(path, 2, "'" + name + "' is named twice");
      page.also.push_back(name);
    }
    ++i;
  }

  // Sections: "## HEADING" lines outside code. The NAME section is mangen's, from line 1.
  bool in_code = false;
  int code_line = 0;
  for (; i < page.lines.size(); ++i) {
    const std::string& line = page.lines[i];
    const int number = static_cast<int>(i + 1);
    if (is_fence(line)) {
      in_code = !in_code;
      code_line = number;
    } else if (in_code || !starts_with(line, "#")) {
      if (page.sections.empty() && !trim(line).empty())
        throw SourceError(path, number,
                          starts_with(line, "Also:")
                              ? "'Also:' belongs on line 2, right after the title"
                              : "text before the first section: start one with '## HEADING'");
    } else {
      if (!starts_with(line, "## ") || starts_with(line, "## #"))
        throw SourceError(path, number, "headings are '## HEADING' lines (one '#' only on line 1)");
      if (!std::regex_match(line, heading))
        throw SourceError(path, number,
                          "a heading is upper case: '" + line + "' (e.g. '## SEE ALSO')");
      const std::string name = line.substr(3);
      if (name == "NAME")
        throw SourceError(path, number, "no '## NAME': the NAME section comes from line 1");
      if (const Section* earlier = page.find(name))
        throw SourceError(
            path, number,
            "section " + name + " again (first at line " + std::to_string(earlier->begin) + ")");
      if (!page.sections.empty()) page.sections.back().end = i;
      page.sections.push_back({name, i + 1, 0});
    }
  }
  if (in_code) throw SourceError(path, code_line, "code block not closed: no line ``` after it");
  if (page.sections.empty())
    throw SourceError(path, 0, "no sections: add at least '## DESCRIPTION'");
  page.sections.back().end = page.lines.size();
  for (const Section& s : page.sections)
    if (std::all_of(page.lines.begin() + static_cast<long>(s.begin),
                    page.lines.begin() + static_cast<long>(s.end),
                    [](const std::string& l) { return trim(l).empty(); }))
      throw SourceError(path, static_cast<int>(s.begin), "section " + s.heading + " has no text");
  return page;
}

// The pages in `paths`; a directory stands for the *.md files in it.
std::vector<std::string> expand_sources(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (const std::string& p : paths) {
    if (!fs::is_directory(p)) {
      out.push_back(p);
      continue;
    }
    std::vector<std::string> found;
    for (const auto& entry : fs::directory_iterator(p))
      if (entry.is_regular_file() && entry.path().extension() == ".md")
        found.push_back(entry.path().string());
    std::sort(found.begin(), found.end());
    out.insert(out.end(), found.begin(), found.end());
  }
  return out;
}

// Every page, with no name documented twice. Sorted by section, then name.
std::vector<Page> read_pages(const std::vector<std::string>& paths, const Defines* defines) {
  std::vector<Page> pages;
  std::map<std::string, std::string> owner;  // "name(section)" -> the file that documents it
  for (const std::string& path : expand_sources(paths)) {
    Page page = read_page(path, defines);
    for (const std::string& name : page.names()) {
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

// ---- lowdown and groff -----------------------------------------------------------------------

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

struct Stamp {
  std::string date;
  std::string version = "0";
};

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

// The roff of a page. for_text: for plain_page, which sets it as text.
std::string roff_page(const Page& page, const Stamp& stamp, bool for_text = false) {
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

// A C++ source that defines `symbol` (e.g. bspg::launcher::kBsprunManual) as the text.
std::string cpp_source(const std::string& text, const std::string& symbol, const std::string& from) {
  const std::size_t colons = symbol.rfind("::");
  const std::string ns = colons == std::string::npos ? "" : symbol.substr(0, colons);
  const std::string name = colons == std::string::npos ? symbol : symbol.substr(colons + 2);
  std::string out = "// Generated by mangen from " + from + ": edit that file, not this one.\n";
  if (!ns.empty()) out += "namespace " + ns + " {\n";
  out += "extern const char " + name + "[];\n";
  out += "const char " + name + "[] =";
  for (const std::string& line : split_lines(text)) {
    out += "\n    \"";
    for (const char c : line) {
      if (c == '"' || c == '\\') out += '\\';
      out += c == '?' ? std::string("\\?") : std::string(1, c);  // no trigraphs
    }
    out += "\\n\"";
  }
  out += text.empty() ? " \"\";\n" : ";\n";
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
  for (const Page& page : pages) {
    const Section* calls = page.find("CALLS");
    if (calls == nullptr) continue;
    for (std::size_t i = calls->begin; i + 1 < calls->end; ++i) {
      // A term: a line of its own, followed by ":   text", continued on lines indented by 4.
      if (!starts_with(page.lines[i + 1], ":   ") || trim(page.lines[i]).empty()) continue;
      std::string term = trim(page.lines[i]);
      if (term.size() >= 2 && term.front() == '`' && term.back() == '`')
        term = term.substr(1, term.size() - 2);
      const auto target = by_reference.find(term);
      if (target == by_reference.end()) continue;
      std::vector<std::string> words{trim(page.lines[i + 1].substr(4))};
      for (std::size_t j = i + 2;
           j < calls->end && starts_with(page.lines[j], "    ") && !trim(page.lines[j]).empty();
           ++j)
        words.push_back(trim(page.lines[j]));
      const std::string text = join(words, " ");
      if (text != target->second->summary)
        out.push_back(page.file + ":" + std::to_string(i + 1) + ": the text under " + term +
                      " is not the summary on line 1 of " + target->second->file + ": '" + text +
                      "' instead of '" + target->second->summary + "'");
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

// C code with its comments and preprocessor lines (with their continuations) blanked out; the
// newlines stay, and with them each character's line.
std::string bare_code(std::string code) {
  for (std::size_t i = 0; i < code.size(); ++i) {
    const std::size_t line_start = code.find_last_not_of(" \t", i == 0 ? 0 : i - 1);
    std::size_t end = i;
    if (code.compare(i, 2, "/*") == 0) {
      end = std::min(code.find("*/", i + 2), code.size() - 2) + 2;
    } else if (code.compare(i, 2, "//") == 0 ||
               (code[i] == '#' &&
                (i == 0 || line_start == std::string::npos || code[line_start] == '\n'))) {
      end = code.find('\n', i);
      while (end != std::string::npos && code[end - 1] == '\\') end = code.find('\n', end + 1);
      end = std::min(end, code.size());
    }
    for (; i < end; ++i)
      if (code[i] != '\n') code[i] = ' ';
  }
  return code;
}

// The functions a C header declares (typedefs left out).
std::vector<Declaration> header_functions(const std::string& path) {
  static const std::regex function(R"(([A-Za-z_][A-Za-z0-9_]*)\s*\()");
  const std::string code = bare_code(read_file(path));
  std::vector<Declaration> out;
  for (std::size_t start = 0, end; (end = code.find(';', start)) != std::string::npos;
       start = end + 1) {
    // From after what a brace ends or opens before the declaration (extern "C" {, }).
    std::size_t from = code.find_last_of("{}", end);
    from = code.find_first_not_of(" \t\n",
                                  from == std::string::npos || from < start ? start : from + 1);
    const std::string decl = code.substr(from, end + 1 - from);
    std::smatch m;
    if (from < end && !starts_with(decl, "typedef") && std::regex_search(decl, m, function))
      out.push_back({m[1], normalize(decl), line_of(code, from)});
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
      bool in_code = false;
      for (std::size_t i = synopsis ? synopsis->begin : 0; synopsis && i < synopsis->end; ++i) {
        if (is_fence(page.lines[i])) {
          in_code = !in_code;
        } else if (in_code) {
          code += page.lines[i] + "\n";
        }
      }
      // Its statements; comments in the synopsis are the reader's, not the declaration's.
      std::vector<std::string> statements;
      code = bare_code(code);
      for (std::size_t start = 0, end; (end = code.find(';', start)) != std::string::npos;
           start = end + 1)
        statements.push_back(normalize(code.substr(start, end + 1 - start)));
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
    "         writes DIR/manS/NAME.S for every page (lowdown), and link pages for its 'Also:' "
    "names\n"
    "       mangen roff [--date DATE] [--version V] [-D NAME=VALUE]... PAGE.md\n"
    "         prints one page's roff\n"
    "       mangen text [-D NAME=VALUE]... [-o FILE] PAGE.md\n"
    "         the plain text (lowdown, then groff) that bsprun --help prints\n"
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
    "Exit status: 0 done, 1 a defect in a page, the table or a header (FILE:LINE: what), 2 "
    "usage.\n";

int run(int argc, char** argv) {
  if (argc < 2) throw UsageError("no command");
  const std::string command = argv[1];
  if (command == "-h" || command == "--help") {
    std::cout << kUsage;
    return 0;
  }
  Defines defines;
  Stamp stamp;
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
