// page_source.cpp - a page's source read and checked: its file's name, the title on line 1, the
// 'Also:' names, the placeholders replaced, the sections; all pages read, no name documented twice.
#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <map>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "mangen.h"

namespace bspg::mangen {
namespace {

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

}  // namespace

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

namespace {

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

}  // namespace

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

}  // namespace bspg::mangen
