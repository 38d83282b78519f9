// start_arguments.cpp - main's arguments and the environment: kept at start-up, listed as places.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "globals_internal.hpp"

namespace bspg::globals_internal {

StartArguments g_start;

namespace {

// glibc calls ELF constructors with (argc, argv, envp), before main and before any setenv.
__attribute__((constructor)) void capture_start(int argc, char** argv, char** envp) {
  if (argc >= 0 && argv != nullptr) {
    const std::size_t n = static_cast<std::size_t>(argc);
    char** copy = static_cast<char**>(std::malloc((n + 1) * sizeof(char*)));
    std::size_t* nbytes = static_cast<std::size_t*>(std::malloc((n + 1) * sizeof(std::size_t)));
    if (copy != nullptr && nbytes != nullptr) {
      std::size_t kept = 0;
      for (; kept < n && argv[kept] != nullptr; ++kept) {
        copy[kept] = argv[kept];
        nbytes[kept] = std::strlen(argv[kept]);
      }
      g_start = StartArguments{argv, kept, copy, nbytes, nullptr, 0, nullptr};
    } else {
      std::free(copy);
      std::free(nbytes);
    }
  }
  if (envp != nullptr) {
    std::size_t n = 0;
    while (envp[n] != nullptr) ++n;
    char** copy = static_cast<char**>(std::malloc((n + 1) * sizeof(char*)));
    if (copy != nullptr) {
      std::memcpy(copy, envp, n * sizeof(char*));
      g_start.envp = envp;
      g_start.envc = n;
      g_start.envp_copy = copy;
    }
  }
}

}  // namespace

// The variable's name in "name=value" (all of it without '=').
std::size_t name_length(const char* text) {
  const char* equals = std::strchr(text, '=');
  return equals != nullptr ? static_cast<std::size_t>(equals - text) : std::strlen(text);
}

std::size_t entry_count(char* const* array) {
  std::size_t n = 0;
  if (array != nullptr)
    while (array[n] != nullptr) ++n;
  return n;
}

// This process's argv and environment, as places (process 0 sends them).
std::vector<Place> start_places() {
  std::vector<Place> places;
  const StartArguments& start = g_start;
  for (std::size_t k = 0; k < start.argc; ++k) {
    const Address begin = reinterpret_cast<Address>(start.argv_copy[k]);
    places.push_back({begin, begin + start.argv_nbytes[k] + 1, PlaceKind::Argument, k, ""});
  }
  if (start.argv != nullptr) {
    const Address begin = reinterpret_cast<Address>(start.argv);
    places.push_back(
        {begin, begin + (start.argc + 1) * sizeof(char*), PlaceKind::ArgumentArray, 0, ""});
  }
  char** const current = environ;
  const std::size_t ncurrent = entry_count(current);
  std::vector<Address> seen;
  auto add_string = [&](const char* text) {
    const Address begin = reinterpret_cast<Address>(text);
    if (std::find(seen.begin(), seen.end(), begin) != seen.end()) return;
    seen.push_back(begin);
    places.push_back({begin, begin + std::strlen(text) + 1, PlaceKind::EnvString, 0,
                      std::string(text, name_length(text))});
  };
  for (std::size_t k = 0; k < ncurrent; ++k) add_string(current[k]);
  for (std::size_t k = 0; k < start.envc; ++k) add_string(start.envp_copy[k]);
  if (current != nullptr) {
    const Address begin = reinterpret_cast<Address>(current);
    places.push_back(
        {begin, begin + (ncurrent + 1) * sizeof(char*), PlaceKind::EnvironArray, 0, ""});
  }
  if (start.envp != nullptr && start.envp != current) {
    const Address begin = reinterpret_cast<Address>(start.envp);
    places.push_back(
        {begin, begin + (start.envc + 1) * sizeof(char*), PlaceKind::EnvpArray, 0, ""});
  }
  std::stable_sort(places.begin(), places.end(),
                   [](const Place& a, const Place& b) { return a.begin < b.begin; });
  // A string in two roles (putenv(argv[1])) keeps its first, argv: the places stay apart.
  std::vector<Place> apart;
  for (Place& p : places)
    if (apart.empty() || p.begin >= apart.back().end) apart.push_back(std::move(p));
  return apart;
}

}  // namespace bspg::globals_internal
