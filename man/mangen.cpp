// mangen.cpp - mangen's command line and main(): the subcommands, their options and usage. The
// work itself is in the other files of man/; mangen.h says which holds what.
//
// mangen is bspg's glue around lowdown(1) for the manual pages (a build-time host tool).
// A page's source is man/pages/NAME.SECTION.md: Markdown as lowdown reads it, after a title line
// and an optional "Also:" line (man/README.md). lowdown turns it into roff, and groff that roff
// into the plain text --help prints. mangen adds what is bspg's own: the NAME section made from
// line 1, the placeholders (@MPI@, ...), link pages for the other names a page documents, the text
// as a C++ source, the table of pages in docs/manual-pages.md, and the checks of the pages against
// that table and the public headers. Every complaint about a source names its file (and line) and
// ends mangen with exit status 1; a wrong command line ends it with 2.
#include "mangen.h"

#include <algorithm>
#include <cctype>
#include <exception>
#include <filesystem>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

using namespace bspg::mangen;  // what mangen's files share (mangen.h)

namespace {

// A wrong command line.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

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
