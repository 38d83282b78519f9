// ast.cpp - the error type, tree helpers, equality and attribute-name comparison.
#include <string>
#include <utility>

#include "rsl.h"
#include "untrusted.h"

namespace bspg::rsl {

// Messages quote the text they are about, which may hold any byte: shown escaped.
ParseError::ParseError(const std::string& origin, int line, int column, const std::string& msg)
    : std::runtime_error(untrusted::printable(origin + ":" + std::to_string(line) + ":" +
                                              std::to_string(column) + ": " + msg)),
      line(line),
      column(column),
      origin(origin),
      message(untrusted::printable(msg)) {}

Value Value::literal(std::string text) {
  Value value;
  value.kind = Kind::Literal;
  value.text = std::move(text);
  return value;
}

Value Value::variable(std::string name) {
  Value value;
  value.kind = Kind::Variable;
  value.text = std::move(name);
  return value;
}

Value Value::sequence(std::vector<Value> items) {
  Value value;
  value.kind = Kind::Sequence;
  value.items = std::move(items);
  return value;
}

Value Value::concatenation(std::vector<Value> items) {
  Value value;
  value.kind = Kind::Concatenation;
  value.items = std::move(items);
  return value;
}

bool operator==(const Value& a, const Value& b) {
  return a.kind == b.kind && a.text == b.text && a.items == b.items;
}
bool operator!=(const Value& a, const Value& b) { return !(a == b); }

bool operator==(const Relation& a, const Relation& b) {
  return a.attribute == b.attribute && a.op == b.op && a.values == b.values;
}
bool operator!=(const Relation& a, const Relation& b) { return !(a == b); }

bool operator==(const Spec& a, const Spec& b) {
  return a.kind == b.kind && a.relations == b.relations && a.children == b.children;
}
bool operator!=(const Spec& a, const Spec& b) { return !(a == b); }

std::string canonical_attribute(const std::string& name) {
  std::string canonical;
  for (char c : name) {
    if (c == '_') continue;
    canonical += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  }
  return canonical;
}

bool same_attribute(const std::string& a, const std::string& b) {
  return canonical_attribute(a) == canonical_attribute(b);
}

const Relation* find_relation(const Spec& spec, const std::string& attribute) {
  const std::string wanted = canonical_attribute(attribute);
  for (const Relation& relation : spec.relations) {
    if (canonical_attribute(relation.attribute) == wanted) return &relation;
  }
  return nullptr;
}

}  // namespace bspg::rsl
