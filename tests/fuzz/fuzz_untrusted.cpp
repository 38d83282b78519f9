// fuzz_untrusted.cpp - the checks every untrusted value goes through before bsprun uses it
// (untrusted.h): host names, addresses, user names, paths, environment names, and the escaping
// that makes any text one inert terminal line. Each takes any bytes; what they accept must have
// the form they promise, and what printable() gives must hold no control character.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "untrusted.h"

using bspg::fuzz::expect;
namespace untrusted = bspg::untrusted;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = bspg::fuzz::as_text(data, size);
  const bool has_control = !untrusted::control_character_problem(text).empty();

  const std::string shown = untrusted::printable(text);
  expect(untrusted::control_character_problem(shown).empty(), "printable() gives no control");
  expect(!has_control || shown != text, "text with a control character is escaped");
  const std::string cut = untrusted::excerpt(text);
  expect(untrusted::control_character_problem(cut).empty(), "excerpt() gives no control");
  expect(cut.size() <= untrusted::printable(text.substr(0, 80)).size() + 3, "excerpt() is bounded");

  if (untrusted::host_name_problem(text).empty()) {
    expect(!text.empty() && text.size() <= 253 && text[0] != '-' && !has_control,
           "a host name has its form");
    expect(untrusted::address_problem(text).empty(), "a host name is an address");
  }
  if (untrusted::address_problem(text).empty()) {
    expect(!text.empty() && text[0] != '-' && !has_control, "an address has its form");
    const std::string bare = untrusted::address_without_brackets(text);
    expect(!bare.empty() && bare[0] != '-', "an address without brackets still has its form");
  }
  if (untrusted::user_name_problem(text).empty())
    expect(!text.empty() && text.size() <= 64 && text[0] != '-' && !has_control,
           "a user name has its form");
  if (untrusted::absolute_path_problem(text).empty())
    expect(!text.empty() && text[0] == '/' && text.size() <= 4095 && !has_control,
           "a path has its form");
  if (untrusted::is_environment_name(text))
    expect(!text.empty() && !has_control && text.find('=') == std::string::npos,
           "an environment name has its form");
  return 0;
}
