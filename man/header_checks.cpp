// header_checks.cpp - the pages against the public headers: every function a header declares has a
// page, and that page's SYNOPSIS declares it as the header does.
#include <algorithm>
#include <cctype>
#include <cstddef>
#include <iostream>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "mangen.h"

namespace bspg::mangen {
namespace {

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

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

}  // namespace

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

}  // namespace bspg::mangen
