// page_table.cpp - the table of pages in docs/manual-pages.md, made from the pages' titles, checked
// and rewritten; the CALLS lists of overview pages checked against the summaries they name.
#include <algorithm>
#include <cstddef>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "mangen.h"

namespace bspg::mangen {
namespace {

const char* const kTableBegin = "<!-- man pages: begin (generated: cmake --build BUILD --target man-table) -->";
const char* const kTableEnd = "<!-- man pages: end -->";

std::string table_cell(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

}  // namespace

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

namespace {

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

}  // namespace

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

}  // namespace bspg::mangen
