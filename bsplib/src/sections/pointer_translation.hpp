// pointer_translation.hpp - Translator: process 0's pointers in a received page made this one's.
// Only globals.cpp includes it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include "globals_internal.hpp"

namespace bspg::globals_internal {

// What went wrong with one received pointer (the first one found).
struct Problem {
  bool found = false;
  Address address = 0;  // of the word in this process
  Kind kind = Kind::Heap;
  std::string object;  // Kind::Object: the name of process 0's object
  bool object_loaded = false;
  std::string reason;  // argv and the environment: what went wrong ("" otherwise)
};

// Process 0's pointers, made this process's.
class Translator {
 public:
  Translator(const AddressMap& root, const AddressMap& own) : root_(root), own_(own) {
    std::unordered_map<std::uint64_t, std::size_t> own_by_key;
    for (std::size_t k = 0; k < own.objects.size(); ++k) own_by_key.emplace(own.objects[k].key, k);
    own_index_.resize(root.objects.size(), SIZE_MAX);
    for (std::size_t k = 0; k < root.objects.size(); ++k) {
      auto it = own_by_key.find(root.objects[k].key);
      if (it != own_by_key.end()) own_index_[k] = it->second;
    }
  }

  std::uint64_t word(std::uint64_t root_value, std::uint64_t own_value, Address where) {
    const Interval* i = root_.find(root_value);
    if (i == nullptr) return root_value;
    if (i->kind == Kind::Object) {
      const std::size_t own = own_index_[i->object];
      if (own != SIZE_MAX)
        return own_.objects[own].base + (root_value - root_.objects[i->object].base);
      note(where, Kind::Object, root_.objects[i->object].name);
      return own_value;
    }
    if (const Place* place = start_place(root_value))
      return start_word(*place, root_value, own_value, where);
    if (own_.is_private(own_value)) return own_value;  // it made its own allocation
    note(where, i->kind, "");
    return own_value;
  }

  // One piece of a page: process 0's bytes onto this process's.
  void apply(const unsigned char* from, const Segment& page) {
    unsigned char* to = reinterpret_cast<unsigned char*>(page.begin);
    const std::size_t nbytes = page.end - page.begin;
    std::size_t i = 0;
    for (; i < nbytes && (page.begin + i) % sizeof(std::uint64_t) != 0; ++i) to[i] = from[i];
    for (; i + sizeof(std::uint64_t) <= nbytes; i += sizeof(std::uint64_t)) {
      std::uint64_t root_value, own_value;
      std::memcpy(&root_value, from + i, sizeof root_value);
      std::memcpy(&own_value, to + i, sizeof own_value);
      const std::uint64_t value = word(root_value, own_value, page.begin + i);
      if (value != own_value) std::memcpy(to + i, &value, sizeof value);
    }
    for (; i < nbytes; ++i) to[i] = from[i];
  }

  const Problem& problem() const { return problem_; }

 private:
  // The place of process 0's argv or environment that holds `value` (its end included: one past
  // a string or an array), or nullptr.
  const Place* start_place(Address value) const {
    const std::vector<Place>& places = root_.start;
    auto after = std::upper_bound(places.begin(), places.end(), value,
                                  [](Address v, const Place& p) { return v < p.begin; });
    if (after == places.begin()) return nullptr;
    const Place& candidate = *(after - 1);
    return value <= candidate.end ? &candidate : nullptr;
  }

  // This process's string of environment variable `name` (getenv's), or nullptr.
  const char* own_variable(const std::string& name) {
    if (!own_variables_read_) {
      own_variables_read_ = true;
      for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry)
        own_variables_.emplace(std::string(*entry, name_length(*entry)), *entry);
    }
    auto it = own_variables_.find(name);
    return it != own_variables_.end() ? it->second : nullptr;
  }

  // A pointer `at` bytes into process 0's array of n entries (and its null one), into this
  // process's `array` of `count`.
  bool array_word(std::uint64_t at, char** array, std::size_t count, const char* what,
                  std::uint64_t& value, char* text, std::size_t text_size) {
    if (array != nullptr && at <= (count + 1) * sizeof(char*)) {
      value = reinterpret_cast<Address>(array) + at;
      return true;
    }
    std::snprintf(text, text_size,
                  "points at entry %llu of process 0's %s, past the end of this process's (%zu "
                  "entries)",
                  static_cast<unsigned long long>(at / sizeof(char*)), what, count);
    return false;
  }

  // `root_value`, inside process 0's `place`, made the same place of this process's argv or
  // environment; an error where this process has none such.
  std::uint64_t start_word(const Place& place, Address root_value, std::uint64_t own_value,
                           Address where) {
    const std::uint64_t at = root_value - place.begin;
    const StartArguments& own = g_start;
    std::uint64_t value = own_value;
    char text[600];
    bool mapped = false;
    switch (place.kind) {
      case PlaceKind::Argument:
        if (place.index >= own.argc) {
          std::snprintf(text, sizeof text,
                        "points into process 0's argv[%llu], which this process does not have "
                        "(its argc is %zu; start every process with the same arguments)",
                        static_cast<unsigned long long>(place.index), own.argc);
        } else if (at > own.argv_nbytes[place.index] + 1) {
          std::snprintf(text, sizeof text,
                        "points at byte %llu of process 0's argv[%llu], past the end of this "
                        "process's (%zu bytes; start every process with the same arguments)",
                        static_cast<unsigned long long>(at),
                        static_cast<unsigned long long>(place.index), own.argv_nbytes[place.index]);
        } else {
          value = reinterpret_cast<Address>(own.argv_copy[place.index]) + at;
          mapped = true;
        }
        break;
      case PlaceKind::ArgumentArray:
        mapped = array_word(at, own.argv, own.argc, "argv array", value, text, sizeof text);
        break;
      case PlaceKind::EnvironArray:
        mapped = array_word(at, environ, entry_count(environ), "environ array", value, text,
                            sizeof text);
        break;
      case PlaceKind::EnvpArray:
        mapped = array_word(at, own.envp, own.envc, "original environment array", value, text,
                            sizeof text);
        break;
      case PlaceKind::EnvString: {
        const char* own_text = own_variable(place.name);
        const std::size_t nbytes = own_text != nullptr ? std::strlen(own_text) : 0;
        const std::size_t value_at = place.name.size() + 1;  // past "name="
        if (own_text == nullptr) {
          std::snprintf(text, sizeof text,
                        "points into process 0's environment variable %.200s, which this process "
                        "does not have (set it for every process, or copy its value inside the "
                        "SPMD section)",
                        place.name.c_str());
        } else if (at > nbytes + 1) {
          std::snprintf(text, sizeof text,
                        "points at byte %llu of process 0's value of the environment variable "
                        "%.200s, past the end of this process's value (%zu bytes; give every "
                        "process the same value, or copy it inside the SPMD section)",
                        static_cast<unsigned long long>(at - value_at), place.name.c_str(),
                        nbytes >= value_at ? nbytes - value_at : 0);
        } else {
          value = reinterpret_cast<Address>(own_text) + at;
          mapped = true;
        }
        break;
      }
    }
    if (!mapped) note_reason(where, text);
    return value;
  }

  void note_reason(Address where, const char* reason) {
    if (problem_.found) return;
    problem_.found = true;
    problem_.address = where;
    problem_.reason = reason;
  }

  void note(Address where, Kind kind, const std::string& object) {
    if (problem_.found) return;
    problem_.found = true;
    problem_.address = where;
    problem_.kind = kind;
    problem_.object = object;
    if (kind == Kind::Object)
      for (const LoadedObject& o : own_.objects)
        if (o.name == object) problem_.object_loaded = true;
  }

  const AddressMap& root_;
  const AddressMap& own_;
  std::vector<std::size_t> own_index_;
  Problem problem_;
  bool own_variables_read_ = false;
  std::unordered_map<std::string, const char*> own_variables_;
};

}  // namespace bspg::globals_internal
