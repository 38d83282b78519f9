// writer.cpp - canonical RSL text from a tree: one operand per line, literals quoted as needed.
#include <stdexcept>
#include <string>

#include "rsl_internal.h"

namespace bspg::rsl {
namespace detail {
namespace {

bool is_decimal(const std::string& text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// A literal may stand unquoted when the lexer reads it back as exactly one unquoted literal:
// no whitespace or special bytes, and no leading '*' (after '(' that would open a comment).
// Control and non-ASCII bytes are quoted too, so that the text stays readable.
bool needs_quotes(const std::string& text) {
  if (text.empty() || text.front() == '*') return true;
  for (char c : text) {
    const unsigned char byte = static_cast<unsigned char>(c);
    if (!is_unquoted_char(c) || byte < 0x20 || byte >= 0x7f) return true;
  }
  return false;
}

std::string quote(const std::string& text) {
  // Prefer "..."; use '...' when that avoids doubling.
  const char q =
      (text.find('"') != std::string::npos && text.find('\'') == std::string::npos) ? '\'' : '"';
  std::string out(1, q);
  for (char c : text) {
    out += c;
    if (c == q) out += q;
  }
  out += q;
  return out;
}

bool is_valid_op(const std::string& op) {
  return op == "=" || op == "!=" || op == "<" || op == "<=" || op == ">" || op == ">=";
}

class Writer {
 public:
  explicit Writer(bool quote_strings) : quote_strings_(quote_strings) {}

  std::string document(const Spec& spec) {
    spec_text(spec, 0);
    out_ += '\n';
    return out_;
  }

 private:
  void literal(const std::string& text) {
    const bool quoted = quote_strings_ ? !is_decimal(text) : needs_quotes(text);
    out_ += quoted ? quote(text) : text;
  }

  void simple_value(const Value& value) {
    if (value.kind == Value::Kind::Literal) {
      literal(value.text);
    } else if (value.kind == Value::Kind::Variable) {
      out_ += "$(";
      literal(value.text);
      out_ += ')';
    } else {
      throw std::invalid_argument(
          "RSL writer: a concatenation may only join strings and variables");
    }
  }

  void value(const Value& value) {
    switch (value.kind) {
      case Value::Kind::Sequence: {
        out_ += '(';
        bool first = true;
        for (const Value& item : value.items) {
          if (!first) out_ += ' ';
          first = false;
          this->value(item);
        }
        out_ += ')';
        break;
      }
      case Value::Kind::Concatenation: {
        if (value.items.size() < 2) {
          throw std::invalid_argument("RSL writer: a concatenation needs at least two values");
        }
        bool first = true;
        for (const Value& item : value.items) {
          if (!first) out_ += " # ";
          first = false;
          simple_value(item);
        }
        break;
      }
      default:
        simple_value(value);
    }
  }

  void relation(const Relation& relation) {
    const std::string& name = relation.attribute;
    if (needs_quotes(name)) {
      throw std::invalid_argument("RSL writer: attribute name '" + name +
                                  "' is not a plain unquoted literal");
    }
    if (!is_valid_op(relation.op)) {
      throw std::invalid_argument("RSL writer: unknown relation operator '" + relation.op +
                                  "' for attribute '" + name + "'");
    }
    if (relation.values.empty()) {
      throw std::invalid_argument("RSL writer: attribute '" + name + "' has no value");
    }
    out_ += '(';
    out_ += name;
    out_ += relation.op;
    bool first = true;
    for (const Value& item : relation.values) {
      if (!first) out_ += ' ';
      first = false;
      value(item);
    }
    out_ += ')';
  }

  void newline(int indent) {
    out_ += '\n';
    out_.append(static_cast<std::size_t>(indent), ' ');
  }

  // `indent` is the column (from 0) of the operator character.
  void spec_text(const Spec& spec, int indent) {
    if (spec.relations.empty() && spec.children.empty()) {
      throw std::invalid_argument("RSL writer: a request needs at least one operand");
    }
    if (spec.kind == Spec::Kind::MultiRequest) {
      // One sub-request per block:  ( &(a=b)\n   (c=d)\n)
      out_ += '+';
      for (const Relation& item : spec.relations) {
        newline(indent);
        relation(item);
      }
      for (const Spec& child : spec.children) {
        newline(indent);
        out_ += "( ";
        spec_text(child, indent + 2);
        newline(indent);
        out_ += ')';
      }
      return;
    }
    out_ += spec.kind == Spec::Kind::Conjunction ? '&' : '|';
    bool first = true;
    for (const Relation& item : spec.relations) {
      if (!first) newline(indent + 1);
      first = false;
      relation(item);
    }
    for (const Spec& child : spec.children) {
      if (!first) newline(indent + 1);
      first = false;
      out_ += "( ";
      spec_text(child, indent + 3);
      newline(indent + 1);
      out_ += ')';
    }
  }

  bool quote_strings_;
  std::string out_;
};

}  // namespace

std::string write_spec(const Spec& spec, bool quote_strings) {
  return Writer(quote_strings).document(spec);
}

}  // namespace detail

std::string write(const Spec& spec) { return detail::write_spec(spec, false); }

}  // namespace bspg::rsl
