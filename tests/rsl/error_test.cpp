// Invalid RSL: every error is a ParseError whose message gives the exact line and column.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <random>

#include "rsl.h"

namespace rsl = bspg::rsl;

namespace {

// Runs `action` and returns the ParseError's what(), or a note that none was thrown.
std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const rsl::ParseError& error) {
    // The fields agree with the text.
    const std::string prefix =
        error.origin + ":" + std::to_string(error.line) + ":" + std::to_string(error.column) + ": ";
    EXPECT_EQ(std::string(error.what()), prefix + error.message);
    return error.what();
  } catch (const std::exception& other) {
    return std::string("unexpected exception: ") + other.what();
  }
  return "no error";
}

std::string parse_error(const std::string& text) {
  return error_of([&] { rsl::parse(text, "job.rsl"); });
}

std::string allocation_error(const std::string& text,
                             const std::map<std::string, std::string>& variables = {}) {
  return error_of([&] { rsl::read_allocation(text, "job.rsl", variables); });
}

// A valid sub-request body to put next to the relation under test.
const std::string kBase = "(resourceManagerContact=n1)(count=2)(executable=/bin/x)";

TEST(RslErrors, MissingCloseParenAtEndOfInput) {
  EXPECT_EQ(parse_error("&(executable=/bin/x)\n (count=4)\n (label=abcde"),
            "job.rsl:3:14: expected ')' but found end of input");
  EXPECT_EQ(parse_error("&(a=b)\n(c=d\n"), "job.rsl:3:1: expected ')' but found end of input");
}

TEST(RslErrors, ExtraCloseParen) {
  EXPECT_EQ(parse_error("&(a=b))"), "job.rsl:1:7: expected end of input but found ')'");
}

TEST(RslErrors, UnclosedSequence) {
  EXPECT_EQ(parse_error("&(env=(A b)\n (c=d)"),
            "job.rsl:2:4: expected ')' closing the sequence opened at 2:2 but found '='");
  EXPECT_EQ(parse_error("&(env=(A (b c)"),
            "job.rsl:1:15: expected ')' closing the sequence opened at 1:7 but found end of "
            "input");
}

TEST(RslErrors, MissingOperator) {
  EXPECT_EQ(parse_error("&(count=1)\n  (executable /bin/x)"),
            "job.rsl:2:15: expected a relation operator (=, !=, <, <=, >, >=) after "
            "'executable' but found \"/bin/x\"");
  EXPECT_EQ(parse_error("&(a!b)"), "job.rsl:1:4: expected '!=' but found '!' alone");
  EXPECT_EQ(parse_error("&(a)"),
            "job.rsl:1:4: expected a relation operator (=, !=, <, <=, >, >=) after 'a' but "
            "found ')'");
}

TEST(RslErrors, MissingValue) {
  EXPECT_EQ(parse_error("&(a=)"), "job.rsl:1:5: expected a value after 'a=' but found ')'");
  EXPECT_EQ(parse_error("&(a>=&)"), "job.rsl:1:6: expected a value after 'a>=' but found '&'");
}

TEST(RslErrors, UnterminatedStrings) {
  EXPECT_EQ(parse_error("&(a=b)\n  (arguments=\"abc)\n"),
            "job.rsl:2:14: unterminated string: expected a closing \" before the end of input");
  EXPECT_EQ(parse_error("&(a='it''s)"),
            "job.rsl:1:5: unterminated string: expected a closing ' before the end of input");
  EXPECT_EQ(parse_error("&(a=^/abc)"),
            "job.rsl:1:5: unterminated string: expected a closing / before the end of input");
  EXPECT_EQ(parse_error("&(a=^"), "job.rsl:1:5: expected a delimiter character after '^'");
}

TEST(RslErrors, UnterminatedComment) {
  EXPECT_EQ(parse_error("&(a=b)\n   (* never closed *\n"),
            "job.rsl:2:4: unterminated comment: expected '*)' before the end of input");
}

TEST(RslErrors, BadVariableSyntax) {
  EXPECT_EQ(parse_error("&(a=$HOME)"),
            "job.rsl:1:5: expected '(' after '$' (a variable is written $(NAME))");
  EXPECT_EQ(parse_error("&(a=$())"),
            "job.rsl:1:7: expected a variable name after '$(' but found ')'");
  EXPECT_EQ(parse_error("&(a=$(X Y))"),
            "job.rsl:1:9: expected ')' after the variable name 'X' but found \"Y\"");
}

TEST(RslErrors, BadConcatenation) {
  EXPECT_EQ(parse_error("&(a=b # )"),
            "job.rsl:1:9: expected a string or variable after '#' but found ')'");
  EXPECT_EQ(parse_error("&(a=b#(c))"),
            "job.rsl:1:7: expected a string or variable after '#' but found '('");
}

TEST(RslErrors, BadStartOfSpecification) {
  EXPECT_EQ(parse_error(""),
            "job.rsl:1:1: expected '&', '|', '+' or '(' to start a specification but found end "
            "of input");
  EXPECT_EQ(parse_error("\n  \"abc\""),
            "job.rsl:2:3: expected '&', '|', '+' or '(' to start a specification but found "
            "quoted string \"abc\"");
  EXPECT_EQ(parse_error("&a=b"), "job.rsl:1:2: expected '(' after '&' but found \"a\"");
  EXPECT_EQ(parse_error("&(\"a\"=b)"),
            "job.rsl:1:3: expected an attribute name or '&', '|', '+' but found quoted string "
            "\"a\"");
}

TEST(RslErrors, EmptyMultiRequest) {
  EXPECT_EQ(parse_error("+"),
            "job.rsl:1:2: expected '(' starting a sub-request after '+' but found end of input");
  EXPECT_EQ(parse_error("(* nothing *)\n+\n"),
            "job.rsl:3:1: expected '(' starting a sub-request after '+' but found end of input");
  EXPECT_EQ(parse_error("+()"),
            "job.rsl:1:3: expected an attribute name or '&', '|', '+' but found ')'");
}

TEST(RslErrors, UndefinedVariable) {
  EXPECT_EQ(allocation_error("&" + kBase + "\n (directory=$(HOME)/work)"),
            "job.rsl:2:13: undefined variable 'HOME' (define it with "
            "(rslSubstitution=(HOME value)))");
  // A definition in one sub-request does not reach its sibling.
  EXPECT_EQ(allocation_error("+(&" + kBase + "(rslSubstitution=(D /a)))\n(&" + kBase +
                             "(directory=$(D)))"),
            "job.rsl:2:69: undefined variable 'D' (define it with (rslSubstitution=(D value)))");
  EXPECT_EQ(error_of([] { rsl::substitute(rsl::parse("&(a=(x $(Y)))"), {}, "s.rsl"); }),
            "s.rsl:1:8: undefined variable 'Y' (define it with (rslSubstitution=(Y value)))");
}

TEST(RslErrors, BadSubstitutionShape) {
  EXPECT_EQ(allocation_error("&" + kBase + "(rslSubstitution=(A))"),
            "job.rsl:1:74: rslSubstitution takes (NAME value) pairs, e.g. "
            "(rslSubstitution=(DIR /tmp))");
  EXPECT_EQ(allocation_error("&(rslSubstitution=(A (b c)))" + kBase),
            "job.rsl:1:22: expected a string or variable but found a sequence");
}

TEST(RslErrors, BadCount) {
  const std::string head = "+(&(resourceManagerContact=n1)(executable=/bin/x))\n";
  EXPECT_EQ(allocation_error("&(resourceManagerContact=n1)\n (count=-1)\n (executable=x)"),
            "job.rsl:2:3: count must be a positive integer but found '-1'");
  EXPECT_EQ(allocation_error("&(resourceManagerContact=n1)\n (count=abc)\n (executable=x)"),
            "job.rsl:2:3: count must be a positive integer but found 'abc'");
  EXPECT_EQ(allocation_error("&(resourceManagerContact=n1)(count=0)(executable=x)"),
            "job.rsl:1:30: count must be a positive integer but found '0'");
  EXPECT_EQ(allocation_error("&(resourceManagerContact=n1)(count=3000000000)(executable=x)"),
            "job.rsl:1:30: count must be a positive integer but found '3000000000'");
  EXPECT_EQ(allocation_error("&(resourceManagerContact=n1)(count=\" 4\")(executable=x)"),
            "job.rsl:1:30: count must be a positive integer but found ' 4'");
  EXPECT_EQ(allocation_error("&(resourceManagerContact=n1)(count=4 4)(executable=x)"),
            "job.rsl:1:30: attribute 'count' takes one value but has 2");
  EXPECT_EQ(allocation_error("&(resourceManagerContact=n1)(count=(4))(executable=x)"),
            "job.rsl:1:30: attribute 'count' takes a string, not a sequence");
  EXPECT_EQ(allocation_error("&(resourceManagerContact=n1)(count>=4)(executable=x)"),
            "job.rsl:1:30: expected '=' after 'count' but found '>='");
}

TEST(RslErrors, MissingRequiredAttributes) {
  EXPECT_EQ(allocation_error("+(&(resourceManagerContact=n1)(count=1)(executable=x))\n"
                             " (&(resourceManagerContact=n2)(count=1))"),
            "job.rsl:2:3: missing required attribute 'executable' in sub-request 1");
  EXPECT_EQ(allocation_error("&(count=1)(executable=x)"),
            "job.rsl:1:1: missing required attribute 'resourceManagerContact' in sub-request 0");
  EXPECT_EQ(allocation_error("&(resourceManagerContact=n1)(executable=x)"),
            "job.rsl:1:1: missing required attribute 'count' in sub-request 0");
  EXPECT_EQ(allocation_error("&(resourceManagerContact=\"\")(count=1)(executable=x)"),
            "job.rsl:1:3: resourceManagerContact must not be empty");
  EXPECT_EQ(allocation_error("&(resourceManagerContact=n)(count=1)(executable='')"),
            "job.rsl:1:38: executable must not be empty");
}

TEST(RslErrors, WrongAllocationShape) {
  EXPECT_EQ(allocation_error("|(a=b)(c=d)"),
            "job.rsl:1:1: expected a '+' multi-request or an '&' request but found an '|' "
            "disjunction");
  EXPECT_EQ(allocation_error("+(&" + kBase + ")\n (+(&" + kBase + "))"),
            "job.rsl:2:3: expected an '&' request inside the '+' multi-request but found a '+' "
            "multi-request");
  EXPECT_EQ(allocation_error("+(&" + kBase + ")(count=1)"),
            "job.rsl:1:61: expected an '&' request inside the '+' multi-request but found the "
            "bare relation 'count=...'");
  EXPECT_EQ(allocation_error("&" + kBase + "(|(a=b))"),
            "job.rsl:1:58: a sub-request holds relations only, not a nested request");
}

TEST(RslErrors, WrongShapesOfKnownAttributes) {
  EXPECT_EQ(allocation_error("&" + kBase + "\n(executable=y)"),
            "job.rsl:2:2: attribute 'executable' given twice (first at 1:39)");
  EXPECT_EQ(allocation_error("&" + kBase + "\n(Resource_Manager_Contact=y)"),
            "job.rsl:2:2: attribute 'Resource_Manager_Contact' given twice (first at 1:3)");
  EXPECT_EQ(allocation_error("&" + kBase + "\n(environment=(A 1)(B))"),
            "job.rsl:2:19: environment takes (NAME value) pairs, e.g. (environment=(BSPG_SUBJOB "
            "0))");
  EXPECT_EQ(allocation_error("&" + kBase + "\n(environment=A 1)"),
            "job.rsl:2:14: environment takes (NAME value) pairs, e.g. (environment=(BSPG_SUBJOB "
            "0))");
  EXPECT_EQ(allocation_error("&" + kBase + "\n(environment=('' 1))"),
            "job.rsl:2:14: environment variable name must not be empty");
  EXPECT_EQ(allocation_error("&" + kBase + "\n(arguments=a (b c))"),
            "job.rsl:2:14: attribute 'arguments' takes strings, not nested sequences");
  EXPECT_EQ(allocation_error("&" + kBase + "\n(label=a b)"),
            "job.rsl:2:2: attribute 'label' takes one value but has 2");
}

TEST(RslErrors, BadHosts) {
  EXPECT_EQ(allocation_error("&" + kBase + "\n(hosts=(h1:1 h2:2))"),
            "job.rsl:2:2: hosts place 3 processes but count is 2");
  EXPECT_EQ(allocation_error("&" + kBase + "\n(hosts=(h1 h2:1))"),
            "job.rsl:2:2: hosts entry 'h1' is not HOST:N with a positive process count N");
  EXPECT_EQ(allocation_error("&" + kBase + "\n(hosts=h1:0 h2:2)"),
            "job.rsl:2:2: hosts entry 'h1:0' is not HOST:N with a positive process count N");
  EXPECT_EQ(allocation_error("&" + kBase + "\n(hosts=\":2\")"),
            "job.rsl:2:2: hosts entry ':2' is not HOST:N with a positive process count N");
}

TEST(RslErrors, UnreadableFileNamesThePath) {
  try {
    rsl::read_allocation_file("/nonexistent/dir/job.rsl");
    FAIL() << "no error for a missing file";
  } catch (const rsl::ParseError&) {
    FAIL() << "a missing file is not a parse error";
  } catch (const std::runtime_error& error) {
    EXPECT_EQ(std::string(error.what()),
              "cannot read RSL file '/nonexistent/dir/job.rsl': No such file or directory");
  }
}

TEST(RslErrors, DeepNestingIsAnErrorNotACrash) {
  const std::string deep_values = "&(a=" + std::string(100000, '(');
  EXPECT_EQ(parse_error(deep_values), "job.rsl:1:204: nesting deeper than 200 levels");
  std::string deep_requests;
  for (int i = 0; i < 50000; ++i) deep_requests += "&(";
  EXPECT_EQ(parse_error(deep_requests), "job.rsl:1:401: nesting deeper than 200 levels");
  // 200 levels are fine.
  const std::string ok = "&(a=" + std::string(199, '(') + std::string(199, ')') + ")";
  EXPECT_NO_THROW(rsl::parse(ok));
}

// Damaged allocations (bytes replaced, dropped or inserted) are read or refused with a
// ParseError pointing inside the text; nothing else may happen.
TEST(RslErrors, DamagedInputOnlyGivesParseErrors) {
  rsl::Subjob subjob;
  subjob.contact = "node1";
  subjob.count = 3;
  subjob.executable = "/bin/prog";
  subjob.arguments = {"a b", "it's", "$(X)"};
  subjob.label = "subjob 0";
  subjob.environment = {{"BSPG_SUBJOB", "0"}};
  subjob.hosts = {"h1:1", "h2:2"};
  const std::string original =
      "(* comment *)\n" + rsl::write_allocation({subjob, subjob}) + "(* end *)";
  const std::string noise = "()&|+=<>!\"'^#$* \n\\x0aZ9";
  std::mt19937 engine(12345);
  int refused = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string text = original;
    for (int edits = 1 + static_cast<int>(engine() % 3); edits > 0; --edits) {
      const std::size_t at = engine() % text.size();
      const char c = noise[engine() % noise.size()];
      switch (engine() % 3) {
        case 0:
          text[at] = c;
          break;
        case 1:
          text.erase(at, 1 + engine() % 4);
          break;
        default:
          text.insert(at, 1, c);
      }
      if (text.empty()) text = "+";
    }
    try {
      rsl::read_allocation(text, "job.rsl");
    } catch (const rsl::ParseError& error) {
      ++refused;
      const int lines = 1 + static_cast<int>(std::count(text.begin(), text.end(), '\n'));
      ASSERT_GE(error.line, 1) << text;
      ASSERT_LE(error.line, lines) << text;
      ASSERT_GE(error.column, 1) << text;
    } catch (const std::exception& other) {
      FAIL() << "not a ParseError: " << other.what() << "\n" << text;
    }
  }
  EXPECT_GT(refused, 1000);  // most damage is noticed
}

}  // namespace
