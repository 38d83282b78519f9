// Host file reader and ssh_config_for: what a user sees (values, "path:line: message" errors).
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <sstream>
#include <string>

#include "hosts.h"

using bspg::hosts::HostFileError;
using bspg::hosts::HostSpec;
using bspg::hosts::read_hostfile;
using bspg::hosts::ssh_config_for;

namespace {

class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/bspg-hostfile-test-XXXXXX";
    const char* made = mkdtemp(pattern);
    if (made == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = made;
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }
  std::string write(const std::string& name, const std::string& text) const {
    const std::string file = path_ + "/" + name;
    std::ofstream(file) << text;
    return file;
  }

 private:
  std::string path_;
};

// The message of the HostFileError that reading `text` throws, or "" when it throws none.
std::string error_of(const std::string& text, std::string* file_out = nullptr) {
  TempDir dir;
  const std::string file = dir.write("hosts", text);
  if (file_out) *file_out = file;
  try {
    read_hostfile(file);
  } catch (const HostFileError& e) {
    std::string message = e.what();
    // Report relative to the file name, so expectations need not know the temporary folder.
    if (message.rfind(file, 0) == 0) message = "FILE" + message.substr(file.size());
    return message;
  }
  return "";
}

TEST(HostFile, YamlWithDefaultsInheritance) {
  TempDir dir;
  setenv("HOME", dir.path().c_str(), 1);
  const std::string file = dir.write("hosts.yaml",
                                     "# two labs\n"
                                     "defaults:\n"
                                     "  user: alice\n"
                                     "  port: 2222\n"
                                     "  identity: ~/.ssh/id_test\n"
                                     "  known_hosts: keys/known_hosts\n"
                                     "hosts:\n"
                                     "  - name: node1\n"
                                     "    address: 10.1.2.3\n"
                                     "    slots: 4\n"
                                     "    site: lab-a\n"
                                     "  - name: node2\n"
                                     "    user: bob\n"
                                     "    port: 22\n"
                                     "    identity: /keys/bob\n"
                                     "  - node3\n");
  const std::vector<HostSpec> hosts = read_hostfile(file);
  ASSERT_EQ(hosts.size(), 3u);
  EXPECT_EQ(hosts[0].name, "node1");
  EXPECT_EQ(hosts[0].address, "10.1.2.3");
  EXPECT_EQ(hosts[0].slots, 4);
  EXPECT_EQ(hosts[0].site, "lab-a");
  EXPECT_EQ(hosts[0].user, "alice");
  EXPECT_EQ(hosts[0].port, 2222);
  EXPECT_EQ(hosts[0].identity, dir.path() + "/.ssh/id_test");
  EXPECT_EQ(hosts[0].known_hosts, dir.path() + "/keys/known_hosts");  // relative to the host file
  EXPECT_EQ(hosts[0].line, 8);
  EXPECT_EQ(hosts[1].name, "node2");
  EXPECT_EQ(hosts[1].address, "node2");
  EXPECT_EQ(hosts[1].slots, 0);
  EXPECT_EQ(hosts[1].site, "");
  EXPECT_EQ(hosts[1].user, "bob");
  EXPECT_EQ(hosts[1].port, 22);
  EXPECT_EQ(hosts[1].identity, "/keys/bob");
  EXPECT_EQ(hosts[1].known_hosts, dir.path() + "/keys/known_hosts");
  EXPECT_EQ(hosts[1].line, 12);
  EXPECT_EQ(hosts[2].name, "node3");
  EXPECT_EQ(hosts[2].address, "node3");
  EXPECT_EQ(hosts[2].user, "alice");
  EXPECT_EQ(hosts[2].port, 2222);
  EXPECT_EQ(hosts[2].line, 16);
}

TEST(HostFile, YamlWithoutDefaults) {
  TempDir dir;
  const auto hosts =
      read_hostfile(dir.write("h.yaml", "hosts:\n- name: a\n- name: b\n  slots: 3\n"));
  ASSERT_EQ(hosts.size(), 2u);
  EXPECT_EQ(hosts[0].name, "a");
  EXPECT_EQ(hosts[0].user, "");
  EXPECT_EQ(hosts[0].port, 22);
  EXPECT_EQ(hosts[0].identity, "");
  EXPECT_EQ(hosts[0].known_hosts, "");
  EXPECT_EQ(hosts[1].slots, 3);
}

TEST(HostFile, OpenMpiPlainFormat) {
  TempDir dir;
  const std::string file = dir.write("hostfile",
                                     "# Open MPI style\n"
                                     "\n"
                                     "node1 slots=4   # the big one\n"
                                     "node2\n"
                                     "alice@node3 slots=2 max_slots=4\n"
                                     "  node4 max_slots=3\n");
  const auto hosts = read_hostfile(file);
  ASSERT_EQ(hosts.size(), 4u);
  EXPECT_EQ(hosts[0].name, "node1");
  EXPECT_EQ(hosts[0].address, "node1");
  EXPECT_EQ(hosts[0].slots, 4);
  EXPECT_EQ(hosts[0].line, 3);
  EXPECT_EQ(hosts[0].user, "");
  EXPECT_EQ(hosts[1].name, "node2");
  EXPECT_EQ(hosts[1].slots, 0);
  EXPECT_EQ(hosts[2].name, "node3");
  EXPECT_EQ(hosts[2].user, "alice");
  EXPECT_EQ(hosts[2].slots, 2);
  EXPECT_EQ(hosts[3].name, "node4");
  EXPECT_EQ(hosts[3].slots, 3);
  EXPECT_EQ(hosts[3].line, 6);
  EXPECT_EQ(hosts[3].port, 22);
}

TEST(HostFile, SingleHostPlainFileIsNotMistakenForYaml) {
  TempDir dir;
  const auto hosts = read_hostfile(dir.write("h", "localhost slots=2\n"));
  ASSERT_EQ(hosts.size(), 1u);
  EXPECT_EQ(hosts[0].name, "localhost");
  EXPECT_EQ(hosts[0].slots, 2);
}

TEST(HostFile, UnreadableFileSaysWhy) {
  try {
    read_hostfile("/nonexistent/bspg/hosts.yaml");
    FAIL() << "no error for a missing file";
  } catch (const HostFileError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/bspg/hosts.yaml"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("No such file"), std::string::npos) << e.what();
    // No line number: there is no line to point at.
    EXPECT_EQ(std::string(e.what()).find(":0:"), std::string::npos) << e.what();
  }
  TempDir dir;
  try {
    read_hostfile(dir.path());
    FAIL() << "no error for a directory";
  } catch (const HostFileError& e) {
    EXPECT_NE(std::string(e.what()).find("directory"), std::string::npos) << e.what();
  }
}

struct ErrorCase {
  const char* what;
  const char* text;
  const char* expected;  // "FILE:<line>: <start of message>"
};

class HostFileErrors : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(HostFileErrors, NamesLineAndCause) {
  const ErrorCase& c = GetParam();
  const std::string message = error_of(c.text);
  EXPECT_EQ(message.substr(0, std::string(c.expected).size()), c.expected)
      << c.what << ": got '" << message << "'";
}

const ErrorCase kErrors[] = {
    {"unknown host key", "hosts:\n  - name: a\n    slot: 2\n", "FILE:3: unknown key 'slot'"},
    {"unknown top key", "hosts:\n  - name: a\nmachines: 3\n",
     "FILE:3: unknown key 'machines' (allowed: defaults, hosts)"},
    {"unknown defaults key", "defaults:\n  usr: bob\nhosts:\n  - a\n",
     "FILE:2: unknown key 'usr' in defaults"},
    {"name in defaults", "defaults:\n  name: x\nhosts:\n  - a\n",
     "FILE:2: unknown key 'name' in defaults"},
    {"slots zero", "hosts:\n  - name: a\n  - name: b\n    slots: 0\n",
     "FILE:4: slots must be a whole number from 1 to 1000000, not '0'"},
    {"slots negative", "hosts:\n  - name: a\n    slots: -2\n",
     "FILE:3: slots must be a whole number from 1 to 1000000, not '-2'"},
    {"slots fraction", "hosts:\n  - name: a\n    slots: 2.5\n",
     "FILE:3: slots must be a whole number from 1 to 1000000, not '2.5'"},
    {"slots word", "hosts:\n  - name: a\n    slots: many\n",
     "FILE:3: slots must be a whole number"},
    {"defaults slots", "defaults:\n  slots: 0\nhosts:\n  - a\n",
     "FILE:2: slots must be a whole number"},
    {"port too big", "hosts:\n  - name: a\n    port: 70000\n",
     "FILE:3: port must be a whole number from 1 to 65535, not '70000'"},
    {"port zero", "defaults:\n  port: 0\nhosts:\n  - a\n",
     "FILE:2: port must be a whole number from 1 to 65535"},
    {"port word", "hosts:\n  - name: a\n    port: ssh\n", "FILE:3: port must be a whole number"},
    {"missing name", "hosts:\n  - name: a\n  - address: 10.0.0.1\n    slots: 2\n",
     "FILE:3: host without 'name'"},
    {"duplicate name", "hosts:\n  - name: a\n  - name: b\n  - name: a\n",
     "FILE:4: duplicate host name 'a' (first on line 2)"},
    {"empty list", "defaults:\n  user: x\nhosts: []\n", "FILE:3: 'hosts' must be a non-empty list"},
    {"null list", "hosts:\n", "FILE:1: 'hosts' must be a non-empty list"},
    {"hosts is a map", "hosts:\n  name: a\n", "FILE:1: 'hosts' must be a non-empty list"},
    {"no hosts key", "defaults:\n  user: a\n", "FILE:1: no 'hosts' list"},
    {"host is a list", "hosts:\n  - [a, b]\n", "FILE:2: each host must be a map"},
    {"name with space", "hosts:\n  - name: a b\n", "FILE:2: invalid host name 'a b'"},
    {"empty value", "hosts:\n  - name: a\n    user:\n", "FILE:3: 'user' needs a value"},
    {"list value", "hosts:\n  - name: a\n    site: [x, y]\n",
     "FILE:3: 'site' must be a single value"},
    {"duplicate key", "hosts:\n  - name: a\n    slots: 2\n    slots: 3\n",
     "FILE:4: duplicate key 'slots'"},
    {"yaml syntax", "hosts:\n  - name: a\n    slots: [1,\n", "FILE:4: YAML syntax error"},
    {"defaults not a map", "defaults: alice\nhosts:\n  - a\n", "FILE:1: 'defaults' must be a map"},
    {"plain zero slots", "node1\nnode2 slots=0\n",
     "FILE:2: slots must be a whole number from 1 to 1000000, as in slots=4, not 'slots=0'"},
    {"plain word slots", "node1 slots=x\n", "FILE:1: slots must be a whole number"},
    {"plain missing value", "node1 slots\n", "FILE:1: slots must be a whole number"},
    {"plain unknown", "# c\nnode1 cores=3\n", "FILE:2: unknown setting 'cores=3'"},
    {"plain over max", "node1 slots=5 max_slots=2\n", "FILE:1: slots=5 exceeds max_slots=2"},
    {"plain duplicate", "node1\n\nnode1 slots=2\n",
     "FILE:3: duplicate host 'node1' (first on line 1)"},
    {"plain bad name", "no*de slots=2\n", "FILE:1: invalid host name 'no*de'"},
    {"empty file", "", "FILE:1: no hosts in file"},
    {"comments only", "# nothing\n# here\n", "FILE:2: no hosts in file"},
    // Untrusted values: nothing may reach the ssh configuration, a command line or the terminal
    // that is not of its form (messages show the value escaped).
    {"address with a newline",
     "hosts:\n  - name: a\n    address: \"127.0.0.1\\nProxyCommand=/tmp/x.sh\"\n",
     "FILE:3: invalid address '127.0.0.1\\nProxyCommand=/tmp/x.sh': it contains a newline (\\n) at "
     "character 10"},
    {"address that is an option", "hosts:\n  - name: a\n    address: -oProxyCommand=/tmp/x.sh\n",
     "FILE:3: invalid address '-oProxyCommand=/tmp/x.sh': it starts with '-' (ssh and mpirun would "
     "read it as an "
     "option) (expected a host name, an IPv4 address or an IPv6 address)"},
    {"address not IPv4", "hosts:\n  - name: a\n    address: 127.0.0.999\n",
     "FILE:3: invalid address '127.0.0.999': it is not an IPv4 address"},
    {"address with a space", "hosts:\n  - name: a\n    address: 10.0.0.1 -p 23\n",
     "FILE:3: invalid address '10.0.0.1 -p 23': ' ' is not allowed"},
    {"address with an IPv6 zone", "hosts:\n  - name: a\n    address: fe80::1%eth0\n",
     "FILE:3: invalid address 'fe80::1%eth0': IPv6 addresses with a zone"},
    {"user with a newline", "hosts:\n  - name: a\n    user: \"root\\nProxyCommand=/tmp/x.sh\"\n",
     "FILE:3: invalid user 'root\\nProxyCommand=/tmp/x.sh': it contains a newline (\\n) at "
     "character 5"},
    {"user that is an option", "defaults:\n  user: -lroot\nhosts:\n  - a\n",
     "FILE:2: invalid user '-lroot': it starts with '-'"},
    {"identity with a newline",
     "hosts:\n  - name: a\n    identity: \"/k\\nProxyCommand=/tmp/x.sh\"\n",
     "FILE:3: invalid identity path '/k\\nProxyCommand=/tmp/x.sh': it contains a newline"},
    {"known_hosts with an escape", "hosts:\n  - name: a\n    known_hosts: \"/k\\e[2J\"\n",
     "FILE:3: invalid known_hosts path '/k\\x1b[2J': it contains an escape character (\\x1b) at "
     "character 3"},
    {"site with a tab", "hosts:\n  - name: a\n    site: \"lab\\tb\"\n",
     "FILE:3: invalid site 'lab\\tb': it contains a tab"},
    {"name with an escape", "hosts:\n  - name: \"a\\e]0;owned\\ab\"\n",
     "FILE:2: invalid host name 'a\\x1b]0;owned\\x07b': it contains an escape character"},
    {"name with a colon", "hosts:\n  - name: emu1:2\n",
     "FILE:2: invalid host name 'emu1:2': ':' is not allowed (only letters, digits, '-', '_' and "
     "dots are); to give "
     "emu1 2 slots, write 'emu1 slots=2'"},
    {"slots beyond the limit", "hosts:\n  - name: a\n    slots: 2000000\n",
     "FILE:3: slots must be a whole number from 1 to 1000000, not '2000000'"},
    {"plain name with a colon", "# two slots?\nemu1:2\n",
     "FILE:2: invalid host name 'emu1:2': ':' is not allowed (only letters, digits, '-', '_' and "
     "dots are); to give "
     "emu1 2 slots, write 'emu1 slots=2'"},
    {"plain IPv6 name", "fe80::1 slots=2\n",
     "FILE:1: invalid host name 'fe80::1': ':' is not allowed (only "
     "letters, digits, '-', '_' and dots are); an IPv6 address cannot be a host's name"},
    {"plain brackets", "[[[[ slots=2\n", "FILE:1: invalid host name '[[[[': '[' is not allowed"},
    {"plain user that is an option", "-oProxyCommand=x@node1\n",
     "FILE:1: invalid user '-oProxyCommand=x': it starts with '-'"},
    {"plain escape", "node1\x1b[2J slots=2\n",
     "FILE:1: the line is not plain text: it contains an escape character (\\x1b) at character 6"},
    {"plain slots twice", "emu1 slots=2 slots=3\n",
     "FILE:1: 'slots=3' sets slots a second time (already 'slots=2')"},
    {"plain slots and count", "emu1 count=2 slots=3\n",
     "FILE:1: 'slots=3' sets slots a second time (already 'count=2')"},
    {"plain max_slots twice", "emu1 max_slots=4 max-slots=5\n",
     "FILE:1: 'max-slots=5' sets max_slots a second time"},
    // YAML details.
    {"second document", "hosts:\n  - a\n---\nhosts:\n  - b\n",
     "FILE:3: a second YAML document starts here"},
    {"bad escape", "hosts:\n  - name: \"a\\1b\"\n",
     "FILE:2: '\\1' is not an escape sequence YAML knows"},
};

INSTANTIATE_TEST_SUITE_P(All, HostFileErrors, ::testing::ValuesIn(kErrors),
                         [](const ::testing::TestParamInfo<ErrorCase>& info) {
                           std::string name = info.param.what;
                           for (char& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

// What `ssh -G` (OpenSSH's own parser) makes of the generated config for one host.
std::map<std::string, std::string> ssh_effective(const std::string& config_file,
                                                 const std::string& host) {
  std::map<std::string, std::string> settings;
  const std::string command = "ssh -G -F '" + config_file + "' " + host + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return settings;
  char line[4096];
  while (std::fgets(line, sizeof line, pipe)) {
    std::string text(line);
    if (!text.empty() && text.back() == '\n') text.pop_back();
    const auto space = text.find(' ');
    if (space == std::string::npos) continue;
    const std::string key = text.substr(0, space);
    if (!settings.count(key)) settings[key] = text.substr(space + 1);
  }
  settings["_exit"] = std::to_string(pclose(pipe));
  return settings;
}

TEST(SshConfig, OpenSshReadsThePerHostSettings) {
  TempDir dir;
  std::vector<HostSpec> hosts(3);
  hosts[0].name = "node1";
  hosts[0].address = "10.1.2.3";
  hosts[0].user = "alice";
  hosts[0].port = 2222;
  hosts[0].identity = dir.path() + "/my keys/id_%test";
  hosts[0].known_hosts = dir.path() + "/known_hosts";
  hosts[1].name = "node2";
  hosts[1].address = "node2";
  hosts[1].user = "bob";
  hosts[2].name = "node3";
  hosts[2].address = "127.0.0.3";
  const std::string file = dir.write("ssh_config", ssh_config_for(hosts));

  auto node1 = ssh_effective(file, "node1");
  EXPECT_EQ(node1["_exit"], "0") << node1["_exit"];
  EXPECT_EQ(node1["hostname"], "10.1.2.3");
  EXPECT_EQ(node1["user"], "alice");
  EXPECT_EQ(node1["port"], "2222");
  // ssh -G shows file names before token expansion: "%%" is how the config says a literal '%'.
  EXPECT_EQ(node1["identityfile"], dir.path() + "/my keys/id_%%test");
  EXPECT_EQ(node1["identitiesonly"], "yes");
  EXPECT_EQ(node1["userknownhostsfile"], dir.path() + "/known_hosts");
  EXPECT_EQ(node1["stricthostkeychecking"], "true");
  EXPECT_EQ(node1["batchmode"], "yes");
  EXPECT_EQ(node1["connecttimeout"], "10");

  auto node2 = ssh_effective(file, "node2");
  EXPECT_EQ(node2["hostname"], "node2");
  EXPECT_EQ(node2["user"], "bob");
  EXPECT_EQ(node2["port"], "22");
  EXPECT_EQ(node2["stricthostkeychecking"], "true");

  auto node3 = ssh_effective(file, "node3");
  EXPECT_EQ(node3["hostname"], "127.0.0.3");
  EXPECT_EQ(node3["batchmode"], "yes");
}

TEST(HostFile, AcceptsTheFormsValuesMayTake) {
  TempDir dir;
  const auto yaml = read_hostfile(
      dir.write("h.yaml",
                "defaults:\n  user: svc.user_1$\nhosts:\n"
                "  - { name: v6, address: \"::1\" }\n"
                "  - { name: v6b, address: \"[fe80::1]\" }\n"
                "  - { name: node-1.lab_a.example.org, address: 10.1.2.3 }\n"
                "  - { name: n2, address: gw.example.org, identity: \"keys/my key\" }\n"));
  ASSERT_EQ(yaml.size(), 4u);
  EXPECT_EQ(yaml[0].user, "svc.user_1$");
  EXPECT_EQ(yaml[0].address, "::1");
  EXPECT_EQ(yaml[1].address, "fe80::1");  // brackets are how it may be written, not part of it
  EXPECT_EQ(yaml[2].name, "node-1.lab_a.example.org");
  EXPECT_EQ(yaml[3].identity, dir.path() + "/keys/my key");
  // Plain files written on Windows (CRLF) or with tabs between the words.
  const auto plain =
      read_hostfile(dir.write("plain", "node1\tslots=2\r\nalice@node2 \t max_slots=3\r\n"));
  ASSERT_EQ(plain.size(), 2u);
  EXPECT_EQ(plain[0].slots, 2);
  EXPECT_EQ(plain[1].name, "node2");
  EXPECT_EQ(plain[1].user, "alice");
  EXPECT_EQ(plain[1].slots, 3);
}

TEST(HostFile, RelativeKeyPathsAreAbsoluteEvenForARelativeHostFile) {
  TempDir dir;
  dir.write("hosts.yaml", "hosts:\n  - name: a\n    identity: id_key\n    known_hosts: ./kh\n");
  char cwd[4096];
  ASSERT_NE(getcwd(cwd, sizeof cwd), nullptr);
  ASSERT_EQ(chdir(dir.path().c_str()), 0);
  const auto hosts = read_hostfile("hosts.yaml");
  ASSERT_EQ(chdir(cwd), 0);
  ASSERT_EQ(hosts.size(), 1u);
  EXPECT_EQ(hosts[0].identity, dir.path() + "/id_key");
  EXPECT_EQ(hosts[0].known_hosts, dir.path() + "/./kh");
}

TEST(HostFile, NulByteIsNamedWithItsLine) {
  const std::string text("hosts:\n  - name: a\0b\n", 21);
  EXPECT_EQ(error_of(text), "FILE:2: the file contains a NUL byte (a host file is text)");
}

TEST(HostFile, DeepNestingSaysWhatAHostFileIs) {
  const std::string deep = "hosts: " + std::string(2000, '[') + std::string(2000, ']') + "\n";
  const std::string message = error_of(deep);
  EXPECT_EQ(message.rfind("FILE:1: values nested deeper than ", 0), 0u) << message;
  EXPECT_NE(message.find("a host file is a map with a list of hosts"), std::string::npos)
      << message;
}

// read_hostfile must come back at once, whatever the path is; a hang fails the test (and ends
// the process, since the reading thread cannot be interrupted).
std::string error_within_seconds(const std::string& path, int seconds) {
  auto reading = std::async(std::launch::async, [path]() -> std::string {
    try {
      read_hostfile(path);
    } catch (const HostFileError& e) {
      return e.what();
    }
    return "";
  });
  if (reading.wait_for(std::chrono::seconds(seconds)) != std::future_status::ready) {
    std::fprintf(stderr, "FAIL: read_hostfile(%s) did not return within %d s\n", path.c_str(),
                 seconds);
    std::fflush(stderr);
    std::_Exit(1);
  }
  return reading.get();
}

TEST(HostFile, RefusesWhatIsNotARegularFileAtOnce) {
  EXPECT_EQ(error_within_seconds("/dev/zero", 10),
            "/dev/zero: cannot read host file: it is a device, not a regular file");
  TempDir dir;
  const std::string fifo = dir.path() + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(error_within_seconds(fifo, 10),
            fifo + ": cannot read host file: it is a FIFO (named pipe), not a regular file");
  const std::string socket_path = dir.path() + "/socket";
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::snprintf(address.sun_path, sizeof address.sun_path, "%s", socket_path.c_str());
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  EXPECT_EQ(error_within_seconds(socket_path, 10),
            socket_path + ": cannot read host file: it is a socket, not a regular file");
  close(fd);
}

TEST(HostFile, RefusesAFileBeyond16MiBBeforeReadingIt) {
  TempDir dir;
  const std::string big = dir.path() + "/big.yaml";
  std::ofstream(big) << "hosts:\n  - a\n";
  ASSERT_EQ(truncate(big.c_str(), (16 << 20) + 1), 0);  // sparse: nothing is written
  EXPECT_EQ(error_within_seconds(big, 10),
            big + ": cannot read host file: it is 16777217 bytes, more than the 16 MiB allowed");
}

TEST(HostFile, HostsAreFoundByName) {
  std::vector<HostSpec> hosts(2);
  hosts[0].name = "emu1";
  hosts[1].name = "emu2";
  hosts[1].address = "127.0.55.2";
  hosts[1].slots = 3;
  ASSERT_NE(find_host(hosts, "emu2"), nullptr);
  EXPECT_EQ(find_host(hosts, "emu2")->address, "127.0.55.2");
  EXPECT_EQ(find_host(hosts, "emu3"), nullptr);
  EXPECT_EQ(host_named(hosts, "emu2").slots, 3);
  // A host the file does not list is reached by its name.
  const HostSpec other = host_named(hosts, "emu3");
  EXPECT_EQ(other.name, "emu3");
  EXPECT_EQ(other.address, "emu3");
}

TEST(SshConfig, QuotesValuesAsOpenSshReadsThem) {
  TempDir dir;
  std::vector<HostSpec> hosts(1);
  hosts[0].name = "odd";
  hosts[0].address = "127.0.0.9";
  hosts[0].identity = dir.path() + "/we\"ird 'key' #1 \\ x";
  hosts[0].known_hosts = dir.path() + "/known hosts";
  const std::string file = dir.write("ssh_config", ssh_config_for(hosts));
  auto odd = ssh_effective(file, "odd");
  EXPECT_EQ(odd["_exit"], "0") << odd["_exit"];
  EXPECT_EQ(odd["identityfile"], dir.path() + "/we\"ird 'key' #1 \\ x");
  EXPECT_EQ(odd["userknownhostsfile"], dir.path() + "/known hosts");
  EXPECT_EQ(odd["hostname"], "127.0.0.9");
}

TEST(SshConfig, RefusesAValueThatWouldStartAnotherSetting) {
  std::vector<HostSpec> hosts(1);
  hosts[0].name = "a";
  hosts[0].address = "127.0.0.1\nProxyCommand=/tmp/x.sh";
  EXPECT_THROW(ssh_config_for(hosts), std::invalid_argument);
  hosts[0].address = "127.0.0.1";
  hosts[0].name = "a b";
  EXPECT_THROW(ssh_config_for(hosts), std::invalid_argument);
}

TEST(SshConfig, ConfigFromAHostFileRoundTrips) {
  TempDir dir;
  const std::string hostfile =
      dir.write("hosts.yaml",
                "defaults:\n  user: carol\n  port: 2200\n  identity: id_key\n"
                "hosts:\n  - name: x1\n    address: 127.0.0.7\n  - name: x2\n    port: 22\n");
  const std::string file = dir.write("ssh_config", ssh_config_for(read_hostfile(hostfile)));
  auto x1 = ssh_effective(file, "x1");
  EXPECT_EQ(x1["hostname"], "127.0.0.7");
  EXPECT_EQ(x1["user"], "carol");
  EXPECT_EQ(x1["port"], "2200");
  EXPECT_EQ(x1["identityfile"], dir.path() + "/id_key");
  auto x2 = ssh_effective(file, "x2");
  EXPECT_EQ(x2["user"], "carol");
  EXPECT_EQ(x2["port"], "22");
}

}  // namespace

namespace {

// The examples shipped in hostfiles/ stay valid and mean what their comments say.
TEST(ShippedHostFiles, AreValid) {
  const std::string dir = BSPG_HOSTFILES_DIR;
  setenv("HOME", "/home/example", 1);
  const auto local = read_hostfile(dir + "/localhost.yaml");
  ASSERT_EQ(local.size(), 1u);
  EXPECT_EQ(local[0].name, "localhost");
  EXPECT_EQ(local[0].address, "127.0.0.1");

  const auto emulated = read_hostfile(dir + "/emulated-4.yaml");
  ASSERT_EQ(emulated.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(emulated[i].name, "emu" + std::to_string(i + 1));
    EXPECT_EQ(emulated[i].address, "127.0.200." + std::to_string(i + 1));
    EXPECT_EQ(emulated[i].user, "root");
    EXPECT_EQ(emulated[i].slots, 2);
    EXPECT_EQ(emulated[i].identity, "/tmp/bspg-emu/id_ed25519");
  }

  const auto sites = read_hostfile(dir + "/two-sites.yaml");
  ASSERT_EQ(sites.size(), 5u);
  EXPECT_EQ(sites[0].site, "lab-a");
  EXPECT_EQ(sites[0].user, "alice");
  EXPECT_EQ(sites[0].identity, "/home/example/.ssh/id_ed25519");
  EXPECT_EQ(sites[2].name, "b1");
  EXPECT_EQ(sites[2].site, "lab-b");
  EXPECT_EQ(sites[2].user, "asmith");
  EXPECT_EQ(sites[2].port, 2201);
  EXPECT_EQ(sites[2].known_hosts, "/home/example/.ssh/known_hosts.lab-b");
  EXPECT_EQ(sites[4].name, "workstation");
  EXPECT_EQ(sites[4].site, "");
  EXPECT_EQ(sites[4].slots, 4);

  const auto plain = read_hostfile(dir + "/openmpi-plain.txt");
  ASSERT_EQ(plain.size(), 3u);
  EXPECT_EQ(plain[1].slots, 4);
  EXPECT_EQ(plain[2].name, "node3");
  EXPECT_EQ(plain[2].user, "alice");
  EXPECT_EQ(plain[2].slots, 0);
}

}  // namespace
