// What a host may answer to the probe, and what is refused (launcher/hosts/probe_answer.h): the
// messages are those bsprun shows in its probe table. Figures that emulated hosts cannot easily
// fake (memory, host names, cut-short answers) are checked here; loads, cores, hangs and the
// program check run against emulated hosts in test_probe.cpp.
#include <gtest/gtest.h>

#include <string>

#include "probe_answer.h"

using namespace bspg::hosts;

namespace {

// An answer as the probe command prints it, with `replace` put in place of one line.
std::string answer(const std::string& key, const std::string& line, bool program = false) {
  const std::pair<std::string, std::string> lines[] = {
      {"load", "load 0.50 0.25 0.10 1/100 12345"}, {"cores", "cores 8"},
      {"memory", "MemAvailable:   16384000 kB"},   {"hostname", "hostname node7"},
      {"program", program ? "program ok" : ""},    {"end", "bspg-probe-end"},
  };
  std::string text = "motd from a start-up file\nbspg-probe-v2\n";
  for (const auto& [name, normal] : lines) {
    const std::string& chosen = name == key ? line : normal;
    if (!chosen.empty()) text += chosen + "\n";
  }
  return text;
}

std::string problem(const std::string& key, const std::string& line, bool program = false) {
  ProbeResult result;
  return detail::read_probe_answer(answer(key, line, program), program, result);
}

TEST(ProbeAnswer, ReadsEveryFigureAfterTheMarker) {
  ProbeResult result;
  ASSERT_EQ(detail::read_probe_answer(answer("", "", true), true, result), "");
  EXPECT_DOUBLE_EQ(result.load1, 0.5);
  EXPECT_DOUBLE_EQ(result.load5, 0.25);
  EXPECT_DOUBLE_EQ(result.load15, 0.1);
  EXPECT_EQ(result.cores, 8);
  EXPECT_EQ(result.mem_available_kb, 16384000);
  EXPECT_EQ(result.hostname, "node7");
  EXPECT_EQ(result.program_status, ProgramStatus::kOk);
}

TEST(ProbeAnswer, BoundsAreInclusive) {
  EXPECT_EQ(problem("load", "load 4194304 0 0 1/1 1"), "");
  EXPECT_EQ(problem("cores", "cores 65536"), "");
  EXPECT_EQ(problem("memory", "MemAvailable: 4398046511104 kB"), "");
  EXPECT_EQ(problem("memory", "MemAvailable: 0 kB"), "");
  EXPECT_EQ(problem("memory", ""), "");  // kernels before 3.14 have no MemAvailable
}

TEST(ProbeAnswer, ImpossibleLoadsAreRefusedNamingTheValue) {
  for (const std::string load : {"-100", "-0.01", "1e308", "nan", "-inf", "inf", "4194304.5"})
    EXPECT_EQ(problem("load", "load 0.1 " + load + " 0.1 1/100 1"),
              "impossible load average '" + load + "' in /proc/loadavg");
  EXPECT_EQ(problem("load", "load high 0.1 0.1"),
            "unreadable load average 'high' in /proc/loadavg");
  EXPECT_EQ(problem("load", "load 0,5 0,5 0,5"), "unreadable load average '0,5' in /proc/loadavg");
  EXPECT_EQ(problem("load", "load 0.5"), "unreadable load average '0.5' in /proc/loadavg");
  EXPECT_EQ(problem("load", "load"), "no load average (/proc/loadavg) on the host");
}

TEST(ProbeAnswer, ImpossibleCoreCountsAndMemoryAreRefusedNamingTheValue) {
  for (const std::string cores : {"0", "-2", "65537", "99999999999999999999", "8.5", "eight"})
    EXPECT_EQ(problem("cores", "cores " + cores),
              "impossible core count '" + cores + "' (bspg-hostinfo --cores, nproc)");
  EXPECT_EQ(problem("cores", "cores"), "no core count (bspg-hostinfo, nproc) on the host");
  EXPECT_EQ(problem("memory", "MemAvailable: -5 kB"),
            "impossible free memory '-5 kB' (MemAvailable in /proc/meminfo)");
  EXPECT_EQ(problem("memory", "MemAvailable: 4398046511105 kB"),
            "impossible free memory '4398046511105 kB' (MemAvailable in /proc/meminfo)");
  EXPECT_EQ(problem("memory", "MemAvailable: 1e9 kB"),
            "impossible free memory '1e9 kB' (MemAvailable in /proc/meminfo)");
  EXPECT_EQ(problem("memory", "MemAvailable: 1000 MB"),
            "impossible free memory '1000 MB' (MemAvailable in /proc/meminfo)");
}

TEST(ProbeAnswer, HostNamesMustBePrintableAndShort) {
  EXPECT_EQ(problem("hostname", "hostname \x1b]0;owned\x07"),
            "impossible host name '\\x1b]0;owned\\x07' (uname -n)");
  EXPECT_EQ(problem("hostname", "hostname " + std::string(65, 'a')),
            "impossible host name '" + std::string(40, 'a') + "...' (uname -n)");
  EXPECT_EQ(problem("hostname", "hostname " + std::string(64, 'a')), "");
  EXPECT_EQ(problem("hostname", "hostname"), "no host name (uname -n) on the host");
  // Visible ASCII only: a name in UTF-8 is shown as it is, and refused.
  EXPECT_EQ(problem("hostname", "hostname h\xc3\xb6st"),
            "impossible host name 'h\xc3\xb6st' (uname -n)");
}

TEST(ProbeAnswer, IncompleteOrForeignAnswersAreRefused) {
  ProbeResult result;
  EXPECT_EQ(detail::read_probe_answer("Welcome!\x1b[2J\nno marker here\n", false, result),
            "unexpected answer: Welcome!\\x1b[2J");
  // A banner in UTF-8 is shown as the host wrote it; a stray byte is escaped.
  EXPECT_EQ(detail::read_probe_answer("Gr\xc3\xbc\xc3\x9f dich \xff\n", false, result),
            "unexpected answer: Gr\xc3\xbc\xc3\x9f dich \\xff");
  EXPECT_EQ(problem("end", ""), "answer cut short (no end marker)");
  EXPECT_EQ(problem("cores", "temperature 80"), "unexpected line 'temperature 80'");
  EXPECT_EQ(problem("program", "", true), "no answer about the program");
  EXPECT_EQ(problem("program", "program maybe", true), "unexpected program check 'maybe'");
  EXPECT_EQ(problem("program", "program ok", false), "unexpected line 'program ok'");
}

TEST(ProbeAnswer, ProgramStatuses) {
  const std::pair<std::string, ProgramStatus> cases[] = {
      {"ok", ProgramStatus::kOk},
      {"notfound", ProgramStatus::kNotFound},
      {"notregular", ProgramStatus::kNotRegularFile},
      {"notexec", ProgramStatus::kNotExecutable}};
  for (const auto& [word, status] : cases) {
    ProbeResult result;
    ASSERT_EQ(detail::read_probe_answer(answer("program", "program " + word, true), true, result),
              "");
    EXPECT_EQ(result.program_status, status) << word;
  }
  EXPECT_STREQ(describe(ProgramStatus::kNotRegularFile), "not a regular file");
}

TEST(ProbeCommand, OneLineForAnyLoginShellAndBoundedByTheTimeout) {
  ProbeOptions opt;
  opt.timeout_ms = 2500;
  opt.program = "/opt/it's a \"test\"/$(reboot)\n";
  const std::string command = detail::probe_command(opt);
  ASSERT_EQ(command.rfind("sh -c '", 0), 0u) << command;
  ASSERT_EQ(command.back(), '\'');
  const std::string script = command.substr(7, command.size() - 8);
  EXPECT_EQ(script.find('\''), std::string::npos)
      << script;  // nothing ends the login shell's quote
  EXPECT_EQ(script.find('\n'), std::string::npos) << script;  // one line, even for csh
  EXPECT_EQ(script.find("$(reboot)"), std::string::npos) << script;
  EXPECT_NE(script.find("timeout -s KILL 4"), std::string::npos) << script;  // ceil(2.5 s) + 1 s
}

}  // namespace

TEST(ProbeAnswer, RoundTripsToSitesAreReadInMilliseconds) {
  ProbeResult result;
  std::string text = answer("", "");
  text.insert(text.find("bspg-probe-end"), "rtt site2 1795749115.065000 1795749115.115250\n"
                                           "rtt site1 1795749115.2 1795749115.2001\n");
  ASSERT_EQ(detail::read_probe_answer(text, false, result), "");
  ASSERT_EQ(result.site_round_trips_ms.size(), 2u);
  EXPECT_EQ(result.site_round_trips_ms[0].first, "site2");
  EXPECT_NEAR(result.site_round_trips_ms[0].second, 50.25, 0.01);
  EXPECT_NEAR(result.site_round_trips_ms[1].second, 0.1, 0.01);
}

TEST(ProbeAnswer, ImpossibleRoundTripsAreRefused) {
  for (const std::string bad : {"rtt site2 5 4", "rtt site2 1 100", "rtt a;b 1 2", "rtt site2 1 x",
                                "rtt site2 -1 2", "rtt site2 1"})
    EXPECT_EQ(problem("end", bad + "\nbspg-probe-end"),
              "impossible round trip '" + bad.substr(4) + "'")
        << bad;
}

TEST(ProbeScript, TimesAConnectToEachSiteWhenAsked) {
  ProbeOptions opt;
  EXPECT_EQ(probe_script(opt).find("/dev/tcp"), std::string::npos);
  opt.round_trip_targets = {{"site1", "10.0.0.1", 22}, {"site2", "10.0.1.1", 2222}};
  const std::string script = probe_script(opt);
  EXPECT_NE(script.find("timeout 1 bash -c"), std::string::npos) << script;
  EXPECT_NE(script.find(" 2222 "), std::string::npos) << script;
  EXPECT_EQ(script.find('\''), std::string::npos) << script;   // guarded_command's quoting
  EXPECT_EQ(script.find("\\\\"), std::string::npos) << script;
}
