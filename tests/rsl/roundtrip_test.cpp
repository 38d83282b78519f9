// Round trips: read_allocation(write_allocation(x)) == x and parse(write(t)) == t for hand-picked
// awkward values and for many random ones (fixed seed, so a failure repeats).
#include <gtest/gtest.h>

#include <cstdint>
#include <random>

#include "rsl.h"

namespace rsl = bspg::rsl;

namespace {

// Pieces that stress the quoting: RSL punctuation, both quotes, comment markers, variables,
// whitespace of every kind, UTF-8, stray high bytes and NUL.
const std::vector<std::string> kPieces = {
    "a",
    "Z",
    "0",
    "42",
    "-",
    "_",
    ".",
    "/",
    ":",
    "*",
    " ",
    "\t",
    "\n",
    "\r",
    "\"",
    "'",
    "\"\"",
    "''",
    "(",
    ")",
    "(*",
    "*)",
    "$",
    "$(X)",
    "$(",
    "#",
    "^",
    "^/",
    "=",
    "!=",
    "<=",
    ">",
    "&",
    "|",
    "+",
    "\\",
    "é",
    "日本",
    "\xff",
    "\x80",
    std::string(1, '\0'),
    "\x01",
    "~",
    ",",
    "@",
    "%",
};

class Random {
 public:
  explicit Random(std::uint32_t seed) : engine_(seed) {}

  int below(int n) { return static_cast<int>(engine_() % static_cast<std::uint32_t>(n)); }
  bool chance(int percent) { return below(100) < percent; }

  std::string string(int max_pieces) {
    std::string text;
    const int pieces = below(max_pieces + 1);
    for (int i = 0; i < pieces; ++i) text += kPieces[below(static_cast<int>(kPieces.size()))];
    return text;
  }
  std::string non_empty(int max_pieces) {
    std::string text;
    while (text.empty()) text = string(max_pieces);
    return text;
  }

 private:
  std::mt19937 engine_;
};

rsl::Subjob random_subjob(Random& random) {
  rsl::Subjob subjob;
  subjob.contact = random.non_empty(4);
  subjob.count = 1 + random.below(64);
  subjob.executable = random.non_empty(6);
  for (int i = random.below(6); i > 0; --i) subjob.arguments.push_back(random.string(5));
  if (random.chance(70)) subjob.directory = random.string(5);
  if (random.chance(70)) subjob.label = random.string(4);
  for (int i = random.below(4); i > 0; --i) {
    subjob.environment.emplace_back(random.non_empty(3), random.string(4));
  }
  if (random.chance(40)) {
    // Split count over 1..count hosts.
    int left = subjob.count;
    while (left > 0) {
      const int here = random.chance(30) ? left : 1 + random.below(left);
      subjob.hosts.push_back(rsl::hosts_entry(random.non_empty(3), here));
      left -= here;
    }
  }
  return subjob;
}

std::string random_attribute(Random& random) {
  static const std::string kChars = "abcXYZ019_-./:@%,~";
  std::string name;
  for (int i = 1 + random.below(10); i > 0; --i) {
    name += kChars[random.below(static_cast<int>(kChars.size()))];
  }
  return name;
}

rsl::Value random_simple_value(Random& random) {
  return random.chance(75) ? rsl::Value::literal(random.string(4))
                           : rsl::Value::variable(random.string(2));
}

rsl::Value random_value(Random& random, int depth) {
  const int pick = random.below(depth > 0 ? 4 : 3);
  if (pick == 0 || pick == 1) return random_simple_value(random);
  if (pick == 2) {
    std::vector<rsl::Value> items;
    for (int i = 2 + random.below(3); i > 0; --i) items.push_back(random_simple_value(random));
    return rsl::Value::concatenation(std::move(items));
  }
  std::vector<rsl::Value> items;
  for (int i = random.below(4); i > 0; --i) items.push_back(random_value(random, depth - 1));
  return rsl::Value::sequence(std::move(items));
}

rsl::Spec random_spec(Random& random, int depth) {
  static const char* const kOps[] = {"=", "!=", "<", "<=", ">", ">="};
  rsl::Spec spec;
  spec.kind = static_cast<rsl::Spec::Kind>(random.below(3));
  const int relations = random.below(4);
  const int children = depth > 0 ? random.below(3) : 0;
  for (int i = 0; i < std::max(relations, children == 0 ? 1 : 0); ++i) {
    rsl::Relation relation;
    relation.attribute = random_attribute(random);
    relation.op = kOps[random.below(6)];
    for (int v = 1 + random.below(3); v > 0; --v) {
      relation.values.push_back(random_value(random, 3));
    }
    spec.relations.push_back(std::move(relation));
  }
  for (int i = 0; i < children; ++i) spec.children.push_back(random_spec(random, depth - 1));
  return spec;
}

TEST(RslRoundTrip, AwkwardArguments) {
  rsl::Subjob subjob;
  subjob.contact = "node1";
  subjob.count = 2;
  subjob.executable = "/path with spaces/prog (copy)";
  subjob.arguments = {"",
                      " ",
                      "two words",
                      "say \"hi\"",
                      "it's",
                      "'\"'\"",
                      "(a=b)",
                      "(* x *)",
                      "*",
                      "$(HOME)",
                      "$",
                      "a#b",
                      "^/x/",
                      "tab\there",
                      "new\nline",
                      "crlf\r\n",
                      "ünïcödé",
                      "\xfe\xff",
                      std::string("nul\0byte", 8),
                      "-n",
                      "100"};
  subjob.directory = "~/dir";
  subjob.label = "subjob 0";
  subjob.environment = {{"BSPG_SUBJOB", "0"}, {"EMPTY", ""}, {"WEIRD NAME=", "$(X)"}};
  const std::string text = rsl::write_allocation({subjob});
  EXPECT_EQ(rsl::read_allocation(text), std::vector<rsl::Subjob>{subjob}) << text;
}

TEST(RslRoundTrip, RandomAllocations) {
  Random random(20240611);
  for (int round = 0; round < 400; ++round) {
    std::vector<rsl::Subjob> subjobs;
    for (int i = 1 + random.below(4); i > 0; --i) subjobs.push_back(random_subjob(random));
    const std::string text = rsl::write_allocation(subjobs);
    std::vector<rsl::Subjob> back;
    ASSERT_NO_THROW(back = rsl::read_allocation(text)) << "round " << round << ":\n" << text;
    ASSERT_EQ(back, subjobs) << "round " << round << ":\n" << text;
  }
}

TEST(RslRoundTrip, RandomTrees) {
  Random random(7);
  for (int round = 0; round < 400; ++round) {
    const rsl::Spec spec = random_spec(random, 3);
    const std::string text = rsl::write(spec);
    rsl::Spec back;
    ASSERT_NO_THROW(back = rsl::parse(text)) << "round " << round << ":\n" << text;
    ASSERT_EQ(back, spec) << "round " << round << ":\n" << text;
    ASSERT_EQ(rsl::write(back), text) << "round " << round;
  }
}

TEST(RslRoundTrip, SubstitutedTreeIsAllLiterals) {
  const rsl::Spec spec = rsl::parse("&(rslSubstitution=(A x)(B $(A)y))(v=$(A) $(B)#z ($(B) w))");
  const rsl::Spec done = rsl::substitute(spec);
  const rsl::Spec expected = rsl::parse("&(rslSubstitution=(A x)(B xy))(v=x xyz (xy w))");
  EXPECT_EQ(done, expected);
  EXPECT_EQ(rsl::parse(rsl::write(done)), expected);
}

}  // namespace
