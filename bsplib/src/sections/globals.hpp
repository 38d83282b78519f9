// globals.hpp - the sequential part's global variables reach the SPMD section: at bsp_begin every
// process but pid 0 takes pid 0's values of the executable's own global variables.
#pragma once

#include <link.h>
#include <mpi.h>

#include <cstdint>
#include <string>

namespace bspg {

// Collective over comm (the section's processes, root = pid 0).
void share_globals(MPI_Comm comm, int root);

// What tells one build of a loaded object from another: its GNU build-id ("" without one), and a
// hash of that and of its segments' layout. Alike in both, two objects are the same build.
std::string object_build_id(const dl_phdr_info& object);
std::uint64_t object_layout(const dl_phdr_info& object);
// How two builds differ, for a message: "build-id OWN here, ROOT on process 0" where both have
// a build-id and they differ, else `otherwise`.
std::string builds_named(const std::string& own_build_id, const std::string& root_build_id,
                         const char* otherwise);

}  // namespace bspg
