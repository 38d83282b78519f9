// parser.cpp - recursive-descent parser from tokens to the Spec/Relation/Value tree.
// Why not libglobus-rsl: docs/how-it-works.md, "Why rsl/ keeps its own parser" (no error
// positions, a heap overflow on a long token, input past a NUL or an open comment ignored).
#include <string>

#include "rsl_internal.h"
#include "untrusted.h"

namespace bspg::rsl {
namespace {

using detail::describe;
using detail::Lexer;
using detail::Token;
using detail::TokenKind;

bool is_boolean_operator(TokenKind kind) {
  return kind == TokenKind::And || kind == TokenKind::Or || kind == TokenKind::Multi;
}

bool starts_simple_value(TokenKind kind) {
  return kind == TokenKind::Literal || kind == TokenKind::VariableStart;
}

bool starts_value(TokenKind kind) {
  return starts_simple_value(kind) || kind == TokenKind::OpenParen;
}

class Parser {
 public:
  Parser(const std::string& text, const std::string& origin) : lexer_(text, origin) {}

  Spec parse_document() {
    const Token& first = lexer_.peek();
    Spec spec;
    if (is_boolean_operator(first.kind)) {
      spec = parse_boolean();
    } else if (first.kind == TokenKind::OpenParen) {
      // Either (&...) around the whole specification or (a=b)(c=d) without an operator.
      spec.kind = Spec::Kind::Conjunction;
      spec.line = first.line;
      spec.column = first.column;
      while (lexer_.peek().kind == TokenKind::OpenParen) parse_operand(spec);
      if (spec.relations.empty() && spec.children.size() == 1) {
        Spec inner = std::move(spec.children.front());
        spec = std::move(inner);
      }
    } else if (first.kind == TokenKind::Literal && !first.quoted) {
      spec.kind = Spec::Kind::Conjunction;
      spec.line = first.line;
      spec.column = first.column;
      spec.relations.push_back(parse_relation());
    } else {
      fail_expected("'&', '|', '+' or '(' to start a specification", first);
    }
    const Token& rest = lexer_.peek();
    if (rest.kind != TokenKind::End) fail_expected("end of input", rest);
    return spec;
  }

 private:
  [[noreturn]] void fail_expected(const std::string& expected, const Token& found) {
    lexer_.fail(found.line, found.column, "expected " + expected + " but found " + describe(found));
  }

  Token expect(TokenKind kind, const std::string& expected) {
    if (lexer_.peek().kind != kind) fail_expected(expected, lexer_.peek());
    return lexer_.next();
  }

  // '&', '|' or '+' followed by one or more parenthesised operands.
  Spec parse_boolean() {
    const Token op = lexer_.next();
    const NestingGuard guard(*this, op);
    Spec spec;
    spec.kind = op.kind == TokenKind::And  ? Spec::Kind::Conjunction
                : op.kind == TokenKind::Or ? Spec::Kind::Disjunction
                                           : Spec::Kind::MultiRequest;
    spec.line = op.line;
    spec.column = op.column;
    if (lexer_.peek().kind != TokenKind::OpenParen) {
      fail_expected(op.kind == TokenKind::Multi ? "'(' starting a sub-request after '+'"
                                                : "'(' after '" + op.text + "'",
                    lexer_.peek());
    }
    while (lexer_.peek().kind == TokenKind::OpenParen) parse_operand(spec);
    return spec;
  }

  // '(' (specification | relation) ')', appended to `parent`.
  void parse_operand(Spec& parent) {
    lexer_.next();  // '('
    const Token& first = lexer_.peek();
    if (is_boolean_operator(first.kind)) {
      parent.children.push_back(parse_boolean());
    } else if (first.kind == TokenKind::Literal && !first.quoted) {
      parent.relations.push_back(parse_relation());
    } else {
      fail_expected("an attribute name or '&', '|', '+'", first);
    }
    expect(TokenKind::CloseParen, "')'");
  }

  Relation parse_relation() {
    const Token attribute = lexer_.next();
    // An attribute name is a word the writer writes unquoted: control characters and bytes
    // outside ASCII, which the unquoted form takes in values, have no place in one, nor has a
    // leading '*' ("(*" opens a comment).
    if (!attribute.text.empty() && attribute.text.front() == '*')
      lexer_.fail(attribute.line, attribute.column,
                  "attribute name '" + untrusted::excerpt(attribute.text) +
                      "' starts with '*' (after '(' that opens a comment)");
    for (const char c : attribute.text) {
      const auto byte = static_cast<unsigned char>(c);
      if (byte < 0x20 || byte >= 0x7f)
        lexer_.fail(attribute.line, attribute.column,
                    "attribute name '" + untrusted::excerpt(attribute.text) +
                        "' holds a control character or a byte outside ASCII");
    }
    Relation relation;
    relation.attribute = attribute.text;
    relation.line = attribute.line;
    relation.column = attribute.column;
    const Token& op = lexer_.peek();
    if (op.kind != TokenKind::RelOp) {
      fail_expected("a relation operator (=, !=, <, <=, >, >=) after '" + attribute.text + "'", op);
    }
    relation.op = lexer_.next().text;
    while (starts_value(lexer_.peek().kind)) relation.values.push_back(parse_value());
    if (relation.values.empty()) {
      fail_expected("a value after '" + attribute.text + relation.op + "'", lexer_.peek());
    }
    return relation;
  }

  Value parse_value() {
    if (lexer_.peek().kind == TokenKind::OpenParen) {
      const Token open = lexer_.next();
      const NestingGuard guard(*this, open);
      Value sequence;
      sequence.kind = Value::Kind::Sequence;
      sequence.line = open.line;
      sequence.column = open.column;
      while (starts_value(lexer_.peek().kind)) sequence.items.push_back(parse_value());
      expect(TokenKind::CloseParen, "')' closing the sequence opened at " +
                                        std::to_string(open.line) + ":" +
                                        std::to_string(open.column));
      return sequence;
    }
    Value first = parse_simple_value();
    Value concatenation;
    concatenation.kind = Value::Kind::Concatenation;
    concatenation.line = first.line;
    concatenation.column = first.column;
    concatenation.items.push_back(std::move(first));
    for (;;) {
      const Token& token = lexer_.peek();
      if (token.kind == TokenKind::Hash) {
        lexer_.next();
        if (!starts_simple_value(lexer_.peek().kind)) {
          fail_expected("a string or variable after '#'", lexer_.peek());
        }
        concatenation.items.push_back(parse_simple_value());
      } else if (starts_simple_value(token.kind) && !token.spaced) {
        concatenation.items.push_back(parse_simple_value());  // e.g. $(HOME)/prog
      } else {
        break;
      }
    }
    if (concatenation.items.size() == 1) return std::move(concatenation.items.front());
    return concatenation;
  }

  Value parse_simple_value() {
    const Token token = lexer_.next();
    Value value;
    value.line = token.line;
    value.column = token.column;
    if (token.kind == TokenKind::Literal) {
      value.kind = Value::Kind::Literal;
      value.text = token.text;
      return value;
    }
    // '$(' NAME ')'
    value.kind = Value::Kind::Variable;
    value.text = expect(TokenKind::Literal, "a variable name after '$('").text;
    expect(TokenKind::CloseParen, "')' after the variable name '" + value.text + "'");
    return value;
  }

  // Bounds the recursion, so that absurdly nested input is an error rather than a stack
  // overflow.
  static constexpr int kMaxNesting = 200;
  class NestingGuard {
   public:
    NestingGuard(Parser& parser, const Token& at) : parser_(parser) {
      if (++parser_.nesting_ > kMaxNesting) {
        parser_.lexer_.fail(at.line, at.column,
                            "nesting deeper than " + std::to_string(kMaxNesting) + " levels");
      }
    }
    ~NestingGuard() { --parser_.nesting_; }
    NestingGuard(const NestingGuard&) = delete;
    NestingGuard& operator=(const NestingGuard&) = delete;

   private:
    Parser& parser_;
  };

  Lexer lexer_;
  int nesting_ = 0;
};

}  // namespace

Spec parse(const std::string& text, const std::string& origin) {
  return Parser(text, origin).parse_document();
}

}  // namespace bspg::rsl
