// fuzz_rsl.cpp - RSL text (bsprun --rsl FILE, and the allocations bsprun writes and reads back)
// through the RSL reader: parse, substitute, read_allocation. RSL files come from users and other
// tools, so any bytes must give a tree or a located ParseError. What is read must also keep the
// reader's promises: the writer's text of a parsed tree parses back to the same tree, and
// read_allocation(write_allocation(x)) == x for an allocation that was read.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "fuzz_support.h"
#include "rsl.h"

using bspg::fuzz::expect;
namespace rsl = bspg::rsl;

namespace {

void round_trip(const rsl::Spec& spec) {
  std::string text;
  try {
    text = rsl::write(spec);
  } catch (const std::invalid_argument&) {
    expect(false, "the writer has text for every tree the reader gives");
  }
  expect(rsl::parse(text, "<written>") == spec, "a written tree parses back to itself");
}

void read_specification(const std::string& text) {
  rsl::Spec spec;
  try {
    spec = rsl::parse(text, "fuzz.rsl");
  } catch (const rsl::ParseError&) {
    return;
  }
  round_trip(spec);
  try {
    round_trip(rsl::substitute(spec, {{"HOME", "/home/fuzz"}}, "fuzz.rsl"));
  } catch (const rsl::ParseError&) {
    // an undefined variable
  }
}

void read_allocation(const std::string& text) {
  std::vector<rsl::Subjob> subjobs;
  try {
    subjobs = rsl::read_allocation(text, "fuzz.rsl", {{"HOME", "/home/fuzz"}});
  } catch (const rsl::ParseError&) {
    return;
  }
  expect(!subjobs.empty(), "an allocation that was read has a subjob");
  std::string written;
  try {
    written = rsl::write_allocation(subjobs);
    for (const rsl::Subjob& subjob : subjobs) rsl::placement(subjob);
  } catch (const std::invalid_argument&) {
    expect(false, "the writer and placement() take every allocation the reader gives");
  }
  expect(rsl::read_allocation(written, "<written>") == subjobs,
         "a written allocation reads back to itself");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = bspg::fuzz::as_text(data, size);
  read_specification(text);
  read_allocation(text);
  return 0;
}
