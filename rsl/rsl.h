// rsl.h - Globus RSL 1.0 (Resource Specification Language) reader and writer.
//
// bsprun writes the job allocation it chose as an RSL multi-request, one '&' clause per subjob,
// and reads such a file back with `bsprun --rsl job.rsl`:
//
//   +
//   ( &(resourceManagerContact="node1")
//      (count=4)
//      (executable="/home/alice/prog")
//      (arguments="-n" "1000")
//      (directory="/home/alice")
//      (label="subjob 0")
//      (environment=("BSPG_SUBJOB" "0"))
//   )
//   ( &(resourceManagerContact="lab-b")
//      (count=4)
//      ...
//      (hosts=("b1:2" "b2:2"))
//   )
//
// Grammar (RSL 1.0):
//   specification := request | '+' ('(' specification ')')+
//   request       := ('&' | '|') ('(' (relation | specification) ')')+ | relation
//   relation      := attribute op value+          op: = != < <= > >=
//   value         := '(' value* ')' | simple ('#' simple | <adjacent simple>)*
//   simple        := literal | '$(' literal ')'
//   literal       := unquoted | "..." | '...' | ^X...X    (doubled delimiter = one delimiter)
// Unquoted literals are runs of bytes other than whitespace and + & | ( ) = < > ! " ' ^ # $.
// Comments (* ... *) may appear wherever whitespace may. Two simple values written next to each
// other without whitespace are concatenated, as in $(HOME)/prog. For convenience the whole
// specification may also be wrapped in parentheses, (&(a=b)), and a list of parenthesised
// relations without an operator, (a=b)(c=d), is read as a conjunction.
//
// Attribute names compare case-insensitively with underscores ignored (the Globus rule):
// resourceManagerContact, resource_manager_contact and RESOURCEMANAGERCONTACT are one attribute.
// Variable names are case-sensitive.
//
// Quoted strings are always literal: "$(HOME)" is the seven characters $ ( H O M E ), never a
// variable. The writer quotes every string that contains anything outside the unquoted set
// (including '$', spaces, quotes, bytes >= 0x80 and the empty string), so any byte string
// round-trips unchanged.
//
// Errors: every syntax or content error throws ParseError, whose what() reads
// "<origin>:<line>:<column>: <message>". Lines and columns count from 1; columns count bytes.
// Messages show control characters and bytes that are not UTF-8 escaped (\n, \x1b, ...).
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace bspg::rsl {

struct ParseError : std::runtime_error {
  ParseError(const std::string& origin, int line, int column, const std::string& msg);
  int line;
  int column;
  std::string origin;   // file name or "<rsl>"
  std::string message;  // the part after "<origin>:<line>:<column>: "
};

// ---------------------------------------------------------------------------------------------
// Generic syntax tree. Positions (line/column, 0 when unknown) are not part of equality.

struct Value {
  enum class Kind { Literal, Variable, Sequence, Concatenation } kind = Kind::Literal;
  std::string text;          // Literal: the string; Variable: the variable's name
  std::vector<Value> items;  // Sequence: its values; Concatenation: the simple values joined
  int line = 0, column = 0;

  static Value literal(std::string text);
  static Value variable(std::string name);
  static Value sequence(std::vector<Value> items);
  static Value concatenation(std::vector<Value> items);
};

struct Relation {
  std::string attribute;  // as written; compare with same_attribute()
  std::string op;         // "=", "!=", "<", "<=", ">", ">="
  std::vector<Value> values;
  int line = 0, column = 0;  // where the attribute name starts
};

struct Spec {
  enum class Kind { Conjunction, Disjunction, MultiRequest } kind = Kind::Conjunction;
  std::vector<Relation> relations;  // the relations among the operands, in order
  std::vector<Spec> children;       // the nested specifications among the operands, in order
  int line = 0, column = 0;         // where the operator ('&', '|', '+') stands
};

bool operator==(const Value& a, const Value& b);
bool operator!=(const Value& a, const Value& b);
bool operator==(const Relation& a, const Relation& b);
bool operator!=(const Relation& a, const Relation& b);
bool operator==(const Spec& a, const Spec& b);
bool operator!=(const Spec& a, const Spec& b);

// The attribute name Globus compares: lower case, underscores removed.
std::string canonical_attribute(const std::string& name);
bool same_attribute(const std::string& a, const std::string& b);
// The first relation of `spec` (not of its children) naming `attribute`, or nullptr.
const Relation* find_relation(const Spec& spec, const std::string& attribute);

// Parses RSL text; `origin` names it in error messages. Variables stay in the tree.
Spec parse(const std::string& text, const std::string& origin = "<rsl>");

// Replaces every variable reference and concatenation by the literal it stands for. Variables
// come from `variables` and from (rslSubstitution=(NAME value)...) relations; a definition holds
// in its own request (for every relation, whatever the order) and in the requests nested in it,
// may use the variables defined before it, and shadows an outer definition or the caller's map.
// Throws ParseError at the reference for an undefined variable.
Spec substitute(const Spec& spec, const std::map<std::string, std::string>& variables = {},
                const std::string& origin = "<rsl>");

// Canonical text that parse() reads back as an equal tree (ending in a newline). Literals are
// quoted only where needed. Throws std::invalid_argument for a tree that has no RSL text: a
// request without operands, a relation without values, an attribute name that is not a plain
// unquoted literal, an unknown operator, a concatenation of fewer than two simple values.
std::string write(const Spec& spec);

// ---------------------------------------------------------------------------------------------
// Job allocations: one subjob per '&' clause of a '+' multi-request.

// Where a value stands in the RSL text; 0 when unknown (a subjob that was not read from text).
struct Position {
  int line = 0, column = 0;
};

struct Subjob {
  std::string contact;  // resourceManagerContact (host name from the host file)
  int count = 0;        // processes on that host/site
  std::string executable;
  std::vector<std::string> arguments;
  std::string directory;  // empty: not given
  std::string label;      // e.g. "subjob 0"; empty: not given
  std::vector<std::pair<std::string, std::string>> environment;  // e.g. {"BSPG_SUBJOB","0"}
  // Extension for a site subjob spanning several hosts: (hosts=("h1:2" "h2:2")), each entry
  // "HOST:N" (split at the last ':') placing N of this subjob's processes on HOST; the Ns add
  // up to `count`. Empty: every process runs on `contact`. Use host_slots() to read the entries.
  std::vector<std::string> hosts;

  // Where read_allocation found each value, for messages about it (not part of equality).
  struct Positions {
    Position clause;  // the '&' of the sub-request
    Position contact, count, executable, directory, label;
    std::vector<Position> arguments;    // one per argument
    std::vector<Position> environment;  // one per (NAME value) pair
    std::vector<Position> hosts;        // one per entry
  } positions;
};

bool operator==(const Subjob& a, const Subjob& b);
bool operator!=(const Subjob& a, const Subjob& b);

struct HostSlots {
  std::string host;
  int count = 0;
};
// Splits subjob.hosts into host and process count; throws std::invalid_argument for a malformed
// entry (not "HOST:N" with a non-empty HOST and a positive N).
std::vector<HostSlots> host_slots(const Subjob& subjob);
// Where the subjob's processes go: host_slots(), or all `count` of them on `contact` when the
// subjob names no hosts. Throws as host_slots() does.
std::vector<HostSlots> placement(const Subjob& subjob);
// The entry host_slots() reads back: "HOST:N".
std::string hosts_entry(const std::string& host, int count);

// Writes the allocation as a '+' multi-request (see the top of this file). Optional attributes
// that are empty (arguments, directory, label, environment, hosts) are left out. Throws
// std::invalid_argument for an allocation read_allocation would refuse (no subjobs, an empty
// contact or executable, count < 1, an empty environment name, bad or inconsistent hosts).
std::string write_allocation(const std::vector<Subjob>& subjobs);

// Reads an allocation: a '+' multi-request of '&' requests, or a single '&' request (one
// subjob). Each request needs resourceManagerContact, count (a positive integer) and
// executable; arguments, directory, label, environment and hosts are optional; other attributes
// are allowed and ignored. Variables are substituted first (see substitute()). Known attributes
// must use '=', appear once and have values of the right shape, else ParseError at the relation.
// read_allocation(write_allocation(x)) == x for every x write_allocation accepts.
std::vector<Subjob> read_allocation(const std::string& text, const std::string& origin = "<rsl>",
                                    const std::map<std::string, std::string>& variables = {});
// Reads the file at `path` (the origin in messages); std::runtime_error naming the path if it
// cannot be read, or if it is not a regular file of at most 16 MiB (a FIFO or device is refused
// without waiting for it).
std::vector<Subjob> read_allocation_file(const std::string& path,
                                         const std::map<std::string, std::string>& variables = {});

}  // namespace bspg::rsl
