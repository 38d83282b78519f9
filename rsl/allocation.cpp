// allocation.cpp - a job allocation (one Subjob per '&' clause) to and from RSL text.
#include <climits>
#include <map>
#include <stdexcept>
#include <string>

#include "rsl_internal.h"
#include "untrusted.h"

namespace bspg::rsl {
namespace {

// Canonical names (see canonical_attribute) of the attributes a Subjob holds.
const char* const kContact = "resourcemanagercontact";
const char* const kCount = "count";
const char* const kExecutable = "executable";
const char* const kArguments = "arguments";
const char* const kDirectory = "directory";
const char* const kLabel = "label";
const char* const kEnvironment = "environment";
const char* const kHosts = "hosts";

// A positive decimal integer that fits an int, or -1.
int parse_positive(const std::string& text) {
  if (text.empty() || text.size() > 10) return -1;
  long long number = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return -1;
    number = number * 10 + (c - '0');
  }
  return (number >= 1 && number <= INT_MAX) ? static_cast<int>(number) : -1;
}

// Turns the relations of one '&' clause into a Subjob, checking the known attributes.
class ClauseReader {
 public:
  ClauseReader(const std::string& origin, const Spec& clause, std::size_t index)
      : origin_(origin), clause_(clause), index_(index) {}

  Subjob read() {
    if (!clause_.children.empty()) {
      const Spec& nested = clause_.children.front();
      fail(nested.line, nested.column, "a sub-request holds relations only, not a nested request");
    }
    std::map<std::string, const Relation*> known;
    for (const Relation& relation : clause_.relations) {
      const std::string name = canonical_attribute(relation.attribute);
      if (name != kContact && name != kCount && name != kExecutable && name != kArguments &&
          name != kDirectory && name != kLabel && name != kEnvironment && name != kHosts) {
        continue;  // other attributes are allowed and ignored
      }
      auto [previous, inserted] = known.emplace(name, &relation);
      if (!inserted) {
        fail(relation, "attribute '" + relation.attribute + "' given twice (first at " +
                           std::to_string(previous->second->line) + ":" +
                           std::to_string(previous->second->column) + ")");
      }
      if (relation.op != "=") {
        fail(relation,
             "expected '=' after '" + relation.attribute + "' but found '" + relation.op + "'");
      }
    }

    Subjob subjob;
    auto& at = subjob.positions;
    at.clause = {clause_.line, clause_.column};
    subjob.contact = single_string(required(known, kContact, "resourceManagerContact"), at.contact);
    if (subjob.contact.empty()) {
      fail(*known[kContact], "resourceManagerContact must not be empty");
    }
    const Relation& count = required(known, kCount, "count");
    const std::string count_text = single_string(count, at.count);
    subjob.count = parse_positive(count_text);
    if (subjob.count < 0) {
      fail(count, "count must be a positive integer but found '" +
                      untrusted::excerpt(count_text, 24) + "'");
    }
    subjob.executable = single_string(required(known, kExecutable, "executable"), at.executable);
    if (subjob.executable.empty()) fail(*known[kExecutable], "executable must not be empty");

    if (auto it = known.find(kArguments); it != known.end()) {
      subjob.arguments = string_list(*it->second, at.arguments);
    }
    if (auto it = known.find(kDirectory); it != known.end()) {
      subjob.directory = single_string(*it->second, at.directory);
    }
    if (auto it = known.find(kLabel); it != known.end()) {
      subjob.label = single_string(*it->second, at.label);
    }
    if (auto it = known.find(kEnvironment); it != known.end()) {
      subjob.environment = environment(*it->second, at.environment);
    }
    if (auto it = known.find(kHosts); it != known.end()) {
      subjob.hosts = string_list(*it->second, at.hosts);
      check_hosts(*it->second, subjob);
    }
    return subjob;
  }

 private:
  [[noreturn]] void fail(int line, int column, const std::string& message) const {
    throw ParseError(origin_, line, column, message);
  }
  [[noreturn]] void fail(const Relation& relation, const std::string& message) const {
    fail(relation.line, relation.column, message);
  }

  const Relation& required(const std::map<std::string, const Relation*>& known,
                           const std::string& name, const std::string& spelled) const {
    auto it = known.find(name);
    if (it == known.end()) {
      fail(clause_.line, clause_.column,
           "missing required attribute '" + spelled + "' in sub-request " + std::to_string(index_));
    }
    return *it->second;
  }

  // The one string value of `relation`; `where` is set to its position.
  std::string single_string(const Relation& relation, Position& where) const {
    if (relation.values.size() != 1) {
      fail(relation, "attribute '" + relation.attribute + "' takes one value but has " +
                         std::to_string(relation.values.size()));
    }
    const Value& value = relation.values.front();
    if (value.kind != Value::Kind::Literal) {
      fail(relation, "attribute '" + relation.attribute + "' takes a string, not a sequence");
    }
    where = {value.line, value.column};
    return value.text;
  }

  // Strings given flat, (arguments=a b c), or as one sequence, (arguments=(a b c)); `where`
  // gets the position of each.
  std::vector<std::string> string_list(const Relation& relation,
                                       std::vector<Position>& where) const {
    const std::vector<Value>* items = &relation.values;
    if (items->size() == 1 && items->front().kind == Value::Kind::Sequence) {
      items = &items->front().items;
    }
    std::vector<std::string> strings;
    for (const Value& item : *items) {
      if (item.kind != Value::Kind::Literal) {
        fail(item.line, item.column,
             "attribute '" + relation.attribute + "' takes strings, not nested sequences");
      }
      strings.push_back(item.text);
      where.push_back({item.line, item.column});
    }
    return strings;
  }

  std::vector<std::pair<std::string, std::string>> environment(const Relation& relation,
                                                               std::vector<Position>& where) const {
    std::vector<std::pair<std::string, std::string>> pairs;
    for (const Value& pair : relation.values) {
      if (pair.kind != Value::Kind::Sequence || pair.items.size() != 2 ||
          pair.items[0].kind != Value::Kind::Literal ||
          pair.items[1].kind != Value::Kind::Literal) {
        fail(pair.line, pair.column,
             "environment takes (NAME value) pairs, e.g. (environment=(BSPG_SUBJOB 0))");
      }
      if (pair.items[0].text.empty()) {
        fail(pair.line, pair.column, "environment variable name must not be empty");
      }
      pairs.emplace_back(pair.items[0].text, pair.items[1].text);
      where.push_back({pair.line, pair.column});
    }
    return pairs;
  }

  void check_hosts(const Relation& relation, const Subjob& subjob) const {
    std::vector<HostSlots> slots;
    try {
      slots = host_slots(subjob);
    } catch (const std::invalid_argument& error) {
      fail(relation, error.what());
    }
    long long total = 0;
    for (const HostSlots& entry : slots) total += entry.count;
    if (total != subjob.count) {
      fail(relation, "hosts place " + std::to_string(total) + " processes but count is " +
                         std::to_string(subjob.count));
    }
  }

  const std::string& origin_;
  const Spec& clause_;
  std::size_t index_;
};

const char* kind_name(Spec::Kind kind) {
  switch (kind) {
    case Spec::Kind::Conjunction:
      return "an '&' request";
    case Spec::Kind::Disjunction:
      return "an '|' disjunction";
    case Spec::Kind::MultiRequest:
    default:
      return "a '+' multi-request";
  }
}

Value literal(const std::string& text) { return Value::literal(text); }

Relation relation(const std::string& attribute, std::vector<Value> values) {
  Relation out;
  out.attribute = attribute;
  out.op = "=";
  out.values = std::move(values);
  return out;
}

void check_for_writing(const Subjob& subjob, std::size_t index) {
  const std::string where = "write_allocation: subjob " + std::to_string(index) + ": ";
  if (subjob.contact.empty()) throw std::invalid_argument(where + "empty contact");
  if (subjob.count < 1) {
    throw std::invalid_argument(where + "count must be positive, not " +
                                std::to_string(subjob.count));
  }
  if (subjob.executable.empty()) throw std::invalid_argument(where + "empty executable");
  for (const auto& [name, value] : subjob.environment) {
    if (name.empty()) throw std::invalid_argument(where + "empty environment variable name");
  }
  if (!subjob.hosts.empty()) {
    long long total = 0;
    try {
      for (const HostSlots& entry : host_slots(subjob)) total += entry.count;
    } catch (const std::invalid_argument& error) {
      throw std::invalid_argument(where + error.what());
    }
    if (total != subjob.count) {
      throw std::invalid_argument(where + "hosts place " + std::to_string(total) +
                                  " processes but count is " + std::to_string(subjob.count));
    }
  }
}

}  // namespace

bool operator==(const Subjob& a, const Subjob& b) {
  return a.contact == b.contact && a.count == b.count && a.executable == b.executable &&
         a.arguments == b.arguments && a.directory == b.directory && a.label == b.label &&
         a.environment == b.environment && a.hosts == b.hosts;
}
bool operator!=(const Subjob& a, const Subjob& b) { return !(a == b); }

std::string hosts_entry(const std::string& host, int count) {
  return host + ":" + std::to_string(count);
}

std::vector<HostSlots> host_slots(const Subjob& subjob) {
  std::vector<HostSlots> slots;
  for (const std::string& entry : subjob.hosts) {
    const std::size_t colon = entry.rfind(':');
    HostSlots slot;
    if (colon != std::string::npos) {
      slot.host = entry.substr(0, colon);
      slot.count = parse_positive(entry.substr(colon + 1));
    }
    if (colon == std::string::npos || slot.host.empty() || slot.count < 0) {
      throw std::invalid_argument("hosts entry '" + entry +
                                  "' is not HOST:N with a positive process count N");
    }
    slots.push_back(std::move(slot));
  }
  return slots;
}

std::vector<HostSlots> placement(const Subjob& subjob) {
  if (subjob.hosts.empty()) return {HostSlots{subjob.contact, subjob.count}};
  return host_slots(subjob);
}

std::string write_allocation(const std::vector<Subjob>& subjobs) {
  if (subjobs.empty()) throw std::invalid_argument("write_allocation: no subjobs");
  Spec multi;
  multi.kind = Spec::Kind::MultiRequest;
  for (std::size_t i = 0; i < subjobs.size(); ++i) {
    const Subjob& subjob = subjobs[i];
    check_for_writing(subjob, i);
    Spec clause;
    clause.kind = Spec::Kind::Conjunction;
    clause.relations.push_back(relation("resourceManagerContact", {literal(subjob.contact)}));
    clause.relations.push_back(relation("count", {literal(std::to_string(subjob.count))}));
    clause.relations.push_back(relation("executable", {literal(subjob.executable)}));
    if (!subjob.arguments.empty()) {
      std::vector<Value> arguments;
      for (const std::string& argument : subjob.arguments) arguments.push_back(literal(argument));
      clause.relations.push_back(relation("arguments", std::move(arguments)));
    }
    if (!subjob.directory.empty()) {
      clause.relations.push_back(relation("directory", {literal(subjob.directory)}));
    }
    if (!subjob.label.empty()) {
      clause.relations.push_back(relation("label", {literal(subjob.label)}));
    }
    if (!subjob.environment.empty()) {
      std::vector<Value> pairs;
      for (const auto& [name, value] : subjob.environment) {
        pairs.push_back(Value::sequence({literal(name), literal(value)}));
      }
      clause.relations.push_back(relation("environment", std::move(pairs)));
    }
    if (!subjob.hosts.empty()) {
      std::vector<Value> hosts;
      for (const std::string& entry : subjob.hosts) hosts.push_back(literal(entry));
      clause.relations.push_back(relation("hosts", {Value::sequence(std::move(hosts))}));
    }
    multi.children.push_back(std::move(clause));
  }
  return detail::write_spec(multi, true);
}

std::vector<Subjob> read_allocation(const std::string& text, const std::string& origin,
                                    const std::map<std::string, std::string>& variables) {
  const Spec spec = substitute(parse(text, origin), variables, origin);
  std::vector<const Spec*> clauses;
  if (spec.kind == Spec::Kind::MultiRequest) {
    if (!spec.relations.empty()) {
      const Relation& bare = spec.relations.front();
      throw ParseError(origin, bare.line, bare.column,
                       "expected an '&' request inside the '+' multi-request but found the "
                       "bare relation '" +
                           bare.attribute + bare.op + "...'");
    }
    for (const Spec& child : spec.children) {
      if (child.kind != Spec::Kind::Conjunction) {
        throw ParseError(origin, child.line, child.column,
                         std::string("expected an '&' request inside the '+' multi-request "
                                     "but found ") +
                             kind_name(child.kind));
      }
      clauses.push_back(&child);
    }
  } else if (spec.kind == Spec::Kind::Conjunction) {
    clauses.push_back(&spec);
  } else {
    throw ParseError(origin, spec.line, spec.column,
                     std::string("expected a '+' multi-request or an '&' request but found ") +
                         kind_name(spec.kind));
  }
  std::vector<Subjob> subjobs;
  for (std::size_t i = 0; i < clauses.size(); ++i) {
    subjobs.push_back(ClauseReader(origin, *clauses[i], i).read());
  }
  return subjobs;
}

std::vector<Subjob> read_allocation_file(const std::string& path,
                                         const std::map<std::string, std::string>& variables) {
  std::string text, problem;
  if (!untrusted::read_regular_file(path, untrusted::kMaxInputFileBytes, text, problem)) {
    throw std::runtime_error(
        untrusted::printable("cannot read RSL file '" + path + "': " + problem));
  }
  return read_allocation(text, path, variables);
}

}  // namespace bspg::rsl
