// Valid RSL: the tree parse() builds, variable substitution, and attribute-name comparison.
#include <gtest/gtest.h>

#include "rsl.h"

namespace rsl = bspg::rsl;
using Kind = rsl::Value::Kind;

namespace {

rsl::Value lit(const std::string& text) { return rsl::Value::literal(text); }

// The literal strings of a relation's values (fails the test on anything else).
std::vector<std::string> strings(const rsl::Relation& relation) {
  std::vector<std::string> out;
  for (const rsl::Value& value : relation.values) {
    EXPECT_EQ(value.kind, Kind::Literal) << relation.attribute;
    out.push_back(value.text);
  }
  return out;
}

TEST(RslParse, GlobusStyleConjunction) {
  const rsl::Spec spec = rsl::parse(
      "&(executable=/bin/echo)\n"
      " (arguments=hello \"big world\")\n"
      " (count>=2)\n"
      " (maxTime!=10)\n");
  EXPECT_EQ(spec.kind, rsl::Spec::Kind::Conjunction);
  ASSERT_EQ(spec.relations.size(), 4u);
  EXPECT_TRUE(spec.children.empty());
  EXPECT_EQ(spec.relations[0].attribute, "executable");
  EXPECT_EQ(spec.relations[0].op, "=");
  EXPECT_EQ(strings(spec.relations[0]), std::vector<std::string>{"/bin/echo"});
  EXPECT_EQ(strings(spec.relations[1]), (std::vector<std::string>{"hello", "big world"}));
  EXPECT_EQ(spec.relations[2].op, ">=");
  EXPECT_EQ(spec.relations[3].op, "!=");
  EXPECT_EQ(spec.relations[1].line, 2);
  EXPECT_EQ(spec.relations[1].column, 3);
}

TEST(RslParse, AllRelationOperators) {
  const rsl::Spec spec = rsl::parse("&(a=1)(b!=2)(c<3)(d<=4)(e>5)(f>=6)");
  std::vector<std::string> ops;
  for (const auto& relation : spec.relations) ops.push_back(relation.op);
  EXPECT_EQ(ops, (std::vector<std::string>{"=", "!=", "<", "<=", ">", ">="}));
}

TEST(RslParse, ParenthesisedWholeSpecificationAndBareRelations) {
  const rsl::Spec wrapped = rsl::parse("(&(a=b)(c=d))");
  const rsl::Spec plain = rsl::parse("&(a=b)(c=d)");
  const rsl::Spec bare = rsl::parse("(a=b)(c=d)");
  EXPECT_EQ(wrapped, plain);
  EXPECT_EQ(bare, plain);
  const rsl::Spec single = rsl::parse("executable=/bin/date");
  ASSERT_EQ(single.relations.size(), 1u);
  EXPECT_EQ(single.relations[0].values[0].text, "/bin/date");
}

TEST(RslParse, MultiRequestHoldsOneChildPerSubRequest) {
  const rsl::Spec spec = rsl::parse(
      "+(&(resourceManagerContact=node1)(count=2))\n"
      " (&(resourceManagerContact=node2)(count=3)(label=\"subjob 1\"))");
  EXPECT_EQ(spec.kind, rsl::Spec::Kind::MultiRequest);
  ASSERT_EQ(spec.children.size(), 2u);
  EXPECT_EQ(spec.children[1].kind, rsl::Spec::Kind::Conjunction);
  EXPECT_EQ(spec.children[1].line, 2);
  EXPECT_EQ(spec.children[1].column, 3);
  EXPECT_EQ(rsl::find_relation(spec.children[1], "label")->values[0].text, "subjob 1");
}

TEST(RslParse, DisjunctionIsKeptInTheTree) {
  const rsl::Spec spec = rsl::parse("&(executable=a)(|(arch=x86_64)(arch=aarch64))");
  ASSERT_EQ(spec.children.size(), 1u);
  EXPECT_EQ(spec.children[0].kind, rsl::Spec::Kind::Disjunction);
  ASSERT_EQ(spec.children[0].relations.size(), 2u);
  EXPECT_EQ(spec.children[0].relations[1].values[0].text, "aarch64");
}

TEST(RslParse, NestedSequences) {
  const rsl::Spec spec =
      rsl::parse("&(environment=(NAME value)(PATH \"/a b\")) (deep=(a (b (c d)) ()))");
  const rsl::Relation& environment = spec.relations[0];
  ASSERT_EQ(environment.values.size(), 2u);
  EXPECT_EQ(environment.values[0], rsl::Value::sequence({lit("NAME"), lit("value")}));
  EXPECT_EQ(environment.values[1], rsl::Value::sequence({lit("PATH"), lit("/a b")}));
  const rsl::Value expected = rsl::Value::sequence(
      {lit("a"), rsl::Value::sequence({lit("b"), rsl::Value::sequence({lit("c"), lit("d")})}),
       rsl::Value::sequence({})});
  ASSERT_EQ(spec.relations[1].values.size(), 1u);
  EXPECT_EQ(spec.relations[1].values[0], expected);
}

TEST(RslParse, BothQuoteKindsAndDoubledQuotes) {
  const rsl::Spec spec = rsl::parse(
      "&(a=\"say \"\"hi\"\"\")(b='it''s')(c=\"it's\")(d='\"q\"')(e=\"\")(f='')"
      "(g=\"(x=y) & $(HOME) # \n next line\")");
  EXPECT_EQ(strings(spec.relations[0])[0], "say \"hi\"");
  EXPECT_EQ(strings(spec.relations[1])[0], "it's");
  EXPECT_EQ(strings(spec.relations[2])[0], "it's");
  EXPECT_EQ(strings(spec.relations[3])[0], "\"q\"");
  EXPECT_EQ(strings(spec.relations[4])[0], "");
  EXPECT_EQ(strings(spec.relations[5])[0], "");
  EXPECT_EQ(strings(spec.relations[6])[0], "(x=y) & $(HOME) # \n next line");
}

TEST(RslParse, UserDelimitedStrings) {
  const rsl::Spec spec = rsl::parse("&(a=^/he said \"it's\"/)(b=^!a!!b!)");
  EXPECT_EQ(strings(spec.relations[0])[0], "he said \"it's\"");
  EXPECT_EQ(strings(spec.relations[1])[0], "a!b");
}

TEST(RslParse, CommentsAreWhitespace) {
  const rsl::Spec spec = rsl::parse(
      "(* allocation written by hand *)\n"
      "&(* first *)(count (* op next *) = 4)\n"
      " (executable=/bin/x(* right after a value *))(* trailing *)\n");
  ASSERT_EQ(spec.relations.size(), 2u);
  EXPECT_EQ(strings(spec.relations[0]), std::vector<std::string>{"4"});
  EXPECT_EQ(strings(spec.relations[1]), std::vector<std::string>{"/bin/x"});
  EXPECT_EQ(spec.line, 2);
  EXPECT_EQ(spec.column, 1);
}

TEST(RslParse, UnquotedLiteralsKeepOtherPunctuation) {
  const rsl::Spec spec = rsl::parse("&(a=node1:2119/jobmanager-pbs)(b=-n)(c=a*b,c;d@e%f~g.h)");
  EXPECT_EQ(strings(spec.relations[0])[0], "node1:2119/jobmanager-pbs");
  EXPECT_EQ(strings(spec.relations[1])[0], "-n");
  EXPECT_EQ(strings(spec.relations[2])[0], "a*b,c;d@e%f~g.h");
}

TEST(RslParse, VariablesAndConcatenationInTheTree) {
  const rsl::Spec spec = rsl::parse("&(executable=$(HOME)/bin/prog)(x=a # 'b c' # $(Y))");
  const rsl::Value& executable = spec.relations[0].values[0];
  EXPECT_EQ(executable,
            rsl::Value::concatenation({rsl::Value::variable("HOME"), lit("/bin/prog")}));
  EXPECT_EQ(spec.relations[1].values.size(), 1u);
  EXPECT_EQ(spec.relations[1].values[0],
            rsl::Value::concatenation({lit("a"), lit("b c"), rsl::Value::variable("Y")}));
  // Separated by whitespace, two values stay two values.
  const rsl::Spec apart = rsl::parse("&(x=$(A) b)");
  EXPECT_EQ(apart.relations[0].values.size(), 2u);
}

TEST(RslSubstitute, FromRslSubstitutionAndCallerMap) {
  const rsl::Spec spec = rsl::parse(
      "&(rslSubstitution=(TOP /opt)(BIN $(TOP)/bin))\n"
      " (executable=$(BIN)/prog)\n"
      " (arguments=$(USER) \"$(NOT_A_VARIABLE)\" $(TOP)#-x)\n");
  const rsl::Spec done = rsl::substitute(spec, {{"USER", "alice"}, {"TOP", "ignored"}});
  EXPECT_EQ(strings(*rsl::find_relation(done, "executable")),
            std::vector<std::string>{"/opt/bin/prog"});
  EXPECT_EQ(strings(*rsl::find_relation(done, "arguments")),
            (std::vector<std::string>{"alice", "$(NOT_A_VARIABLE)", "/opt-x"}));
}

TEST(RslSubstitute, DefinitionHoldsForTheWholeRequestAndNestedOnes) {
  // The use comes before the definition in the text; the definition still applies.
  const rsl::Spec spec = rsl::parse(
      "+(&(executable=$(DIR)/a)(rsl_substitution=(DIR /one)))\n"
      " (&(executable=$(DIR)/b))");
  const rsl::Spec done = rsl::substitute(spec, {{"DIR", "/default"}});
  EXPECT_EQ(rsl::find_relation(done.children[0], "executable")->values[0].text, "/one/a");
  EXPECT_EQ(rsl::find_relation(done.children[1], "executable")->values[0].text, "/default/b");
  const rsl::Spec outer = rsl::parse("&(rslSubstitution=(X 1))(|(a=$(X))(b=2))");
  EXPECT_EQ(rsl::substitute(outer).children[0].relations[0].values[0].text, "1");
}

TEST(RslSubstitute, SequencesKeepTheirShape) {
  const rsl::Spec done =
      rsl::substitute(rsl::parse("&(environment=(NAME $(V))(P $(V)x))"), {{"V", "v"}});
  EXPECT_EQ(done.relations[0].values[1], rsl::Value::sequence({lit("P"), lit("vx")}));
}

TEST(RslAttributes, CaseAndUnderscoreInsensitive) {
  EXPECT_TRUE(rsl::same_attribute("resourceManagerContact", "resource_manager_contact"));
  EXPECT_TRUE(rsl::same_attribute("RESOURCEMANAGERCONTACT", "_resourcemanager_Contact_"));
  EXPECT_FALSE(rsl::same_attribute("count", "counts"));
  EXPECT_EQ(rsl::canonical_attribute("Max_Wall_Time"), "maxwalltime");
  const rsl::Spec spec = rsl::parse("&(Resource_Manager_Contact=n1)(COUNT=2)");
  ASSERT_NE(rsl::find_relation(spec, "resourceManagerContact"), nullptr);
  EXPECT_EQ(rsl::find_relation(spec, "count")->values[0].text, "2");
  EXPECT_EQ(rsl::find_relation(spec, "executable"), nullptr);
}

TEST(RslWrite, CanonicalTextIsReadBackEqual) {
  const std::string text =
      "+(&(a=plain \"two words\" '' $(V)/x)(b=(n \"v v\")(m w))(|(c<=3)(c>9)))"
      "(&(rslSubstitution=(V ^/x'\"/))(d='$(literal)'))";
  const rsl::Spec spec = rsl::parse(text);
  const std::string written = rsl::write(spec);
  EXPECT_EQ(rsl::parse(written), spec) << written;
  EXPECT_EQ(rsl::write(rsl::parse(written)), written);
  EXPECT_NE(written.find("\"$(literal)\""), std::string::npos) << written;
  EXPECT_NE(written.find("$(V) # /x"), std::string::npos) << written;
}

TEST(RslWrite, RefusesTreesWithoutText) {
  rsl::Spec empty;
  EXPECT_THROW(rsl::write(empty), std::invalid_argument);
  rsl::Spec bad_attribute;
  bad_attribute.relations.push_back({"two words", "=", {lit("x")}});
  EXPECT_THROW(rsl::write(bad_attribute), std::invalid_argument);
  rsl::Spec no_value;
  no_value.relations.push_back({"a", "=", {}});
  EXPECT_THROW(rsl::write(no_value), std::invalid_argument);
  rsl::Spec bad_op;
  bad_op.relations.push_back({"a", "==", {lit("x")}});
  EXPECT_THROW(rsl::write(bad_op), std::invalid_argument);
}

}  // namespace
