// part_location.cpp - finding an SPMD part's loaded object and offset, and the part at a
// location process 0 sent, checked to be code of the same build.
#include "part_location.hpp"

#include <link.h>

#include <algorithm>
#include <cinttypes>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "errors.hpp"
#include "globals.hpp"

namespace bspg {
namespace {

struct ObjectSearch {
  std::uintptr_t address;
  int index = 0;
  int found = -1;
  std::uintptr_t base = 0;
  bool executable = false;
  std::uint64_t layout = 0;  // of the object found
  std::string build_id = {};
};

// dl_iterate_phdr visits the loaded objects in the same order in every process of one executable.
int visit_object(dl_phdr_info* info, std::size_t /*size*/, void* data) {
  auto* search = static_cast<ObjectSearch*>(data);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& segment = info->dlpi_phdr[i];
    if (segment.p_type != PT_LOAD) continue;
    const std::uintptr_t start = info->dlpi_addr + segment.p_vaddr;
    if (search->address >= start && search->address < start + segment.p_memsz) {
      search->found = search->index;
      search->base = info->dlpi_addr;
      search->executable = (segment.p_flags & PF_X) != 0;
      search->layout = object_layout(*info);
      search->build_id = object_build_id(*info);
      return 1;
    }
  }
  ++search->index;
  return 0;
}

}  // namespace

PartLocation locate(void (*part)(void)) {
  ObjectSearch search{reinterpret_cast<std::uintptr_t>(part)};
  dl_iterate_phdr(visit_object, &search);
  if (search.found < 0 || !search.executable) return {};
  PartLocation where{search.found, search.address - search.base, search.layout};
  where.build_id_nbytes =
      static_cast<std::uint32_t>(std::min(search.build_id.size(), sizeof where.build_id));
  std::memcpy(where.build_id, search.build_id.data(), where.build_id_nbytes);
  return where;
}

namespace {

struct ObjectByIndex {
  int wanted;
  int index = 0;
  std::uintptr_t base = 0;
  bool found = false;
  std::uint64_t layout = 0;
  std::string build_id = {};
};

int visit_by_index(dl_phdr_info* info, std::size_t /*size*/, void* data) {
  auto* search = static_cast<ObjectByIndex*>(data);
  if (search->index++ != search->wanted) return 0;
  search->base = info->dlpi_addr;
  search->found = true;
  search->layout = object_layout(*info);
  search->build_id = object_build_id(*info);
  return 1;
}

}  // namespace

void (*find_part(const PartLocation& where))(void) {
  ObjectByIndex object{where.object};
  if (where.object >= 0) dl_iterate_phdr(visit_by_index, &object);
  // (A part named in BSPG_SPMD_PART comes without a layout: the master spawned its own executable.)
  if (object.found && where.layout != 0 && object.layout != where.layout) {
    // Another build (an MPMD start of two programs): the offset is not the part here, and running
    // what lies there would be running anything.
    const std::string ids = builds_named(
        object.build_id,
        std::string(reinterpret_cast<const char*>(where.build_id),
                    std::min<std::size_t>(where.build_id_nbytes, sizeof where.build_id)),
        "its code is laid out differently");
    fail_alone("bsp_begin",
               "this process runs another executable than process 0 (%s), so process 0's SPMD part "
               "is not code here; start the same program on every process",
               ids.c_str());
  }
  if (object.found) {
    const std::uintptr_t address = object.base + where.offset;
    ObjectSearch check{address};
    dl_iterate_phdr(visit_object, &check);
    if (check.found == where.object && check.executable)
      return reinterpret_cast<void (*)(void)>(address);
  }
  fail_alone("bsp_begin",
             "process 0's SPMD part (object %d, offset 0x%" PRIx64
             ") is not code of this program here; every process must run the same executable",
             where.object, where.offset);
}

}  // namespace bspg
