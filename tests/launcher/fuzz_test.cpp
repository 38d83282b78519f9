// fuzz_test.cpp - random mutations of valid host files (YAML and plain) and RSL allocations.
//
// Every mutated file is either read or refused with a located error ("path:line: ..." or
// "file:line:column: ..."), never a crash, a hang or another exception; nothing accepted holds a
// control character, or a leading '-' where ssh or mpirun would read it, and the ssh
// configuration and mpirun command line made from it have the expected shape.
//
// Each test runs for BSPG_FUZZ_SECONDS (default 3) from the seed BSPG_FUZZ_SEED (default: a new
// one, printed at the start and with every failure): BSPG_FUZZ_SEED=N replays a failing run.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "hosts.h"
#include "mpistart.h"
#include "rsl.h"
#include "subjob_checks.h"
#include "untrusted.h"

using namespace bspg;

namespace {

double fuzz_seconds() {
  const char* text = std::getenv("BSPG_FUZZ_SECONDS");
  return text && *text ? std::atof(text) : 3.0;
}

unsigned long fuzz_seed() {
  if (const char* text = std::getenv("BSPG_FUZZ_SEED"); text && *text)
    return std::strtoul(text, nullptr, 10);
  return std::random_device{}();
}

// Pieces that often break readers or smuggle something through.
const std::vector<std::string> kTokens = {"\n",
                                          "\r",
                                          std::string(1, '\0'),
                                          "\x1b[2J",
                                          "\t",
                                          "-",
                                          "-oProxyCommand=/tmp/x.sh",
                                          ":",
                                          "::1",
                                          "[",
                                          "]",
                                          "{",
                                          "}",
                                          "\"",
                                          "'",
                                          "\\",
                                          "\\n",
                                          "\\e",
                                          "\\0",
                                          "\\x1b",
                                          "\\1",
                                          "%",
                                          "%h",
                                          "#",
                                          "---\n",
                                          "...\n",
                                          "*",
                                          "&a ",
                                          "*a",
                                          "!!str ",
                                          "!!binary ",
                                          "slots=",
                                          "slots: ",
                                          "count=",
                                          "max_slots=",
                                          "2147483647",
                                          "-1",
                                          "0",
                                          "99999999999",
                                          "1e3",
                                          "name: ",
                                          "address: ",
                                          "user: ",
                                          "site: ",
                                          "identity: ",
                                          "known_hosts: ",
                                          "port: ",
                                          "- ",
                                          "  ",
                                          "@",
                                          "(count=",
                                          "(executable=",
                                          "(arguments=",
                                          "(directory=",
                                          "(environment=(",
                                          "(hosts=(",
                                          "$(",
                                          ")",
                                          "(",
                                          "+",
                                          "&",
                                          "|",
                                          "(* *)",
                                          "^",
                                          "\xc2\x9b",
                                          "\xff",
                                          "\xc3\xa9",
                                          "--version",
                                          "./prog",
                                          "/bin/sh",
                                          "emu1:2",
                                          "127.0.0.1",
                                          "[::1]",
                                          "lab-a",
                                          "~/k",
                                          "~nobody/k",
                                          "\"a\\nb\""};

class Mutator {
 public:
  explicit Mutator(unsigned long seed) : random_(seed) {}

  std::string mutate(std::string text) {
    const int rounds = 1 + pick(4);
    for (int i = 0; i < rounds; ++i) text = once(text);
    return text;
  }

 private:
  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(random_); }
  std::size_t at(const std::string& text) {
    return std::uniform_int_distribution<std::size_t>(0, text.size())(random_);
  }

  std::vector<std::string> lines(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  }
  std::string join(const std::vector<std::string>& lines) {
    std::string out;
    for (const auto& line : lines) out += line + "\n";
    return out;
  }

  std::string once(std::string text) {
    switch (pick(6)) {
      case 0:  // insert a token
        return text.insert(
            at(text), kTokens[static_cast<std::size_t>(pick(static_cast<int>(kTokens.size())))]);
      case 1:  // replace a byte
        if (!text.empty()) text[at(text) % text.size()] = static_cast<char>(pick(256));
        return text;
      case 2: {  // delete a range
        const std::size_t from = at(text);
        return text.erase(from, static_cast<std::size_t>(pick(12)));
      }
      case 3: {  // duplicate a line
        auto all = lines(text);
        if (all.empty()) return text;
        const auto i = static_cast<std::size_t>(pick(static_cast<int>(all.size())));
        all.insert(all.begin() + static_cast<long>(i), all[i]);
        return join(all);
      }
      case 4: {  // swap two lines
        auto all = lines(text);
        if (all.size() < 2) return text;
        std::swap(all[static_cast<std::size_t>(pick(static_cast<int>(all.size())))],
                  all[static_cast<std::size_t>(pick(static_cast<int>(all.size())))]);
        return join(all);
      }
      default: {  // replace a word (a run of letters, digits, '.', '_', '-', '/') by a token
        const std::size_t from = at(text);
        std::size_t to = from;
        while (to < text.size() && (std::isalnum(static_cast<unsigned char>(text[to])) ||
                                    std::string("._-/").find(text[to]) != std::string::npos))
          ++to;
        return text.replace(
            from, to - from,
            kTokens[static_cast<std::size_t>(pick(static_cast<int>(kTokens.size())))]);
      }
    }
  }

  std::mt19937_64 random_;
};

// The seed and the input, for a failure message.
std::string replay_note(unsigned long seed, const std::string& input) {
  return "\n  replay: BSPG_FUZZ_SEED=" + std::to_string(seed) +
         "\n  input: " + untrusted::printable(input);
}

bool has_control(const std::string& text) {
  return !untrusted::control_character_problem(text).empty();
}

// Runs `check` on mutations of the seeds for fuzz_seconds(); check returns "" or a failure.
void fuzz(const char* what, const std::vector<std::string>& seeds,
          const std::function<std::string(const std::string&)>& check) {
  const unsigned long seed = fuzz_seed();
  std::printf("%s: seed %lu (replay with BSPG_FUZZ_SEED=%lu)\n", what, seed, seed);
  std::fflush(stdout);
  Mutator mutator(seed);
  std::mt19937 choose(static_cast<unsigned>(seed));
  const auto until =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(fuzz_seconds());
  long cases = 0;
  while (std::chrono::steady_clock::now() < until) {
    const std::string input = mutator.mutate(seeds[choose() % seeds.size()]);
    ++cases;
    std::string failure;
    try {
      failure = check(input);
    } catch (const std::exception& e) {
      failure = std::string("unexpected exception: ") + e.what();
    } catch (...) {
      failure = "unexpected exception of unknown type";
    }
    if (!failure.empty()) {
      ADD_FAILURE() << what << ": " << untrusted::printable(failure) << replay_note(seed, input);
      return;
    }
  }
  std::printf("%s: %ld cases\n", what, cases);
}

// ---- Host files
// -------------------------------------------------------------------------------------

class HostFileCase {
 public:
  HostFileCase() {
    char pattern[] = "/tmp/bspg-fuzz-XXXXXX";
    if (mkdtemp(pattern) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = pattern;
    path_ = dir_ + "/hosts";
  }
  ~HostFileCase() {
    unlink(path_.c_str());
    rmdir(dir_.c_str());
  }

  // "" when the file is read well or refused with "path:line: ..."; else what is wrong.
  std::string check(const std::string& text) {
    std::ofstream(path_, std::ios::binary | std::ios::trunc) << text;
    std::vector<hosts::HostSpec> read;
    try {
      read = hosts::read_hostfile(path_);
    } catch (const hosts::HostFileError& e) {
      const std::string message = e.what();
      const std::string prefix = path_ + ":";
      if (message.rfind(prefix, 0) != 0) return "error without the file's name: " + message;
      const std::size_t digits = message.find_first_not_of("0123456789", prefix.size());
      if (digits == prefix.size() || digits == std::string::npos ||
          message.compare(digits, 2, ": ") != 0)
        return "error without a line: " + message;
      if (std::atoi(message.c_str() + prefix.size()) < 1) return "error at line 0: " + message;
      if (has_control(message)) return "control character in the message: " + message;
      return "";
    }
    return accepted(read);
  }

 private:
  static std::string accepted(const std::vector<hosts::HostSpec>& read) {
    if (read.empty()) return "no hosts, but no error";
    for (const auto& h : read) {
      const std::string problem =
          untrusted::host_name_problem(h.name) + untrusted::address_problem(h.address);
      if (!problem.empty())
        return "accepted host '" + h.name + "' at '" + h.address + "': " + problem;
      if (!h.user.empty() && !untrusted::user_name_problem(h.user).empty())
        return "accepted user " + h.user;
      if (!h.site.empty() && !untrusted::host_name_problem(h.site).empty())
        return "accepted site " + h.site;
      for (const auto* path : {&h.identity, &h.known_hosts})
        if (!path->empty() && !untrusted::absolute_path_problem(*path).empty())
          return "accepted path " + *path;
      if (h.slots < 0 || h.slots > 1000000 || h.port < 1 || h.port > 65535)
        return "accepted numbers out of range";
      if (h.line < 1) return "host without a line";
    }
    // The ssh configuration has exactly the lines bsprun writes: nothing was smuggled in.
    std::istringstream config(hosts::ssh_config_for(read));
    std::size_t blocks = 0;
    const std::vector<std::string> allowed = {"#",
                                              "Host ",
                                              "  HostName \"",
                                              "  User \"",
                                              "  Port ",
                                              "  IdentityFile \"",
                                              "  IdentitiesOnly yes",
                                              "  UserKnownHostsFile \"",
                                              "  StrictHostKeyChecking yes",
                                              "  BatchMode yes",
                                              "  ConnectTimeout 10",
                                              "Match all",
                                              "  Include "};
    for (std::string line; std::getline(config, line);) {
      if (line.empty()) continue;
      bool known = false;
      for (const auto& start : allowed) known = known || line.rfind(start, 0) == 0;
      if (!known || has_control(line)) return "unexpected ssh configuration line: " + line;
      if (line.rfind("Host ", 0) == 0) ++blocks;
    }
    if (blocks != read.size())
      return "ssh configuration has " + std::to_string(blocks) + " Host blocks";
    return "";
  }

  std::string dir_, path_;
};

std::string shipped(const std::string& name) {
  std::ifstream in(std::string(BSPG_HOSTFILES_DIR) + "/" + name, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST(Fuzz, YamlHostFiles) {
  HostFileCase file;
  fuzz("YAML host files",
       {shipped("two-sites.yaml"), shipped("emulated-4.yaml"), shipped("localhost.yaml"),
        "defaults: {user: alice, port: 2222, identity: keys/id, known_hosts: ~/kh}\n"
        "hosts:\n  - {name: a1, address: \"::1\", slots: 2, site: lab}\n  - b2\n  - name: c3\n    "
        "address: 10.0.0.3\n"},
       [&](const std::string& text) { return file.check(text); });
}

TEST(Fuzz, PlainHostFiles) {
  HostFileCase file;
  fuzz("plain host files",
       {shipped("openmpi-plain.txt"),
        "node1 slots=2\nalice@node2 max_slots=4\n# c\n10.0.0.3 count=1 # x\n"},
       [&](const std::string& text) { return file.check(text); });
}

TEST(Fuzz, RslAllocations) {
  launcher::HostFileLimits limits{"hosts.yaml", std::vector<hosts::HostSpec>(3)};
  for (int i = 0; i < 3; ++i) {
    limits.hosts[static_cast<std::size_t>(i)].name = "n" + std::to_string(i + 1);
    limits.hosts[static_cast<std::size_t>(i)].slots = 4 * i;  // n1: its cores (no limit)
    limits.hosts[static_cast<std::size_t>(i)].line = 2 + i;
  }
  std::ifstream in(std::string(BSPG_RSL_DATA_DIR) + "/two_sites.rsl", std::ios::binary);
  std::ostringstream two_sites;
  two_sites << in.rdbuf();
  const std::string written =
      "+\n( &(resourceManagerContact=\"n1\")\n   (count=2)\n   (executable=\"/home/a/prog\")\n"
      "   (arguments=\"-n\" 1000)\n   (directory=\"/home/a\")\n   (label=\"subjob 0\")\n"
      "   (environment=(\"BSPG_SUBJOB\" 0))\n)\n( &(resourceManagerContact=\"lab\")\n   (count=3)\n"
      "   (executable=\"./prog\")\n   (hosts=(\"n2:1\" \"n3:2\"))\n)\n";
  fuzz("RSL allocations", {two_sites.str(), written}, [&](const std::string& text) -> std::string {
    std::vector<rsl::Subjob> subjobs;
    try {
      subjobs = rsl::read_allocation(text, "job.rsl");
      launcher::check_subjobs(subjobs, "job.rsl",
                              text.find("n1") != std::string::npos ? &limits : nullptr);
    } catch (const rsl::ParseError& e) {
      if (e.line < 1 || e.column < 1) return std::string("error without a position: ") + e.what();
      if (has_control(e.what()))
        return std::string("control character in the message: ") + e.what();
      return "";
    }
    // Accepted: what reaches mpirun's command line has the expected shape.
    launcher::MpiSettings settings;  // Open MPI's: the grid path's command line is checked here
    settings.mpi = &launcher::mpi_of(launcher::MpiFamily::kOpenMpi4);
    std::vector<std::string> argv;
    try {
      argv = launcher::grid_mpirun_argv(settings, subjobs, "/tmp/cfg");
    } catch (const std::invalid_argument&) {
      return "";  // a placement Open MPI cannot express: bsprun says so and starts nothing
    }
    std::size_t separators = 0;
    for (std::size_t i = 0; i < argv.size(); ++i) {
      if (has_control(argv[i])) return "control character on mpirun's command line: " + argv[i];
      if (argv[i] == ":") ++separators;
    }
    if (separators + 1 != subjobs.size()) return "app contexts do not match the subjobs";
    for (const auto& sj : subjobs) {
      if (sj.executable.empty() || sj.executable[0] == '-')
        return "executable that is an option: " + sj.executable;
      if (sj.contact[0] == '-') return "contact that is an option: " + sj.contact;
    }
    // What bsprun would write for it reads back the same.
    if (rsl::read_allocation(rsl::write_allocation(subjobs)) != subjobs)
      return "does not round-trip";
    return "";
  });
}
