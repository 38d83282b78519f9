// mangen.h - what mangen's files share: a defect of a source, the placeholders' values, a page as
// read, the stamp on a rendered page, and the calls each file offers the others. Each is described
// where it is defined. Private to man/.
#ifndef BSPG_MAN_MANGEN_H
#define BSPG_MAN_MANGEN_H

#include <cstddef>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace bspg::mangen {

namespace fs = std::filesystem;

// A defect of an input file, reported as "FILE:LINE: what" (LINE 0: the file as a whole).
struct SourceError : std::runtime_error {
  SourceError(const std::string& file, int line, const std::string& what)
      : std::runtime_error(file + (line > 0 ? ":" + std::to_string(line) : std::string()) + ": " +
                           what) {}
};

using Defines = std::map<std::string, std::string>;

// text_helpers.cpp
bool starts_with(const std::string& s, const std::string& prefix);
std::string trim(const std::string& s);
std::string read_file(const std::string& path);
void write_file(const fs::path& path, const std::string& text);
std::string join(const std::vector<std::string>& parts, const std::string& separator);
std::vector<std::string> split_lines(const std::string& text);
bool is_fence(const std::string& line);
int line_of(const std::string& text, std::size_t offset);

// page_source.cpp
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

Page read_page(const std::string& path, const Defines* defines);
std::vector<Page> read_pages(const std::vector<std::string>& paths, const Defines* defines);

// rendering.cpp; roff_page's default is here, where the callers in other files see it.
struct Stamp {
  std::string date;
  std::string version = "0";
};

std::string roff_chars(const std::string& s);
std::string roff_page(const Page& page, const Stamp& stamp, bool for_text = false);
std::string plain_page(const Page& page);

// output_files.cpp
std::string cpp_source(const std::string& text, const std::string& symbol, const std::string& from);
int write_pages(const std::vector<Page>& pages, const fs::path& out, const Stamp& stamp);

// page_table.cpp
std::string readme_table(const std::vector<Page>& pages);
int check_readme(const std::string& readme, const std::vector<Page>& pages);
int update_readme(const std::string& readme, const std::vector<Page>& pages);

// header_checks.cpp
int check_headers(const std::vector<std::string>& headers, const std::vector<Page>& pages);
int check_synopsis(const std::vector<std::string>& headers, const std::vector<Page>& pages);

}  // namespace bspg::mangen

#endif
