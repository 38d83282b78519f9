// part_location.hpp - where an SPMD part is, in terms that hold in every process of one
// executable: process 0 (or a master) names its part so, and the others find it in themselves.
#pragma once

#include <cstdint>

namespace bspg {

// Where an SPMD part is, the same in every process of one executable: the loaded object that
// holds it (its place in the list of loaded objects) and its offset from that object's base.
// The object's build (object_layout, object_build_id) goes with it: another executable's code at
// that offset is not the part.
struct PartLocation {
  int object = -1;
  std::uint64_t offset = 0;
  std::uint64_t layout = 0;
  std::uint32_t build_id_nbytes = 0;
  unsigned char build_id[32] = {};
};

// Where `part` is (object -1 where it is not code of a loaded object).
PartLocation locate(void (*part)(void));

// The SPMD part process 0 named, in this process; fails (as bsp_begin) where it is not code of
// this program. A location without a layout (named in BSPG_SPMD_PART) is not checked for its build.
void (*find_part(const PartLocation& where))(void);

}  // namespace bspg
