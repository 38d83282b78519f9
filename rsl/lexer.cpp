// lexer.cpp - RSL tokens: punctuation, relation operators, literals in their three spellings,
// and comments (* ... *), with line/column positions for messages.
#include <cstring>
#include <string>

#include "rsl_internal.h"
#include "untrusted.h"

namespace bspg::rsl::detail {

bool is_special(char c) { return c != '\0' && std::strchr("+&|()=<>!\"'^#$", c) != nullptr; }

bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

std::string describe(const Token& token) {
  switch (token.kind) {
    case TokenKind::End:
      return "end of input";
    case TokenKind::VariableStart:
      return "'$('";
    case TokenKind::Literal:
      return (token.quoted ? "quoted string \"" : "\"") + untrusted::excerpt(token.text, 24) + "\"";
    default:
      return "'" + token.text + "'";
  }
}

Lexer::Lexer(const std::string& text, const std::string& origin) : text_(text), origin_(origin) {}

void Lexer::fail(int line, int column, const std::string& message) const {
  throw ParseError(origin_, line, column, message);
}

char Lexer::at(std::size_t offset) const {
  return pos_ + offset < text_.size() ? text_[pos_ + offset] : '\0';
}

void Lexer::advance() {
  if (text_[pos_] == '\n') {
    ++line_;
    column_ = 1;
  } else {
    ++column_;
  }
  ++pos_;
}

const Token& Lexer::peek(std::size_t ahead) {
  while (lookahead_.size() <= ahead) lookahead_.push_back(scan());
  return lookahead_[ahead];
}

Token Lexer::next() {
  peek();
  Token token = std::move(lookahead_.front());
  lookahead_.pop_front();
  return token;
}

bool Lexer::skip_blanks_and_comments() {
  bool skipped = false;
  for (;;) {
    if (!at_end() && is_blank(at())) {
      advance();
      skipped = true;
    } else if (at() == '(' && at(1) == '*') {
      const int line = line_, column = column_;
      advance();
      advance();
      while (!(at() == '*' && at(1) == ')')) {
        if (at_end()) {
          fail(line, column, "unterminated comment: expected '*)' before the end of input");
        }
        advance();
      }
      advance();
      advance();
      skipped = true;
    } else {
      return skipped;
    }
  }
}

// Reads up to the closing `delimiter`; a doubled delimiter stands for one delimiter character.
std::string Lexer::scan_delimited(char delimiter, int line, int column) {
  std::string text;
  for (;;) {
    if (at_end()) {
      fail(line, column,
           std::string("unterminated string: expected a closing ") + delimiter +
               " before the end of input");
    }
    if (at() == delimiter) {
      advance();
      if (at_end() || at() != delimiter) return text;
    }
    text += at();
    advance();
  }
}

Token Lexer::scan() {
  Token token;
  token.spaced = skip_blanks_and_comments();
  token.line = line_;
  token.column = column_;
  if (at_end()) return token;  // TokenKind::End

  const char c = at();
  auto punct = [&](TokenKind kind, std::size_t length) {
    token.kind = kind;
    token.text = text_.substr(pos_, length);
    for (std::size_t i = 0; i < length; ++i) advance();
    return token;
  };
  switch (c) {
    case '(':
      return punct(TokenKind::OpenParen, 1);
    case ')':
      return punct(TokenKind::CloseParen, 1);
    case '&':
      return punct(TokenKind::And, 1);
    case '|':
      return punct(TokenKind::Or, 1);
    case '+':
      return punct(TokenKind::Multi, 1);
    case '#':
      return punct(TokenKind::Hash, 1);
    case '=':
      return punct(TokenKind::RelOp, 1);
    case '<':
    case '>':
      return punct(TokenKind::RelOp, at(1) == '=' ? 2 : 1);
    case '!':
      if (at(1) != '=') fail(line_, column_, "expected '!=' but found '!' alone");
      return punct(TokenKind::RelOp, 2);
    case '$':
      if (at(1) != '(') {
        fail(line_, column_, "expected '(' after '$' (a variable is written $(NAME))");
      }
      return punct(TokenKind::VariableStart, 2);
    case '"':
    case '\'':
      token.kind = TokenKind::Literal;
      token.quoted = true;
      advance();
      token.text = scan_delimited(c, token.line, token.column);
      return token;
    case '^': {
      token.kind = TokenKind::Literal;
      token.quoted = true;
      advance();
      if (at_end()) fail(token.line, token.column, "expected a delimiter character after '^'");
      const char delimiter = at();
      advance();
      token.text = scan_delimited(delimiter, token.line, token.column);
      return token;
    }
    default:
      token.kind = TokenKind::Literal;
      while (!at_end() && is_unquoted_char(at())) {
        token.text += at();
        advance();
      }
      return token;
  }
}

}  // namespace bspg::rsl::detail
