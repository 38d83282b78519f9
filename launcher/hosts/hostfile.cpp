// Host file reader: YAML (yaml-cpp) or Open MPI plain format. Host files are untrusted: every
// value is checked for the form it may take (untrusted.h) before it reaches an ssh configuration,
// mpirun's command line, an RSL file or the terminal.
#include <limits.h>
#include <pwd.h>
#include <unistd.h>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <sstream>

#include "hosts.h"
#include "untrusted.h"

namespace bspg::hosts {
namespace {

using untrusted::excerpt;

// Messages quote values from the file: printable() keeps them to one inert line.
[[noreturn]] void fail(const std::string& path, int line, const std::string& message) {
  throw HostFileError(untrusted::printable(path + ":" + std::to_string(line) + ": " + message));
}

// "" or a problem with the message for `value` as `what` ("host name", "address", ...).
void check_form(const std::string& path, int line, const std::string& what,
                const std::string& value, const std::string& problem,
                const std::string& hint = "") {
  if (!problem.empty())
    fail(path, line, "invalid " + what + " '" + excerpt(value) + "': " + problem + hint);
}

int line_of(const YAML::Node& node) { return node.Mark().line + 1; }

std::string home_of(const std::string& user) {
  if (user.empty()) {
    if (const char* home = std::getenv("HOME"); home && *home) return home;
    if (const passwd* pw = getpwuid(getuid())) return pw->pw_dir;
    return "";
  }
  if (const passwd* pw = getpwnam(user.c_str())) return pw->pw_dir;
  return "";
}

// "~", "~/x", "~user/x" -> home directory; relative paths are taken relative to the host file's
// folder (absolute). `key` names the setting in messages.
std::string expand_path(const std::string& value, const std::string& key,
                        const std::string& file_dir, const std::string& path, int line) {
  check_form(path, line, key + " path", value, untrusted::control_character_problem(value));
  std::string result = value;
  if (!value.empty() && value[0] == '~') {
    const auto slash = value.find('/');
    const std::string user =
        value.substr(1, slash == std::string::npos ? std::string::npos : slash - 1);
    const std::string home = home_of(user);
    if (home.empty())
      fail(path, line,
           "cannot expand '" + excerpt(value) + "': no home directory for " +
               (user.empty() ? "the current user" : "user '" + excerpt(user) + "'"));
    result = home + (slash == std::string::npos ? "" : value.substr(slash));
  } else if (!value.empty() && value[0] != '/') {
    result = file_dir + "/" + value;
  }
  check_form(path, line, key + " path", result, untrusted::absolute_path_problem(result));
  return result;
}

// A strict decimal integer (no sign, no fraction, no hex), within [lo, hi].
bool parse_int(const std::string& text, long lo, long hi, int& out) {
  if (text.empty() || text.size() > 9) return false;
  long value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text[0] == '-' || text[0] == '+')
    return false;
  if (value < lo || value > hi) return false;
  out = static_cast<int>(value);
  return true;
}

// What a name with ':' was probably meant to be: "emu1:2" (slots, as in mpirun's -host) or an
// IPv6 address, which cannot be a name because Open MPI's host lists use ':'.
std::string colon_hint(const std::string& name) {
  const auto colon = name.rfind(':');
  if (colon == std::string::npos) return "";
  const std::string host = name.substr(0, colon), count = name.substr(colon + 1);
  int slots = 0;
  if (untrusted::host_name_problem(host).empty() && parse_int(count, 1, 1000000, slots))
    return "; to give " + host + " " + count + " slots, write '" + host + " slots=" + count + "'";
  if (untrusted::address_problem(name).empty())
    return "; an IPv6 address cannot be a host's name (Open MPI's host lists use ':'): use a "
           "YAML host file with a name and the address under 'address:'";
  return "";
}

// Host names end up in ssh config `Host` lines, on mpirun's and ssh's command lines and in RSL.
void check_host_name(const std::string& path, int line, const std::string& name) {
  check_form(path, line, "host name", name, untrusted::host_name_problem(name), colon_hint(name));
}

// The folder of the host file, absolute, so that paths relative to it are absolute too.
std::string dir_of(const std::string& path) {
  const auto slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  if (dir[0] == '/') return dir;
  char cwd[PATH_MAX];
  if (getcwd(cwd, sizeof cwd) == nullptr) return dir;
  return std::string(cwd) + (dir == "." ? "" : "/" + dir);
}

// ---- YAML ------------------------------------------------------------------------------------

struct YamlReader {
  std::string path, file_dir;

  // `line` is the key's line: an empty value has no position of its own (yaml-cpp marks the next
  // line).
  std::string scalar(const YAML::Node& value, const std::string& key, int line) const {
    if (value.IsNull()) fail(path, line, "'" + key + "' needs a value");
    if (!value.IsScalar())
      fail(path, line, "'" + key + "' must be a single value, not a list or map");
    const std::string text = value.Scalar();
    if (text.empty()) fail(path, line, "'" + key + "' must not be empty");
    return text;
  }

  // Applies one key of a host (or of `defaults`) to spec; `line` is where the key is.
  void apply(HostSpec& spec, const std::string& key, const YAML::Node& value, bool in_defaults,
             int line) const {
    if (key == "name" && !in_defaults) {
      spec.name = scalar(value, key, line);
      check_host_name(path, line, spec.name);
    } else if (key == "address" && !in_defaults) {
      const std::string address = scalar(value, key, line);
      check_form(path, line, "address", address, untrusted::address_problem(address),
                 " (expected a host name, an IPv4 address or an IPv6 address)");
      spec.address = untrusted::address_without_brackets(address);
    } else if (key == "slots") {
      const std::string text = scalar(value, key, line);
      if (!parse_int(text, 1, 1000000, spec.slots))
        fail(path, line,
             "slots must be a whole number from 1 to 1000000, not '" + excerpt(text) + "'");
    } else if (key == "port") {
      const std::string text = scalar(value, key, line);
      if (!parse_int(text, 1, 65535, spec.port))
        fail(path, line,
             "port must be a whole number from 1 to 65535, not '" + excerpt(text) + "'");
    } else if (key == "site") {
      spec.site = scalar(value, key, line);
      check_form(path, line, "site", spec.site, untrusted::host_name_problem(spec.site),
                 " (a site is named like a host)");
    } else if (key == "user") {
      spec.user = scalar(value, key, line);
      check_form(path, line, "user", spec.user, untrusted::user_name_problem(spec.user));
    } else if (key == "identity") {
      spec.identity = expand_path(scalar(value, key, line), key, file_dir, path, line);
    } else if (key == "known_hosts") {
      spec.known_hosts = expand_path(scalar(value, key, line), key, file_dir, path, line);
    } else {
      const std::string allowed =
          in_defaults ? "slots, site, user, port, identity, known_hosts"
                      : "name, address, slots, site, user, port, identity, known_hosts";
      fail(path, line,
           "unknown key '" + excerpt(key) + "'" + (in_defaults ? " in defaults" : "") +
               " (allowed: " + allowed + ")");
    }
  }

  // Walks a map, rejecting duplicate keys (yaml-cpp keeps them silently).
  template <class F>
  void each_key(const YAML::Node& map, F&& visit) const {
    std::set<std::string> seen;
    for (const auto& item : map) {
      if (!item.first.IsScalar()) fail(path, line_of(item.first), "keys must be plain words");
      const std::string key = item.first.Scalar();
      if (!seen.insert(key).second)
        fail(path, line_of(item.first), "duplicate key '" + excerpt(key) + "'");
      visit(key, item.first, item.second);
    }
  }

  std::vector<HostSpec> read(const YAML::Node& root) const {
    HostSpec defaults;
    YAML::Node hosts_node;
    bool have_hosts = false;
    each_key(root, [&](const std::string& key, const YAML::Node& key_node,
                       const YAML::Node& value) {
      if (key == "defaults") {
        if (value.IsNull()) return;
        if (!value.IsMap()) fail(path, line_of(key_node), "'defaults' must be a map of settings");
        each_key(value, [&](const std::string& k, const YAML::Node& key_node, const YAML::Node& v) {
          apply(defaults, k, v, true, line_of(key_node));
        });
      } else if (key == "hosts") {
        hosts_node = value;
        have_hosts = true;
        if (!value.IsSequence() || value.size() == 0)
          fail(path, line_of(key_node), "'hosts' must be a non-empty list of hosts");
      } else {
        fail(path, line_of(key_node),
             "unknown key '" + excerpt(key) + "' (allowed: defaults, hosts)");
      }
    });
    if (!have_hosts) fail(path, line_of(root), "no 'hosts' list");

    std::vector<HostSpec> hosts;
    std::map<std::string, int> first_line;
    for (const auto& entry : hosts_node) {
      HostSpec spec = defaults;
      spec.line = line_of(entry);
      if (entry.IsScalar()) {  // "- node1" is short for "- name: node1"
        apply(spec, "name", entry, false, spec.line);
      } else if (entry.IsMap()) {
        each_key(entry, [&](const std::string& k, const YAML::Node& key_node, const YAML::Node& v) {
          apply(spec, k, v, false, line_of(key_node));
        });
        if (spec.name.empty()) fail(path, spec.line, "host without 'name'");
      } else {
        fail(path, spec.line, "each host must be a map with at least 'name'");
      }
      if (spec.address.empty()) spec.address = spec.name;
      if (const auto [it, fresh] = first_line.emplace(spec.name, spec.line); !fresh)
        fail(path, spec.line,
             "duplicate host name '" + spec.name + "' (first on line " +
                 std::to_string(it->second) + ")");
      hosts.push_back(spec);
    }
    return hosts;
  }
};

// ---- Open MPI plain ---------------------------------------------------------------------------

// The slots settings of a plain line, each of which may be given once: slots (also spelled count
// or cpu) and max_slots (max-slots).
struct PlainSlots {
  int slots = 0, max_slots = 0;
  std::string slots_word, max_slots_word;  // as written, once seen

  void set(const std::string& path, int line, const std::string& word) {
    const auto eq = word.find('=');
    const std::string key = word.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : word.substr(eq + 1);
    const bool is_slots = key == "slots" || key == "count" || key == "cpu";
    if (!is_slots && key != "max_slots" && key != "max-slots")
      fail(path, line, "unknown setting '" + excerpt(word) + "' (allowed: slots=N, max_slots=N)");
    std::string& seen = is_slots ? slots_word : max_slots_word;
    if (!seen.empty())
      fail(path, line,
           "'" + excerpt(word) + "' sets " + (is_slots ? "slots" : "max_slots") +
               " a second time (already '" + excerpt(seen) + "')");
    seen = word;
    if (eq == std::string::npos || !parse_int(value, 1, 1000000, is_slots ? slots : max_slots))
      fail(path, line,
           excerpt(key) + " must be a whole number from 1 to 1000000, as in " + excerpt(key) +
               "=4, not '" + excerpt(word) + "'");
  }
};

// One line without its comment: "[user@]host [slots=N] [max_slots=N]"; false for a blank line.
bool read_plain_line(const std::string& path, int line, std::string text, HostSpec& spec) {
  if (!text.empty() && text.back() == '\r') text.pop_back();  // CRLF line ends
  if (const auto hash = text.find('#'); hash != std::string::npos) text.erase(hash);
  for (char& c : text)
    if (c == '\t') c = ' ';  // tabs separate words like spaces
  if (std::string problem = untrusted::control_character_problem(text); !problem.empty())
    fail(path, line, "the line is not plain text: " + problem);
  std::istringstream words(text);
  std::string word;
  if (!(words >> word)) return false;
  spec.line = line;
  if (const auto at = word.find('@'); at != std::string::npos) {  // Open MPI accepts user@host
    spec.user = word.substr(0, at);
    word.erase(0, at + 1);
    if (spec.user.empty()) fail(path, line, "empty user name before '@'");
    check_form(path, line, "user", spec.user, untrusted::user_name_problem(spec.user));
  }
  check_host_name(path, line, word);
  spec.name = spec.address = word;
  PlainSlots slots;
  while (words >> word) slots.set(path, line, word);
  spec.slots = slots.slots_word.empty() ? slots.max_slots : slots.slots;
  if (slots.max_slots > 0 && spec.slots > slots.max_slots)
    fail(path, line,
         "slots=" + std::to_string(spec.slots) +
             " exceeds max_slots=" + std::to_string(slots.max_slots));
  return true;
}

std::vector<HostSpec> read_plain(const std::string& text, const std::string& path) {
  std::vector<HostSpec> hosts;
  std::map<std::string, int> first_line;
  std::istringstream lines(text);
  std::string line_text;
  int line = 0;
  while (std::getline(lines, line_text)) {
    HostSpec spec;
    if (!read_plain_line(path, ++line, line_text, spec)) continue;
    if (const auto [it, fresh] = first_line.emplace(spec.name, line); !fresh)
      fail(path, line,
           "duplicate host '" + spec.name + "' (first on line " + std::to_string(it->second) + ")");
    hosts.push_back(spec);
  }
  if (hosts.empty()) fail(path, std::max(line, 1), "no hosts in file");
  return hosts;
}

// A file is YAML when it parses as a map, or when it fails to parse but clearly meant to be YAML
// (a top-level `hosts:` or `defaults:` key). Everything else is the plain format.
bool looks_like_yaml_keys(const std::string& text) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line))
    if (line.rfind("hosts:", 0) == 0 || line.rfind("defaults:", 0) == 0) return true;
  return false;
}

int line_at(const std::string& text, std::size_t offset) {
  return 1 +
         static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(offset), '\n'));
}

// yaml-cpp's own words for what a person can act on.
std::string yaml_problem(const YAML::Exception& e) {
  const std::string escape = "unknown escape character: ";
  if (e.msg.rfind(escape, 0) == 0)
    return "'\\" + e.msg.substr(escape.size()) +
           "' is not an escape sequence YAML knows (inside double quotes a backslash starts one, "
           "e.g. \\n or \\\\; write the value in single quotes to keep a backslash as it is)";
  return "YAML syntax error: " + e.msg;
}

// Where the second document of a YAML text starts (0-based line), or -1 when there is one document.
// At most two documents are parsed: yaml-cpp reads some malformed texts (", a") as endless empty
// documents.
class SecondDocument : public YAML::EventHandler {
 public:
  static int line_in(const std::string& text) {
    std::istringstream in(text);
    YAML::Parser parser(in);
    SecondDocument first, second;
    parser.HandleNextDocument(first);
    return parser.HandleNextDocument(second) ? second.line_ : -1;
  }

 private:
  void OnDocumentStart(const YAML::Mark& mark) override { line_ = mark.line; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}

  int line_ = -1;
};

// The first document of a YAML text; yaml: whether the text is a YAML host file (a map, or keys
// of one); second_line: where a second document starts (-1: none; only looked for in YAML).
YAML::Node load_yaml(const std::string& text, const std::string& path, bool& yaml,
                     int& second_line) {
  try {
    YAML::Node root = YAML::Load(text);
    yaml = root.IsMap() || looks_like_yaml_keys(text);
    if (yaml) second_line = SecondDocument::line_in(text);
    return root;
  } catch (const YAML::DeepRecursion& e) {
    fail(path, e.mark.line + 1,
         "values nested deeper than " + std::to_string(e.depth()) +
             " levels; a host file is a map with a list of hosts, each a map of settings");
  }
}

// The line where the second document of `text` starts: its "---", at or before `line` (0-based).
int second_document_line(const std::string& text, int line) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string each; std::getline(in, each);) lines.push_back(each);
  for (int i = std::min(line, static_cast<int>(lines.size()) - 1); i > 0; --i)
    if (lines[static_cast<std::size_t>(i)].rfind("---", 0) == 0) return i + 1;
  return std::max(line, 0) + 1;
}

}  // namespace

std::vector<HostSpec> read_hostfile(const std::string& path) {
  std::string text, problem;
  if (!untrusted::read_regular_file(path, untrusted::kMaxInputFileBytes, text, problem))
    throw HostFileError(untrusted::printable(path + ": cannot read host file: " + problem));
  return parse_hostfile_text(text, path);
}

std::vector<HostSpec> parse_hostfile_text(const std::string& text, const std::string& path) {
  if (const auto nul = text.find('\0'); nul != std::string::npos)
    fail(path, line_at(text, nul), "the file contains a NUL byte (a host file is text)");

  YamlReader yaml{path, dir_of(path)};
  YAML::Node root;
  bool is_yaml = false;
  int second_line = -1;
  try {
    root = load_yaml(text, path, is_yaml, second_line);
  } catch (const YAML::Exception& e) {
    if (looks_like_yaml_keys(text)) fail(path, e.mark.line + 1, yaml_problem(e));
    return read_plain(text, path);
  }
  if (!is_yaml) return read_plain(text, path);
  if (second_line >= 0)
    fail(path, second_document_line(text, second_line),
         "a second YAML document starts here; a host file is one document (remove the '---' line "
         "and merge the hosts into one list)");
  if (root.IsMap()) return yaml.read(root);
  fail(path, 1, "expected a YAML map with 'hosts'");
}

const HostSpec* find_host(const std::vector<HostSpec>& hosts, const std::string& name) {
  for (const auto& h : hosts)
    if (h.name == name) return &h;
  return nullptr;
}

HostSpec host_named(const std::vector<HostSpec>& hosts, const std::string& name) {
  if (const HostSpec* h = find_host(hosts, name)) return *h;
  HostSpec h;
  h.name = h.address = name;
  return h;
}

}  // namespace bspg::hosts
