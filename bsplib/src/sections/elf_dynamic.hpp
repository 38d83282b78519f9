// elf_dynamic.hpp - reading a loaded object's dynamic section (the executable's imports, its
// relocations), for start-up and for sharing globals.
#pragma once

#include <cstdint>

namespace bspg {

// d_ptr values of the dynamic section: glibc relocates some in place, others stay relative.
inline std::uintptr_t dynamic_address(std::uintptr_t base, std::uintptr_t value) {
  return base != 0 && value < base ? value + base : value;
}

}  // namespace bspg
