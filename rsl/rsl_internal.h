// rsl_internal.h - pieces shared by the RSL reader and writer (not part of the public API).
#pragma once

#include <cstddef>
#include <deque>
#include <string>

#include "rsl.h"

namespace bspg::rsl::detail {

// Bytes that end an unquoted literal besides whitespace.
bool is_special(char c);
bool is_blank(char c);
// True when `c` may appear in an unquoted literal.
inline bool is_unquoted_char(char c) { return !is_blank(c) && !is_special(c); }

enum class TokenKind {
  End,
  OpenParen,
  CloseParen,
  And,            // &
  Or,             // |
  Multi,          // +
  RelOp,          // = != < <= > >=
  Hash,           // #
  VariableStart,  // $(
  Literal,        // unquoted, quoted or ^X...X
};

struct Token {
  TokenKind kind = TokenKind::End;
  std::string text;  // literal contents (quotes removed) or the operator's characters
  int line = 1, column = 1;
  bool quoted = false;  // Literal written with quotes or user delimiters
  bool spaced = false;  // whitespace or a comment comes right before it
};

// How a token reads in "expected X but found Y" messages.
std::string describe(const Token& token);

// Turns RSL text into tokens on demand, so that the first error in reading order is reported.
class Lexer {
 public:
  Lexer(const std::string& text, const std::string& origin);
  const Token& peek(std::size_t ahead = 0);
  Token next();
  [[noreturn]] void fail(int line, int column, const std::string& message) const;
  const std::string& origin() const { return origin_; }

 private:
  Token scan();
  bool skip_blanks_and_comments();
  void advance();
  char at(std::size_t offset = 0) const;
  bool at_end() const { return pos_ >= text_.size(); }
  std::string scan_delimited(char delimiter, int line, int column);

  const std::string& text_;
  std::string origin_;
  std::size_t pos_ = 0;
  int line_ = 1, column_ = 1;
  std::deque<Token> lookahead_;
};

// Writes a tree; `quote_strings` quotes every literal that is not a plain decimal number (the
// style of write_allocation), otherwise only literals that need it are quoted.
std::string write_spec(const Spec& spec, bool quote_strings);

}  // namespace bspg::rsl::detail
