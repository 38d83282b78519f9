// Job allocations: the text write_allocation produces and what read_allocation makes of RSL.
#include <gtest/gtest.h>

#include "rsl.h"

namespace rsl = bspg::rsl;

namespace {

rsl::Subjob make_subjob(const std::string& contact, int count, int index) {
  rsl::Subjob subjob;
  subjob.contact = contact;
  subjob.count = count;
  subjob.executable = "/home/alice/prog";
  subjob.arguments = {"-n", "1000"};
  subjob.directory = "/home/alice";
  subjob.label = "subjob " + std::to_string(index);
  subjob.environment = {{"BSPG_SUBJOB", std::to_string(index)}};
  return subjob;
}

TEST(RslAllocation, WrittenTextIsTheDocumentedLayout) {
  rsl::Subjob site = make_subjob("lab-b", 4, 1);
  site.hosts = {rsl::hosts_entry("b1", 2), rsl::hosts_entry("b2", 2)};
  const std::string text = rsl::write_allocation({make_subjob("node1", 4, 0), site});
  EXPECT_EQ(text,
            "+\n"
            "( &(resourceManagerContact=\"node1\")\n"
            "   (count=4)\n"
            "   (executable=\"/home/alice/prog\")\n"
            "   (arguments=\"-n\" 1000)\n"
            "   (directory=\"/home/alice\")\n"
            "   (label=\"subjob 0\")\n"
            "   (environment=(\"BSPG_SUBJOB\" 0))\n"
            ")\n"
            "( &(resourceManagerContact=\"lab-b\")\n"
            "   (count=4)\n"
            "   (executable=\"/home/alice/prog\")\n"
            "   (arguments=\"-n\" 1000)\n"
            "   (directory=\"/home/alice\")\n"
            "   (label=\"subjob 1\")\n"
            "   (environment=(\"BSPG_SUBJOB\" 1))\n"
            "   (hosts=(\"b1:2\" \"b2:2\"))\n"
            ")\n");
}

TEST(RslAllocation, OptionalAttributesAreLeftOutWhenEmpty) {
  rsl::Subjob bare;
  bare.contact = "n1";
  bare.count = 1;
  bare.executable = "prog";
  const std::string text = rsl::write_allocation({bare});
  EXPECT_EQ(text,
            "+\n( &(resourceManagerContact=\"n1\")\n   (count=1)\n   (executable=\"prog\")\n)\n");
  EXPECT_EQ(rsl::read_allocation(text), std::vector<rsl::Subjob>{bare});
}

TEST(RslAllocation, ReadsAHandWrittenFile) {
  const std::string path = std::string(RSL_TEST_DATA_DIR) + "/two_sites.rsl";
  const std::vector<rsl::Subjob> subjobs =
      rsl::read_allocation_file(path, {{"BSPG_BIN", "/opt/bspg/bin"}});
  ASSERT_EQ(subjobs.size(), 2u);
  EXPECT_EQ(subjobs[0].contact, "node1");
  EXPECT_EQ(subjobs[0].count, 2);
  EXPECT_EQ(subjobs[0].executable, "/opt/bspg/bin/prog");
  EXPECT_EQ(subjobs[0].arguments, (std::vector<std::string>{"-n", "1000", "output file.txt"}));
  EXPECT_EQ(subjobs[0].directory, "/tmp/run");
  EXPECT_EQ(subjobs[0].label, "subjob 0");
  EXPECT_EQ(subjobs[0].environment, (std::vector<std::pair<std::string, std::string>>{
                                        {"BSPG_SUBJOB", "0"}, {"OMP_NUM_THREADS", "1"}}));
  EXPECT_TRUE(subjobs[0].hosts.empty());
  EXPECT_EQ(subjobs[1].contact, "lab-b");
  EXPECT_EQ(subjobs[1].count, 4);
  EXPECT_EQ(subjobs[1].directory, "");
  EXPECT_EQ(subjobs[1].hosts, (std::vector<std::string>{"b1:3", "b2:1"}));
  const std::vector<rsl::HostSlots> slots = rsl::host_slots(subjobs[1]);
  ASSERT_EQ(slots.size(), 2u);
  EXPECT_EQ(slots[0].host, "b1");
  EXPECT_EQ(slots[0].count, 3);
  EXPECT_EQ(slots[1].host, "b2");
  EXPECT_EQ(slots[1].count, 1);
  // Without the variable the file names where it is missing.
  try {
    rsl::read_allocation_file(path);
    FAIL() << "BSPG_BIN was not defined";
  } catch (const rsl::ParseError& error) {
    EXPECT_EQ(error.origin, path);
    EXPECT_EQ(error.line, 5);
    EXPECT_EQ(error.column, 16);
  }
}

TEST(RslAllocation, SingleRequestIsOneSubjob) {
  const std::vector<rsl::Subjob> subjobs = rsl::read_allocation(
      "&(resourceManagerContact=localhost)(count=8)(executable=./prog)(arguments=a)");
  ASSERT_EQ(subjobs.size(), 1u);
  EXPECT_EQ(subjobs[0].contact, "localhost");
  EXPECT_EQ(subjobs[0].count, 8);
  EXPECT_EQ(subjobs[0].executable, "./prog");
  EXPECT_EQ(subjobs[0].arguments, std::vector<std::string>{"a"});
  EXPECT_TRUE(subjobs[0].label.empty());
}

TEST(RslAllocation, ListAttributesTakeFlatValuesOrOneSequence) {
  const auto flat = rsl::read_allocation(
      "&(resourceManagerContact=s)(count=4)(executable=x)(arguments=a 'b c')(hosts=h1:1 h2:3)");
  const auto grouped = rsl::read_allocation(
      "&(resourceManagerContact=s)(count=4)(executable=x)(arguments=(a 'b c'))(hosts=(h1:1 "
      "h2:3))");
  EXPECT_EQ(flat, grouped);
  EXPECT_EQ(flat[0].arguments, (std::vector<std::string>{"a", "b c"}));
  EXPECT_EQ(flat[0].hosts, (std::vector<std::string>{"h1:1", "h2:3"}));
}

TEST(RslAllocation, HostNamesMayContainColons) {
  rsl::Subjob subjob = make_subjob("site", 3, 0);
  subjob.hosts = {rsl::hosts_entry("fe80::1", 3)};
  const auto slots = rsl::host_slots(subjob);
  ASSERT_EQ(slots.size(), 1u);
  EXPECT_EQ(slots[0].host, "fe80::1");
  EXPECT_EQ(slots[0].count, 3);
  EXPECT_EQ(rsl::read_allocation(rsl::write_allocation({subjob})),
            std::vector<rsl::Subjob>{subjob});
}

TEST(RslAllocation, PlacementIsTheHostsOrElseTheContact) {
  rsl::Subjob single = make_subjob("n1", 3, 0);
  const auto on_contact = rsl::placement(single);
  ASSERT_EQ(on_contact.size(), 1u);
  EXPECT_EQ(on_contact[0].host, "n1");
  EXPECT_EQ(on_contact[0].count, 3);
  rsl::Subjob site = make_subjob("site", 4, 0);
  site.hosts = {rsl::hosts_entry("h1", 1), rsl::hosts_entry("h2", 3)};
  const auto spread = rsl::placement(site);
  ASSERT_EQ(spread.size(), 2u);
  EXPECT_EQ(spread[1].host, "h2");
  EXPECT_EQ(spread[1].count, 3);
  site.hosts = {"h1"};
  EXPECT_THROW(rsl::placement(site), std::invalid_argument);
}

TEST(RslAllocation, WriterRefusesWhatTheReaderWouldRefuse) {
  EXPECT_THROW(rsl::write_allocation({}), std::invalid_argument);
  rsl::Subjob good = make_subjob("n1", 2, 0);
  rsl::Subjob bad = good;
  bad.contact.clear();
  EXPECT_THROW(rsl::write_allocation({good, bad}), std::invalid_argument);
  bad = good;
  bad.count = 0;
  EXPECT_THROW(rsl::write_allocation({bad}), std::invalid_argument);
  bad = good;
  bad.executable.clear();
  EXPECT_THROW(rsl::write_allocation({bad}), std::invalid_argument);
  bad = good;
  bad.environment = {{"", "x"}};
  EXPECT_THROW(rsl::write_allocation({bad}), std::invalid_argument);
  bad = good;
  bad.hosts = {"h1:1"};  // one process placed, count is 2
  EXPECT_THROW(rsl::write_allocation({bad}), std::invalid_argument);
  bad.hosts = {"h1:x", "h2:1"};
  try {
    rsl::write_allocation({good, bad});
    FAIL() << "malformed hosts entry accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_EQ(std::string(error.what()),
              "write_allocation: subjob 1: hosts entry 'h1:x' is not HOST:N with a positive "
              "process count N");
  }
}

TEST(RslAllocation, DollarSignsAreNeverReadAsVariables) {
  rsl::Subjob subjob = make_subjob("n1", 1, 0);
  subjob.arguments = {"$(HOME)", "$", "a$b", "$(", "cost: $5"};
  subjob.executable = "$(BIN)/prog";
  const std::string text = rsl::write_allocation({subjob});
  EXPECT_NE(text.find("(executable=\"$(BIN)/prog\")"), std::string::npos) << text;
  const auto back = rsl::read_allocation(text, "<rsl>", {{"HOME", "/root"}, {"BIN", "/bin"}});
  EXPECT_EQ(back, std::vector<rsl::Subjob>{subjob});
}

}  // namespace

namespace {

TEST(RslAllocation, KnowsWhereEachValueStands) {
  const std::string text =
      "+\n"
      "( &(resourceManagerContact=lab)\n"
      "   (count=3)(executable=\"/p\")(arguments=a \"b c\")\n"
      "   (directory=/d)(label=x)(environment=(A 1)(B 2))(hosts=(h1:2 h2:1)) )\n";
  const std::vector<rsl::Subjob> subjobs = rsl::read_allocation(text);
  ASSERT_EQ(subjobs.size(), 1u);
  const auto& at = subjobs[0].positions;
  const auto is = [](const rsl::Position& p, int line, int column) {
    return p.line == line && p.column == column;
  };
  EXPECT_TRUE(is(at.clause, 2, 3));
  EXPECT_TRUE(is(at.contact, 2, 28));
  EXPECT_TRUE(is(at.count, 3, 11));
  EXPECT_TRUE(is(at.executable, 3, 25));
  ASSERT_EQ(at.arguments.size(), 2u);
  EXPECT_TRUE(is(at.arguments[0], 3, 41));
  EXPECT_TRUE(is(at.arguments[1], 3, 43));
  EXPECT_TRUE(is(at.directory, 4, 15));
  EXPECT_TRUE(is(at.label, 4, 25));
  ASSERT_EQ(at.environment.size(), 2u);
  EXPECT_TRUE(is(at.environment[1], 4, 45));
  ASSERT_EQ(at.hosts.size(), 2u);
  EXPECT_TRUE(is(at.hosts[1], 4, 64));
  // Positions are not part of what a subjob is.
  rsl::Subjob moved = subjobs[0];
  moved.positions = {};
  EXPECT_EQ(moved, subjobs[0]);
}

}  // namespace
