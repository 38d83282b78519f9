// substitute.cpp - evaluates $(VAR) references and '#' concatenations to literals, with
// variables from the caller and from rslSubstitution relations (scoped by request).
#include <map>
#include <string>

#include "rsl.h"

namespace bspg::rsl {
namespace {

using Scope = std::map<std::string, std::string>;

class Substitution {
 public:
  explicit Substitution(const std::string& origin) : origin_(origin) {}

  Spec spec(const Spec& input, const Scope& outer) {
    Scope scope = outer;
    // Definitions first, in order, so that they hold for the whole request.
    for (const Relation& relation : input.relations) {
      if (same_attribute(relation.attribute, "rslSubstitution")) define(relation, scope);
    }
    Spec output;
    output.kind = input.kind;
    output.line = input.line;
    output.column = input.column;
    for (const Relation& relation : input.relations) {
      Relation evaluated = relation;
      for (Value& item : evaluated.values) item = value(item, scope);
      output.relations.push_back(std::move(evaluated));
    }
    for (const Spec& child : input.children) output.children.push_back(spec(child, scope));
    return output;
  }

 private:
  [[noreturn]] void fail(int line, int column, const std::string& message) const {
    throw ParseError(origin_, line, column, message);
  }

  void define(const Relation& relation, Scope& scope) {
    if (relation.op != "=") {
      fail(relation.line, relation.column,
           "expected '=' after rslSubstitution but found '" + relation.op + "'");
    }
    for (const Value& pair : relation.values) {
      if (pair.kind != Value::Kind::Sequence || pair.items.size() != 2) {
        fail(pair.line, pair.column,
             "rslSubstitution takes (NAME value) pairs, e.g. (rslSubstitution=(DIR /tmp))");
      }
      const std::string name = string(pair.items[0], scope);
      scope[name] = string(pair.items[1], scope);
    }
  }

  // The string a simple value or concatenation stands for.
  std::string string(const Value& input, const Scope& scope) const {
    switch (input.kind) {
      case Value::Kind::Literal:
        return input.text;
      case Value::Kind::Variable: {
        auto found = scope.find(input.text);
        if (found == scope.end()) {
          fail(input.line, input.column,
               "undefined variable '" + input.text + "' (define it with (rslSubstitution=(" +
                   input.text + " value)))");
        }
        return found->second;
      }
      case Value::Kind::Concatenation: {
        std::string joined;
        for (const Value& item : input.items) joined += string(item, scope);
        return joined;
      }
      case Value::Kind::Sequence:
      default:
        fail(input.line, input.column, "expected a string or variable but found a sequence");
    }
  }

  Value value(const Value& input, const Scope& scope) const {
    if (input.kind == Value::Kind::Sequence) {
      Value output = input;
      for (Value& item : output.items) item = value(item, scope);
      return output;
    }
    Value output;
    output.kind = Value::Kind::Literal;
    output.text = string(input, scope);
    output.line = input.line;
    output.column = input.column;
    return output;
  }

  const std::string& origin_;
};

}  // namespace

Spec substitute(const Spec& spec, const std::map<std::string, std::string>& variables,
                const std::string& origin) {
  return Substitution(origin).spec(spec, variables);
}

}  // namespace bspg::rsl
