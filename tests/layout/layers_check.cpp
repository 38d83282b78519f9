// layers_check.cpp - checks the tree against the table of layers in docs/code-layout.md: every
// `#include "..."` of a part's sources names a file of the same part or of one the table lets it
// use (and, where a part names its interface, one of those headers), and every
// target_link_libraries of a part's CMakeLists.txt names targets of such parts.
//
//   layers_check SOURCE_ROOT LAYOUT_PAGE
//
// Prints one line per arrow against the table (FILE:LINE: ...) and exits 1; exits 0 when none.
// Folders with sources that the table does not name are errors too, so the table stays whole.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

// The parts whose code is checked; tests/ and build trees are not.
const std::vector<std::string> kRoots = {"common",   "bsplib",     "rsl", "launcher",
                                         "profiler", "benchmarks", "man"};

struct Part {
  std::set<std::string> uses;
  std::set<std::string> interface;  // empty: every header may be included
};

std::vector<std::string> words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// The ```layers block of the page: "PART: USED..." and "PART interface: HEADERS...".
bool read_table(const fs::path& page, std::map<std::string, Part>& parts, std::string& error) {
  std::ifstream in(page);
  if (!in) {
    error = page.string() + ": cannot be read";
    return false;
  }
  bool inside = false, found = false;
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (!inside) {
      if (line == "```layers") inside = found = true;
      continue;
    }
    if (line == "```") break;
    const auto colon = line.find(':');
    if (colon == std::string::npos) {
      error = page.string() + ":" + std::to_string(number) + ": no ':' in a line of the table";
      return false;
    }
    std::vector<std::string> head = words(line.substr(0, colon));
    const std::vector<std::string> rest = words(line.substr(colon + 1));
    if (head.size() == 2 && head[1] == "interface") {
      parts[head[0]].interface.insert(rest.begin(), rest.end());
    } else if (head.size() == 1) {
      if (parts.count(head[0]) && !parts[head[0]].uses.empty()) {
        error = page.string() + ":" + std::to_string(number) + ": " + head[0] + " twice";
        return false;
      }
      parts[head[0]].uses.insert(rest.begin(), rest.end());
    } else {
      error = page.string() + ":" + std::to_string(number) + ": not 'PART:' or 'PART interface:'";
      return false;
    }
  }
  if (!found) error = page.string() + ": no ```layers block";
  return found;
}

bool is_source(const fs::path& p) {
  static const std::set<std::string> kExtensions = {".c", ".cc", ".cpp", ".h", ".hpp"};
  return kExtensions.count(p.extension().string()) > 0;
}

// The part a folder (relative to the root) belongs to: the longest table entry it lies in.
std::string part_of(const std::string& folder, const std::map<std::string, Part>& parts) {
  std::string best;
  for (const auto& [name, part] : parts)
    if ((folder == name || folder.rfind(name + "/", 0) == 0) && name.size() > best.size())
      best = name;
  return best;
}

bool may_use(const std::string& user, const std::string& used,
             const std::map<std::string, Part>& parts) {
  return user == used || parts.at(user).uses.count(used) > 0;
}

// One CMake command's whole text from `at` (the command name) to its closing parenthesis.
std::string command_text(const std::string& text, std::size_t at) {
  int depth = 0;
  for (std::size_t i = at; i < text.size(); ++i) {
    if (text[i] == '(') ++depth;
    if (text[i] == ')' && --depth == 0) return text.substr(at, i + 1 - at);
  }
  return text.substr(at);
}

int line_at(const std::string& text, std::size_t at) {
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n'));
}

std::string without_comments(const std::string& text) {
  std::string out;
  bool comment = false;
  for (char c : text) {
    if (c == '#') comment = true;
    if (c == '\n') comment = false;
    out += comment ? ' ' : c;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: layers_check SOURCE_ROOT LAYOUT_PAGE\n";
    return 2;
  }
  const fs::path root = argv[1];
  std::map<std::string, Part> parts;
  std::string error;
  if (!read_table(argv[2], parts, error)) {
    std::cerr << "layers_check: " << error << "\n";
    return 2;
  }
  int problems = 0;
  const auto report = [&problems](const std::string& line) {
    std::cout << line << "\n";
    ++problems;
  };
  for (const auto& [name, part] : parts) {
    if (!fs::is_directory(root / name)) report("table: " + name + " is no folder of the tree");
    for (const std::string& used : part.uses)
      if (!parts.count(used)) report("table: " + name + " uses " + used + ", which has no line");
  }

  // Every source file, by its path relative to the root.
  std::vector<std::string> sources, cmake_files;
  for (const std::string& top : kRoots) {
    if (!fs::is_directory(root / top)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(root / top)) {
      if (!entry.is_regular_file()) continue;
      const std::string rel = fs::relative(entry.path(), root).generic_string();
      if (is_source(entry.path())) sources.push_back(rel);
      if (entry.path().filename() == "CMakeLists.txt") cmake_files.push_back(rel);
    }
  }
  std::sort(sources.begin(), sources.end());
  std::sort(cmake_files.begin(), cmake_files.end());

  std::set<std::string> unnamed;
  for (const std::string& file : sources) {
    const std::string folder = fs::path(file).parent_path().generic_string();
    if (!parts.count(folder)) unnamed.insert(folder);
  }
  for (const std::string& folder : unnamed)
    report(folder + ": a folder with sources that the table in the layout page does not name");

  // Includes: the file next to the includer first (as the compiler looks), else the one file of
  // the tree whose path ends with the name.
  const std::regex include_line(R"re(^\s*#\s*include\s+"([^"]+)")re");
  for (const std::string& file : sources) {
    const std::string folder = fs::path(file).parent_path().generic_string();
    const std::string user = part_of(folder, parts);
    if (user.empty()) continue;
    std::ifstream in(root / file);
    int number = 0;
    for (std::string line; std::getline(in, line);) {
      ++number;
      std::smatch m;
      if (!std::regex_search(line, m, include_line)) continue;
      const std::string name = m[1];
      std::string target;
      if (fs::exists(root / folder / name)) {
        target = (fs::path(folder) / name).lexically_normal().generic_string();
      } else {
        std::vector<std::string> found;
        for (const std::string& other : sources)
          if (other == name || (other.size() > name.size() &&
                                other.compare(other.size() - name.size(), name.size(), name) == 0 &&
                                other[other.size() - name.size() - 1] == '/'))
            found.push_back(other);
        if (found.size() != 1) {
          report(file + ":" + std::to_string(number) + ": includes \"" + name + "\", which " +
                 (found.empty() ? "is no file of the tree" : "more than one file of the tree is"));
          continue;
        }
        target = found.front();
      }
      const std::string used = part_of(fs::path(target).parent_path().generic_string(), parts);
      if (used.empty()) continue;
      if (!may_use(user, used, parts)) {
        report(file + ":" + std::to_string(number) + ": includes " + target + ": " + user +
               " may not use " + used);
      } else if (user != used && !parts.at(used).interface.empty() &&
                 !parts.at(used).interface.count(fs::path(target).filename().string())) {
        report(file + ":" + std::to_string(number) + ": includes " + target + ", which is not in " +
               used + "'s interface");
      }
    }
  }

  // Links: the targets each CMakeLists.txt makes belong to its folder's part.
  std::map<std::string, std::string> target_part;
  std::map<std::string, std::string> texts;
  const std::regex makes(R"(\b(add_library|add_executable)\s*\(\s*([A-Za-z0-9_.+-]+))");
  for (const std::string& file : cmake_files) {
    std::ifstream in(root / file);
    std::stringstream buffer;
    buffer << in.rdbuf();
    texts[file] = without_comments(buffer.str());
    const std::string part = part_of(fs::path(file).parent_path().generic_string(), parts);
    for (std::sregex_iterator it(texts[file].begin(), texts[file].end(), makes), end; it != end;
         ++it)
      if (!part.empty()) target_part[(*it)[2]] = part;
  }
  const std::regex links(R"(\btarget_link_libraries\s*\()");
  for (const std::string& file : cmake_files) {
    const std::string& text = texts[file];
    const std::string user = part_of(fs::path(file).parent_path().generic_string(), parts);
    if (user.empty()) continue;
    for (std::sregex_iterator it(text.begin(), text.end(), links), end; it != end; ++it) {
      const auto at = static_cast<std::size_t>(it->position());
      std::string call = command_text(text, at);
      call = call.substr(call.find('(') + 1);
      call.pop_back();
      const std::vector<std::string> items = words(call);
      for (std::size_t i = 1; i < items.size(); ++i) {
        const auto known = target_part.find(items[i]);
        if (known == target_part.end()) continue;  // a keyword, or a library from outside
        if (!may_use(user, known->second, parts))
          report(file + ":" + std::to_string(line_at(text, at)) + ": links " + items[i] + " (" +
                 known->second + "): " + user + " may not use " + known->second);
      }
    }
  }

  if (problems == 0)
    std::cout << "layers_check: " << sources.size() << " sources and " << cmake_files.size()
              << " CMakeLists.txt follow the table\n";
  return problems == 0 ? 0 : 1;
}
