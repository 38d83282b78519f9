// Host file reader: YAML (yaml-cpp) or Open MPI plain format.
#include "hosts.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <pwd.h>
#include <set>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace bspg::hosts {
namespace {

[[noreturn]] void fail(const std::string& path, int line, const std::string& message) {
  throw HostFileError(path + ":" + std::to_string(line) + ": " + message);
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

// "~", "~/x", "~user/x" -> home directory; relative paths are taken relative to the host file's folder.
std::string expand_path(const std::string& value, const std::string& file_dir, const std::string& path,
                        int line) {
  std::string result = value;
  if (!value.empty() && value[0] == '~') {
    const auto slash = value.find('/');
    const std::string user = value.substr(1, slash == std::string::npos ? std::string::npos : slash - 1);
    const std::string home = home_of(user);
    if (home.empty()) fail(path, line, "cannot expand '" + value + "': no home directory for " +
                                           (user.empty() ? "the current user" : "user '" + user + "'"));
    result = home + (slash == std::string::npos ? "" : value.substr(slash));
  } else if (!value.empty() && value[0] != '/' && !file_dir.empty()) {
    result = file_dir + "/" + value;
  }
  return result;
}

// A strict decimal integer (no sign, no fraction, no hex), within [lo, hi].
bool parse_int(const std::string& text, long lo, long hi, int& out) {
  if (text.empty() || text.size() > 9) return false;
  long value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text[0] == '-' || text[0] == '+') return false;
  if (value < lo || value > hi) return false;
  out = static_cast<int>(value);
  return true;
}

// Host names end up in ssh config `Host` lines and in RSL: no spaces, wildcards or quotes.
bool valid_host_name(const std::string& name) {
  if (name.empty() || name[0] == '-') return false;
  for (unsigned char c : name)
    if (!(std::isalnum(c) || c == '.' || c == '-' || c == '_' || c == ':' || c == '[' || c == ']')) return false;
  return true;
}

std::string dir_of(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// ---- YAML ----------------------------------------------------------------------------------------

struct YamlReader {
  std::string path, file_dir;

  // `line` is the key's line: an empty value has no position of its own (yaml-cpp marks the next line).
  std::string scalar(const YAML::Node& value, const std::string& key, int line) const {
    if (value.IsNull()) fail(path, line, "'" + key + "' needs a value");
    if (!value.IsScalar()) fail(path, line, "'" + key + "' must be a single value, not a list or map");
    const std::string text = value.Scalar();
    if (text.empty()) fail(path, line, "'" + key + "' must not be empty");
    return text;
  }

  // Applies one key of a host (or of `defaults`) to spec; `line` is where the key is.
  void apply(HostSpec& spec, const std::string& key, const YAML::Node& value, bool in_defaults, int line) const {
    if (key == "name" && !in_defaults) {
      spec.name = scalar(value, key, line);
      if (!valid_host_name(spec.name))
        fail(path, line, "invalid host name '" + spec.name + "' (letters, digits, '.', '-', '_' only)");
    } else if (key == "address" && !in_defaults) {
      spec.address = scalar(value, key, line);
      if (spec.address.find_first_of(" \t\"'") != std::string::npos)
        fail(path, line, "invalid address '" + spec.address + "'");
    } else if (key == "slots") {
      const std::string text = scalar(value, key, line);
      if (!parse_int(text, 1, 1000000, spec.slots))
        fail(path, line, "slots must be a whole number of at least 1, not '" + text + "'");
    } else if (key == "port") {
      const std::string text = scalar(value, key, line);
      if (!parse_int(text, 1, 65535, spec.port))
        fail(path, line, "port must be a whole number from 1 to 65535, not '" + text + "'");
    } else if (key == "site") {
      spec.site = scalar(value, key, line);
    } else if (key == "user") {
      spec.user = scalar(value, key, line);
      if (spec.user.find_first_of(" \t@\"'") != std::string::npos) fail(path, line, "invalid user '" + spec.user + "'");
    } else if (key == "identity") {
      spec.identity = expand_path(scalar(value, key, line), file_dir, path, line);
    } else if (key == "known_hosts") {
      spec.known_hosts = expand_path(scalar(value, key, line), file_dir, path, line);
    } else {
      const std::string allowed = in_defaults ? "slots, site, user, port, identity, known_hosts"
                                              : "name, address, slots, site, user, port, identity, known_hosts";
      fail(path, line, "unknown key '" + key + "'" + (in_defaults ? " in defaults" : "") +
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
      if (!seen.insert(key).second) fail(path, line_of(item.first), "duplicate key '" + key + "'");
      visit(key, item.first, item.second);
    }
  }

  std::vector<HostSpec> read(const YAML::Node& root) const {
    HostSpec defaults;
    YAML::Node hosts_node;
    bool have_hosts = false;
    each_key(root, [&](const std::string& key, const YAML::Node& key_node, const YAML::Node& value) {
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
        fail(path, line_of(key_node), "unknown key '" + key + "' (allowed: defaults, hosts)");
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
        fail(path, spec.line, "duplicate host name '" + spec.name + "' (first on line " + std::to_string(it->second) + ")");
      hosts.push_back(spec);
    }
    return hosts;
  }
};

// ---- Open MPI plain --------------------------------------------------------------------------------

std::vector<HostSpec> read_plain(const std::string& text, const std::string& path) {
  std::vector<HostSpec> hosts;
  std::map<std::string, int> first_line;
  std::istringstream lines(text);
  std::string line_text;
  int line = 0;
  while (std::getline(lines, line_text)) {
    ++line;
    if (const auto hash = line_text.find('#'); hash != std::string::npos) line_text.erase(hash);
    std::istringstream words(line_text);
    std::string word;
    if (!(words >> word)) continue;
    HostSpec spec;
    spec.line = line;
    if (const auto at = word.find('@'); at != std::string::npos) {  // Open MPI accepts user@host
      spec.user = word.substr(0, at);
      word.erase(0, at + 1);
      if (spec.user.empty()) fail(path, line, "empty user name before '@'");
    }
    if (!valid_host_name(word)) fail(path, line, "invalid host name '" + word + "'");
    spec.name = spec.address = word;
    int max_slots = 0;
    bool have_slots = false;
    while (words >> word) {
      const auto eq = word.find('=');
      const std::string key = word.substr(0, eq);
      const std::string value = eq == std::string::npos ? "" : word.substr(eq + 1);
      int* target = nullptr;
      if (key == "slots" || key == "count" || key == "cpu") {
        target = &spec.slots;
        have_slots = true;
      } else if (key == "max_slots" || key == "max-slots") {
        target = &max_slots;
      } else {
        fail(path, line, "unknown setting '" + word + "' (allowed: slots=N, max_slots=N)");
      }
      if (eq == std::string::npos || !parse_int(value, 1, 1000000, *target))
        fail(path, line, key + " must be a whole number of at least 1, as in " + key + "=4, not '" + word + "'");
    }
    if (!have_slots) spec.slots = max_slots;
    if (max_slots > 0 && spec.slots > max_slots)
      fail(path, line, "slots=" + std::to_string(spec.slots) + " exceeds max_slots=" + std::to_string(max_slots));
    if (const auto [it, fresh] = first_line.emplace(spec.name, line); !fresh)
      fail(path, line, "duplicate host '" + spec.name + "' (first on line " + std::to_string(it->second) + ")");
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

}  // namespace

std::vector<HostSpec> read_hostfile(const std::string& path) {
  struct stat info {};
  if (stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode))
    throw HostFileError(path + ": cannot read host file: it is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw HostFileError(path + ": cannot read host file: " + std::strerror(errno));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) throw HostFileError(path + ": cannot read host file: " + std::strerror(errno));
  const std::string text = buffer.str();

  YamlReader yaml{path, dir_of(path)};
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    if (looks_like_yaml_keys(text)) fail(path, e.mark.line + 1, "YAML syntax error: " + e.msg);
    return read_plain(text, path);
  }
  if (root.IsMap()) return yaml.read(root);
  if (looks_like_yaml_keys(text)) fail(path, 1, "expected a YAML map with 'hosts'");
  return read_plain(text, path);
}

}  // namespace bspg::hosts
